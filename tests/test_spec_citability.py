"""SPEC.md can be cited and read part by part: every anchor it ever had resolves, every reference
it cites is defined with a URL, its tables say what the runner and the vectors do, and Part I
needs no other part (issue 19)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from reasoning_replay.resources import data_path
from reasoning_replay.suite.profiles import OUTPUT_MEMBERS
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.suite.traceability import Traceability, load_traceability
from reasoning_replay.suite.vectors import load_suite

REPO: Final = Path(__file__).resolve().parents[1]
SPEC: Final = (REPO / "SPEC.md").read_text(encoding="utf-8")
ANCHORS: Final = frozenset(re.findall(r'<a id="([^"]+)"></a>', SPEC))

# Every anchor SPEC.md had when issue 19 was filed: a `SPEC.md#X` link that resolved then
# resolves for good (SPEC.md#citing). Anchors may be added, never removed or renamed.
ANCHORS_OF_ISSUE_19: Final = (
    "citing", "introduction", "U1", "part-record", "storage", "ST1", "ST2", "ST3", "envelope",
    "E1", "E2", "E3", "E4", "E4-limits", "E4-total", "E5", "E6", "capture", "C1", "C2", "C3",
    "C4", "provider-input", "P1", "P2", "P3", "P4", "P5", "dedupe", "D1", "D2", "D3", "D4", "D5",
    "D6", "D7", "redaction", "R1", "R2", "R3", "telemetry", "T1", "T2", "part-ordering", "effort",
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "K1", "K2", "K3", "K4", "plan",
    "F11", "part-history", "F12", "histories", "H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8",
    "part-common", "schemas", "S1", "S2", "S3", "codes", "conformance", "levels", "profiles",
    "differences", "examples", "security", "privacy", "registry-policy", "versioning",
    "references", "changelog",
)  # fmt: skip


def section(anchor: str, until: str) -> str:
    """SPEC.md from the anchor ``anchor`` to the anchor ``until``."""
    start = SPEC.index(f'<a id="{anchor}"></a>')
    return SPEC[start : SPEC.index(f'<a id="{until}"></a>', start)]


def table_rows(text: str) -> Iterator[list[str]]:
    """The cells of each body row of the Markdown tables in ``text``."""
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            yield [cell.strip() for cell in line.strip().strip("|").split("|")]


def names(cell: str) -> frozenset[str]:
    return frozenset(re.findall(r"`([^`]+)`", cell))


def test_every_anchor_spec_ever_had_still_resolves() -> None:
    assert [anchor for anchor in ANCHORS_OF_ISSUE_19 if anchor not in ANCHORS] == []


def test_how_to_read_names_every_rule_whose_anchor_is_not_its_id() -> None:
    renamed = {label: anchor for label, anchor in rule_ids().items() if label != anchor}
    note = section("reading", "citing")

    assert renamed == {"E4.1": "E4-limits", "E4.2": "E4-total", "CL1": "levels", "CL2": "profiles"}
    assert all(
        f"{label} (`{anchor}`)" in " ".join(note.split()) for label, anchor in renamed.items()
    )
    assert "conformance/traceability.yaml" in note


def test_no_anchor_is_defined_twice() -> None:
    defined = re.findall(r'<a id="([^"]+)"></a>', SPEC)

    assert len(defined) == len(set(defined))


# ---------------------------------------------------------------------------------------------
# §13: the conformance classes and the verdict profile


def test_the_verdict_profile_table_is_the_runners() -> None:
    rows = {}
    for operation, compared, left_out in table_rows(section("profiles", "differences")):
        if operation.startswith("`"):
            coded = "each without its `code`" in compared
            rows[operation.strip("`")] = (
                names(compared) - {"code"},
                names(left_out) - {"code"},
                coded,
            )
    runner = {
        operation: (row.compared, row.left_out, row.coded_findings is not None)
        for operation, row in OUTPUT_MEMBERS.items()
    }

    assert rows == runner


def rule_ids() -> dict[str, str]:
    """Each rule's id as its bold label writes it (``E4.1``, ``CL2``) → its anchor."""
    return {
        label: anchor
        for anchor, label in re.findall(r'<a id="([^"]+)"></a>\*\*([A-Z]+[0-9.]*[0-9])[. ]', SPEC)
    }


def expand(rules: str) -> Iterator[str]:
    """The rule anchors a cell of §13's table names: ``E1–E6`` is every rule from E1 to E6 with
    its sub-rules (E4.1, whose anchor is E4-limits), ``E4.2`` one rule, anchor E4-total."""
    ids = rule_ids()
    for word in re.split(r",\s*", rules):
        first, _, last = word.partition("–")
        if not last:
            yield ids[first]
            continue
        prefix = re.match(r"[A-Z]+", first)
        assert prefix is not None, word
        low, high = int(first[prefix.end() :]), int(last[prefix.end() :])
        for label, anchor in ids.items():
            number = re.fullmatch(rf"{prefix.group()}(\d+)(\.\d+)?", label)
            if number is not None and low <= int(number.group(1)) <= high:
                yield anchor


def class_table() -> dict[str, frozenset[str]]:
    """§13's table: each operation and the rules its vectors test."""
    text = section("conformance", "levels")
    return {
        cells[0].strip("`"): frozenset(expand(cells[1]))
        for cells in table_rows(text)
        if cells[0].startswith("`")
    }


