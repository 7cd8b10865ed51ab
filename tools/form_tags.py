"""Each vector's form tag (SPEC CL4), computed and written into the vector files.

    python tools/form_tags.py [--vectors DIR] [--write]

A vector carries exactly one of ``form:neutral``, ``form:items`` and ``form:storage``, the form
that ``reasoning_replay.suite.items_form.vector_form`` computes from its operation and input;
``conformance check`` refuses any other. This tool lists the cases whose tags differ from that
(exit status 1 when there are any), and with ``--write`` rewrites their ``tags`` in place: the
form tag last, every other tag kept in its order, the rest of the file byte for byte (a block
sequence of tags becomes a flow sequence on the ``tags:`` line). Exit status 2: a file that is
not a vector file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml
from reasoning_replay.atomic_files import replace_file
from reasoning_replay.suite.forms import form_tags
from reasoning_replay.suite.items_form import vector_form

REPO: Final = Path(__file__).resolve().parents[1]
VECTORS: Final = REPO / "conformance" / "vectors"


class NotAVectorFile(Exception):
    """A file whose YAML is not a mapping with a list of cases."""


@dataclass(frozen=True, slots=True)
class Retag:
    """One case's tags as they are and as they should be, with where they are in the file."""

    case_id: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    start: int  # the character index just after the ``tags`` key
    end: int  # the character index where the tags' value ends


def _scalar(node: yaml.Node) -> object:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def retags(text: str) -> list[Retag]:
    """The cases of one vector file whose tags are not what their form gives."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # pure Python: reads \\udXXX escapes too
    cases_node = None
    if isinstance(root, yaml.MappingNode):
        cases_node = next((v for k, v in root.value if _scalar(k) == "cases"), None)
    if not isinstance(cases_node, yaml.SequenceNode):
        raise NotAVectorFile("no list of cases")
    loaded = yaml.load(text, Loader=yaml.SafeLoader)  # the same loader as the nodes
    found = []
    for node, case in zip(cases_node.value, loaded["cases"], strict=True):
        if not isinstance(node, yaml.MappingNode):
            raise NotAVectorFile("a case is not a mapping")
        tags_pair = next(((k, v) for k, v in node.value if _scalar(k) == "tags"), None)
        if tags_pair is None:
            raise NotAVectorFile(f"case {case.get('id')!r} has no tags")
        key, value = tags_pair
        old = tuple(case["tags"])
        form = vector_form(case["operation"], case["input"])
        new = (*(t for t in old if t not in form_tags(old)), form.tag)
        if new != old:
            found.append(Retag(case["id"], old, new, key.end_mark.index, value.end_mark.index))
    return found


def rewritten(text: str, changes: Sequence[Retag]) -> str:
    """``text`` with each change's tags written as a flow sequence, the rest unchanged."""
    for change in sorted(changes, key=lambda c: c.start, reverse=True):
        span = text[change.start : change.end]
        trailing = span[len(span.rstrip(" \n")) :]  # a block sequence ends at the next key
        tags = ", ".join(_flow_scalar(tag) for tag in change.new)
        text = text[: change.start] + ": [" + tags + "]" + trailing + text[change.end :]
    return text


def _flow_scalar(tag: str) -> str:
    """A tag as a flow scalar that reads back as the same string (``null``, ``true``, ``1``
    and the like are quoted)."""
    return tag if yaml.safe_load(f"[{tag}]") == [tag] else f"'{tag}'"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=Path, default=VECTORS, metavar="DIR")
    parser.add_argument("--write", action="store_true", help="rewrite the tags in place")
    args = parser.parse_args(argv)
    changed = 0
    for path in sorted(args.vectors.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        try:
            changes = retags(text)
        except (yaml.YAMLError, NotAVectorFile, KeyError, TypeError) as exc:
            print(f"{path}: not a vector file: {exc}", file=sys.stderr)
            return 2
        for change in changes:
            print(f"{path.relative_to(args.vectors)} [{change.case_id}]: {list(change.new)}")
        if changes and args.write:
            replace_file(path, rewritten(text, changes).encode("utf-8"))
        changed += len(changes)
    verb = "rewrote" if args.write else "would rewrite"
    print(f"{verb} the tags of {changed} case(s)", file=sys.stderr)
    return 1 if changed and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
