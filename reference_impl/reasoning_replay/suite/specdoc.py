"""What ``conformance check`` (SPEC §13) needs from SPEC.md: its anchors, its MUST rules and the
registry of diagnostic codes. Parsing is lenient: SPEC.md is prose for people first.

Conventions (see SPEC.md itself):
- every ``<a id="X"></a>`` is an anchor, a valid ``spec`` target for vectors;
- an anchor directly followed by a bold label (``<a id="E1"></a>**E1.** ...``) starts a rule,
  which runs to the next anchor; a rule is a MUST rule if that text contains the word ``MUST``;
- which rules are tested outside the vectors, and by which tests, is not SPEC.md's to say but
  ``conformance/traceability.yaml``'s (:mod:`reasoning_replay.suite.traceability`); a
  ``<!-- tested-outside-vectors: ... -->`` marker, the form that named them in SPEC.md before,
  is found (outside code blocks) so that ``conformance check`` can report it;
- the registry is the Markdown table between ``<!-- registry:start -->`` and
  ``<!-- registry:end -->``: code in backticks in column 1, defining anchor in column 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_ANCHOR: Final = re.compile(r"""<a\s+(?:id|name)\s*=\s*["']([^"']+)["']\s*>\s*</a>""")
_RULE_LABEL: Final = re.compile(r"\s*\*\*")
_MUST: Final = re.compile(r"\bMUST\b")
_OUTSIDE_VECTORS_MARKER: Final = re.compile(r"<!--\s*tested-outside-vectors\b")
_FENCE: Final = re.compile(r"^(```|~~~).*?^\1[^\S\n]*$", re.MULTILINE | re.DOTALL)
_REGISTRY: Final = re.compile(
    r"<!--\s*registry:start\s*-->(.*?)<!--\s*registry:end\s*-->", re.DOTALL
)
_CODE_CELL: Final = re.compile(r"`([^`]+)`")


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    code: str
    anchor: str
    meaning: str


@dataclass(frozen=True, slots=True)
class Rule:
    anchor: str
    text: str

    @property
    def is_must(self) -> bool:
        return _MUST.search(self.text) is not None


@dataclass(frozen=True, slots=True)
class SpecDoc:
    anchors: frozenset[str]
    rules: tuple[Rule, ...]
    registry: tuple[RegistryEntry, ...]
    has_registry: bool
    outside_vectors_markers: tuple[int, ...] = ()  # the line of each marker left in the text

    @property
    def must_rules(self) -> tuple[str, ...]:
        """The MUST rules, in document order."""
        return tuple(r.anchor for r in self.rules if r.is_must)

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(e.code for e in self.registry)


def _blank_fences(text: str) -> str:
    """Code blocks hold examples, not rules: blank them but keep offsets stable."""
    return _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def parse_spec(text: str) -> SpecDoc:
    body = _blank_fences(text)
    matches = list(_ANCHOR.finditer(body))
    rules: list[Rule] = []
    for i, m in enumerate(matches):
        if not _RULE_LABEL.match(body, m.end()):
            continue
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        stop = body.find("<!-- registry:start", m.end(), end)
        rules.append(Rule(m.group(1), body[m.end() : stop if stop >= 0 else end]))
    registry: list[RegistryEntry] = []
    block = _REGISTRY.search(body)
    if block is not None:
        for line in block.group(1).splitlines():
            entry = _registry_row(line)
            if entry is not None:
                registry.append(entry)
    return SpecDoc(
        anchors=frozenset(m.group(1) for m in matches),
        rules=tuple(rules),
        registry=tuple(registry),
        has_registry=block is not None,
        outside_vectors_markers=tuple(
            body.count("\n", 0, m.start()) + 1 for m in _OUTSIDE_VECTORS_MARKER.finditer(body)
        ),
    )


def _registry_row(line: str) -> RegistryEntry | None:
    line = line.strip()
    if not line.startswith("|"):
        return None
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) < 2:
        return None
    code = _CODE_CELL.search(cells[0])
    if code is None:  # header and separator rows
        return None
    anchor = _CODE_CELL.sub(r"\1", cells[1]).strip()
    anchor = re.sub(r"^\[([^\]]+)\]\(#[^)]*\)$", r"\1", anchor)  # a linked anchor [E1](#E1)
    meaning = cells[2] if len(cells) > 2 else ""
    return RegistryEntry(code.group(1).strip(), anchor, meaning)