def test_every_rule_a_vector_tests_is_in_its_operations_class() -> None:
    table = class_table()
    suite = load_suite([data_path("conformance", "vectors")])
    missing = sorted(
        {(c.operation, c.spec) for c in suite.cases if c.spec not in table.get(c.operation, ())}
    )

    assert missing == []


def test_every_must_rule_has_a_class_or_is_tested_outside_the_vectors() -> None:
    classed = frozenset().union(*class_table().values())
    traced = load_traceability(REPO / "conformance" / "traceability.yaml")
    assert isinstance(traced, Traceability)
    outside = traced.outside_only

    unplaced = [r for r in parse_spec(SPEC).must_rules if r not in classed | outside]

    assert unplaced == []
    assert {"ST1", "ST2", "U1", "R3", "S2"} <= classed


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("E1–E6, P1", {"E1", "E2", "E3", "E4", "E4-limits", "E4-total", "E5", "E6", "P1"}),
     ("D1–D2, ST1, E4.2", {"D1", "D2", "ST1", "E4-total"}),
     ("CL1–CL2", {"levels", "profiles"})],
)  # fmt: skip
def test_a_class_cell_names_the_rules_of_its_ranges(cell: str, expected: set[str]) -> None:
    assert set(expand(cell)) == expected


# ---------------------------------------------------------------------------------------------
# Part I on its own


_INFORMATIVE: Final = re.compile(r"\*Informative:?\*.*?(?:\n\n|\Z)", re.DOTALL)
_OTHER_PARTS: Final = re.compile(r"\b(?:F\d+|K\d+|H\d+)\b|§(?:9|10)\b|Part I(?:I|II)\b")


def normative(text: str) -> str:
    """``text`` without its informative notes (each to the end of its paragraph)."""
    return _INFORMATIVE.sub("\n\n", text)


def test_part_i_cites_no_other_part_outside_its_informative_notes() -> None:
    part_i = section("part-record", "part-ordering")
    intro, rules = part_i.split('<a id="storage"></a>', 1)

    assert _OTHER_PARTS.findall(normative(rules)) == []
    assert "on no other part" in intro


def test_a_pointer_in_an_informative_note_is_not_normative() -> None:
    text = "A reader MUST read it (E6).\n\n*Informative:* a validator reports it (H3).\n\nMore."

    assert _OTHER_PARTS.findall(normative(text)) == []
    assert _OTHER_PARTS.findall(text) == ["H3"]


# ---------------------------------------------------------------------------------------------
# §20: references


_FENCE: Final = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE_SPAN: Final = re.compile(r"`[^`\n]*`")
_LABEL: Final = re.compile(r"(?<![\[\w])\[([A-Z][A-Z0-9-]*[A-Z0-9])\](?![(\[])")
_LINK_DEFINITION: Final = re.compile(r"^\[[^\]\n]+\]:.*$", re.MULTILINE)
_ENTRY: Final = re.compile(
    r"^- \[([A-Z][A-Z0-9-]*)\] (.*?)(?=^- |^\S|\Z)", re.MULTILINE | re.DOTALL
)


def cited_labels(text: str) -> list[str]:
    """The citation labels ``[RFC8259]`` of ``text``, outside code (``[[], ["high"]]``)."""
    prose = _LINK_DEFINITION.sub("", _CODE_SPAN.sub("", _FENCE.sub("", text)))
    return _LABEL.findall(prose)


def references() -> dict[str, str]:
    """§20's entries: label → the entry's text."""
    text = section("references", "changelog")
    return {label: " ".join(entry.split()) for label, entry in _ENTRY.findall(text)}


def test_every_cited_label_is_defined_and_every_defined_one_cited() -> None:
    text = SPEC[: SPEC.index('<a id="references"></a>')] + SPEC[SPEC.index('<a id="changelog">') :]
    cited = set(cited_labels(text))

    assert sorted(cited - set(references())) == []  # cited, not defined
    assert sorted(set(references()) - cited) == []  # defined, never cited


def test_every_reference_has_one_url() -> None:
    urls = {
        label: re.findall(r"<(https://[^>\s]+)>", entry) for label, entry in references().items()
    }

    assert len(urls) >= 15
    assert {label: len(found) for label, found in urls.items() if len(found) != 1} == {}


def test_rfcs_are_cited_at_the_rfc_editor() -> None:
    for label, entry in references().items():
        number = re.fullmatch(r"RFC(\d+)", label)
        if number is not None:
            assert f"<https://www.rfc-editor.org/rfc/rfc{number.group(1)}>" in entry, label


def test_a_rule_cites_a_reference_by_its_label() -> None:
    # a bare "RFC 8259" where a rule relies on it is no citation: the label links §20
    text = section("introduction", "references")

    assert re.findall(r"(?<!\[)RFC \d{4}", _CODE_SPAN.sub("", text)) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as [RFC8259] says, and [RFC7493] §2.2", ["RFC8259", "RFC7493"]),
        ('code `[["A"]]` and a link [SPEC](#E1) and [[X]]', []),
        ("```\n[RFC8259]\n```\nafter [FIPS180-4].", ["FIPS180-4"]),
        ("[SPEC]: SPEC.md\nmodel of [RFC8126]:", ["RFC8126"]),
    ],
)
def test_citation_labels_are_found_outside_code_and_links(text: str, expected: list[str]) -> None:
    assert cited_labels(text) == expected
