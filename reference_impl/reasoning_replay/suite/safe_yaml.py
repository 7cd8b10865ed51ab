"""YAML read safely (the suite's vector, expectations, traceability and readings files): safe tags
only, aliases bounded, no key written twice in one mapping."""

from __future__ import annotations

from typing import Any, Final

import yaml

# A YAML alias repeats a subtree without copying it, so a few hundred bytes can stand for 10^9
# nodes ("billion laughs") that every later walk (JSON check, schema, requests) would visit.
# The bundled vectors expand by a few dozen nodes; anything past this bound is refused.
MAX_ALIAS_EXPANSION: Final = 10_000

try:  # libyaml is ~10x faster; fall back to the pure-Python loader where it is missing
    _Loader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class YAMLRefused(yaml.YAMLError):
    """A YAML document that parses but that the suite refuses to read (its data would not be
    what its text says, or would not be bounded)."""


class YAMLAliasError(YAMLRefused):
    """Aliases that expand past :data:`MAX_ALIAS_EXPANSION` nodes, or refer to themselves."""


class YAMLDuplicateKeyError(YAMLRefused):
    """A mapping that names one key twice. YAML forbids it, but its loaders keep one of the two
    values without a word, so a case written twice (an ``expect`` or an ``input`` member) would
    silently test only one of them."""


_MERGE_TAG: Final = "tag:yaml.org,2002:merge"  # ``<<``: a merge key, not a member


def _alias_expansion(root: yaml.Node) -> int:
    """How many more nodes the tree has, aliases expanded, than the graph has distinct nodes;
    computed over the graph (each distinct node once), never by walking the expansion."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if children_done:
            size[key] = 1 + sum(size[id(c)] for c in children)
            continue
        if key in size:
            continue
        size[key] = -1  # on the current path: seeing it again below is a cycle
        stack.append((node, True))
        for child in children:
            if size.get(id(child)) == -1:
                raise YAMLAliasError(f"a YAML alias refers to its own node ({child.start_mark})")
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)] - len(size)


def _duplicate_key(root: yaml.Node) -> str | None:
    """Where a mapping of the document names one key twice (two scalar keys of one tag and one
    value: ``a`` and ``'a'`` are one key, ``1`` and ``'1'`` two), as a message; else ``None``.
    Each distinct node is visited once, so aliases cost nothing."""
    seen: set[int] = set()
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], yaml.Node] = {}
            for key, value in node.value:
                stack.extend((key, value))
                if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                    continue
                earlier = first.setdefault((key.tag, key.value), key)
                if earlier is not key:
                    return (
                        f"the key {key.value!r} is written twice in one mapping (lines "
                        f"{earlier.start_mark.line + 1} and {key.start_mark.line + 1}); a YAML "
                        "loader would keep only one of its values"
                    )
    return None


def load_yaml(data: bytes | str, loader_class: type[Any] | None = None) -> Any:
    """One YAML document as Python data (safe tags only; libyaml's loader unless another safe
    loader class is given), with the alias bound enforced and no key written twice in one
    mapping."""
    loader = (loader_class or _Loader)(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        duplicate = _duplicate_key(node)
        if duplicate is not None:
            raise YAMLDuplicateKeyError(duplicate)
        extra = _alias_expansion(node)
        if extra > MAX_ALIAS_EXPANSION:
            raise YAMLAliasError(
                f"YAML aliases expand the document by {extra} nodes, more than the limit of "
                f"{MAX_ALIAS_EXPANSION} (write the repeated values out, or use fewer aliases)"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_yaml_any_escape(data: bytes) -> Any:
    """libyaml refuses a ``\\udXXX`` escape of a lone surrogate, which vectors use to carry one
    (SPEC U1); the pure-Python loader reads it, so a file libyaml refuses is read again by it."""
    try:
        return load_yaml(data)
    except YAMLRefused:
        raise
    except yaml.YAMLError:
        if _Loader is yaml.SafeLoader:
            raise
        return load_yaml(data, yaml.SafeLoader)
