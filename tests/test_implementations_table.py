"""tools/implementations_table.py: the README's "Known implementations" table is rendered from
JSON run reports, deterministically, and ``--check`` catches a README that no longer matches them.

The reports here are small dicts that satisfy conformance/schemas/report.schema.json; the last
tests compare the README on disk with the committed reports in conformance/implementations/."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from reasoning_replay.suite import schemas

REPO = Path(__file__).resolve().parents[1]
TOOLS_DIR = REPO / "tools"
SHA = "ab" * 32
OUTCOMES = (
    "pass",
    "fail",
    "wrong_code",
    "missed_rejection",
    "false_rejection",
    "adapter_error",
    "crash",
    "timeout",
    "skipped",
    "xfail",
    "xpass",
)
UNEXPECTED = {"fail", "wrong_code", "missed_rejection", "false_rejection"}
UNEXPECTED |= {"adapter_error", "crash", "timeout", "xpass"}


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("implementations_table")


@pytest.fixture(scope="module")
def spec(tool: ModuleType) -> Any:
    return tool.spec_index((REPO / "SPEC.md").read_text(encoding="utf-8"))


def case(
    id: str,
    outcome: str = "pass",
    *,
    operation: str = "read",
    spec: str = "E1",
    expectation: dict[str, str] | None = None,
    verdict: str | None = None,
) -> dict[str, Any]:
    """A case of a report; ``verdict`` is its outcome in the verdict profile (default: as in
    the diagnostics profile)."""
    in_verdict = outcome if verdict is None else verdict
    doc: dict[str, Any] = {
        "id": id,
        "operation": operation,
        "spec": spec,
        "level": "MUST",
        "outcome": outcome,
        "unexpected": outcome in UNEXPECTED,
        "profiles": {
            "verdict": {"outcome": in_verdict, "unexpected": in_verdict in UNEXPECTED},
            "diagnostics": {"outcome": outcome, "unexpected": outcome in UNEXPECTED},
        },
        "duration_s": 0.001,
    }
    if expectation is not None:
        doc["expectation"] = expectation
    return doc


def report(
    name: str,
    cases: Sequence[dict[str, Any]],
    *,
    operations: Sequence[str] = ("read",),
    version: str = "1.0.0",
    language: str = "python",
    totals: dict[str, int] | None = None,
    expectations: dict[str, Any] | None = None,
    stale: Sequence[dict[str, Any]] = (),
    started: str = "2026-11-30T01:02:03.456789Z",
) -> dict[str, Any]:
    """A report as ``conformance run --report json:PATH`` writes it; ``totals`` (default: counted
    from the cases) stand for both profiles."""
    profiles = {}
    for profile in ("verdict", "diagnostics"):
        counts = dict.fromkeys(OUTCOMES, 0)
        for c in cases:
            counts[c["profiles"][profile]["outcome"]] += 1
        counts = counts if totals is None else totals
        failing = sum(n for o, n in counts.items() if o in UNEXPECTED)
        profiles[profile] = {
            "passed": failing == 0,
            "totals": counts,
            "unexpected": failing,
            "failing": failing,
            "levels": {"MUST": counts},
        }
    doc: dict[str, Any] = {
        "report_format": 2,
        "runner": {"name": "reasoning-replay-conformance", "version": "0.1.0"},
        "suite": {"version": "0.1.0", "sha256": SHA, "cases": len(cases)},
        "protocol": 1,
        "mode": "persistent",
        "command": ["./adapter"],
        "implementation": {
            "name": name,
            "version": version,
            "language": language,
            "operations": list(operations),
        },
        "started": started,
        "duration_s": 0.5,
        "restarts": 0,
        "totals": profiles["diagnostics"]["totals"],
        "unexpected": profiles["diagnostics"]["failing"],
        "profile": "diagnostics",
        "profiles": profiles,
        "cases": list(cases),
        "stale_expectations": list(stale),
    }
    if expectations is not None:
        doc["expectations"] = expectations
    return doc


XFAIL_ENTRY = {"id": "read/version/*", "state": "xfail", "reason": "accepts true (SPEC E1)"}
SKIP_ENTRY = {"id": "dedupe/hang", "state": "skip", "reason": "hangs: breaks D2 and D3"}


def reference_report() -> dict[str, Any]:
    return report(
        "reasoning-replay-reference",
        [case("read/a"), case("dedupe/b", operation="dedupe", spec="D2")],
        operations=("dedupe", "read"),
        version="0.1.0",
    )


def agent_report() -> dict[str, Any]:
    return report(
        "fast-agent-mcp",
        [
            case("read/a"),
            case("read/version/t", "xfail", expectation=XFAIL_ENTRY),
            case("read/version/s", "xfail", spec="E4", expectation=XFAIL_ENTRY),
            case("dedupe/hang", "skipped", operation="dedupe", spec="D3", expectation=SKIP_ENTRY),
            case("plan/x", "skipped", operation="plan", spec="F1"),
            case("read/c", "fail"),
        ],
        operations=("read", "dedupe"),
        version="0.4.2",
        expectations={
            "file": "conformance/implementations/fast-agent/expectations.yaml",
            "implementation": "fast-agent-mcp",
            "entries": [XFAIL_ENTRY, SKIP_ENTRY, {"id": "gone/*", "state": "xfail", "reason": "x"}],
        },
        stale=[{"id": "gone/*", "problem": "matches_no_case"}],
    )


def write_reports(directory: Path, reports: dict[str, dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for key, doc in reports.items():
        (directory / f"{key}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return directory


README = (
    "# project\n\ntext before\n\n"
    "<!-- implementations:start -->\nold\n<!-- implementations:end -->\n\n## after\n"
)


# ---------------------------------------------------------------------------------------------


def test_fixture_reports_satisfy_the_report_schema() -> None:
    for doc in (reference_report(), agent_report()):
        assert schemas.errors(schemas.REPORT, doc) == ()


def test_table_renders_one_row_per_report_with_handshake_metadata_and_counts(
    tool: ModuleType, spec: Any
) -> None:
    rows = [
        tool.row_from_report("fast-agent", agent_report(), spec),
        tool.row_from_report("reference", reference_report(), spec),
    ]
    assert tool.render_table(rows).splitlines() == [
        "| implementation | language | version | operations"
        " | verdict: passed / xfail / unexpected | diagnostics: passed / xfail / unexpected"
        " | skipped | suite | date |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |",
        "| [reasoning-replay-reference](reference_impl/reasoning_replay/) | python | 0.1.0"
        " | read, dedupe | 2 / 0 / 0 | 2 / 0 / 0 | 0 | 0.1.0 (`abababababab`) | 2026-11-30 |",
        "| [fast-agent-mcp](conformance/implementations/fast-agent/) | python | 0.4.2"
        " | read, dedupe | 1 / 2 / 1 | 1 / 2 / 1 | 2 | 0.1.0 (`abababababab`) | 2026-11-30 |",
    ]


def test_section_is_identical_whatever_order_the_reports_come_in(
    tool: ModuleType, spec: Any
) -> None:
    docs = {"reference": reference_report(), "fast-agent": agent_report()}
    docs["javascript"] = report("reasoning-replay-js", [case("read/a")], language="javascript")
    rows = [tool.row_from_report(k, d, spec) for k, d in docs.items()]
    first = tool.render_section(rows)
    assert tool.render_section(list(reversed(rows))) == first
    assert tool.render_section(rows) == first
    assert first.startswith("## Known implementations\n") and first.endswith("\n")


def test_counts_are_taken_from_the_report_profiles_not_recounted_from_cases(
    tool: ModuleType, spec: Any
) -> None:
    totals = dict.fromkeys(OUTCOMES, 0) | {"pass": 900, "xfail": 7, "skipped": 40}
    totals |= {"fail": 2, "timeout": 1, "xpass": 1, "crash": 1}
    doc = report("x", [case("read/a")], totals=totals)
    doc["profiles"]["verdict"]["totals"] = totals | {"pass": 905, "xfail": 2}
    row = tool.row_from_report("x", doc, spec)
    assert (row.verdict, row.diagnostics) == (tool.Counts(905, 2, 5), tool.Counts(900, 7, 5))
    assert "| 905 / 2 / 5 | 900 / 7 / 5 | 40 |" in tool.render_row(row)


def test_note_says_how_many_cases_reach_the_verdict_without_the_codes(
    tool: ModuleType, spec: Any
) -> None:
    doc = report(
        "agent",
        [
            case("read/a"),
            case("read/b", "xfail", verdict="pass"),
            case("read/c", "xfail"),
            case("plan/x", "skipped", operation="plan"),
        ],
    )
    row = tool.row_from_report("agent", doc, spec)
    assert row.codes_only == 1
    assert (
        "It reaches SPEC's verdict in 2 of the 3 cases it runs; in 1 case of those its "
        "diagnostic codes differ or are missing."
    ) in "\n".join(tool.render_note(row))


def test_large_counts_are_written_with_thousands_separators(tool: ModuleType, spec: Any) -> None:
    totals = dict.fromkeys(OUTCOMES, 0) | {"pass": 1249}
    row = tool.row_from_report("x", report("x", [], totals=totals), spec)
    assert "| 1,249 / 0 / 0 |" in tool.render_row(row)


def test_rows_sort_reference_first_then_by_name_ignoring_case(tool: ModuleType, spec: Any) -> None:
    docs = {
        "b": report("Beta", []),
        "reference": report("zzz-reference", []),
        "a": report("alpha", []),
        "c": report("gamma", []),
    }
    rows = tool.sort_rows(tool.row_from_report(k, d, spec) for k, d in docs.items())
    assert [r.key for r in rows] == ["reference", "a", "b", "c"]


def test_rows_link_each_implementation_to_its_directory(tool: ModuleType, spec: Any) -> None:
    dirs = {
        key: tool.row_from_report(key, report(key, []), spec).directory
        for key in ("reference", "javascript", "fast-agent")
    }
    assert dirs == {
        "reference": "reference_impl/reasoning_replay/",
        "javascript": "conformance/adapters/js/",
        "fast-agent": "conformance/implementations/fast-agent/",
    }


def test_operations_are_listed_in_the_reference_order_whatever_the_handshake_order(
    tool: ModuleType, spec: Any
) -> None:
    doc = report("x", [], operations=("export", "plan", "read", "zzz"))
    assert tool.row_from_report("x", doc, spec).operations == ("read", "plan", "export", "zzz")


def test_note_records_expectations_entries_covered_cases_and_spec_rules(
    tool: ModuleType, spec: Any
) -> None:
    note = tool.row_from_report("fast-agent", agent_report(), spec).expectations
    assert note.file == "conformance/implementations/fast-agent/expectations.yaml"
    assert note.states() == {"xfail": 2, "skip": 1}
    assert note.cases == 3 and note.outcomes == (("skipped", 1), ("xfail", 2))
    assert note.rules == ("E1", "E4", "D3")  # the rules of the cases, in SPEC order
    assert note.cited == ("E1", "D2", "D3")  # the rules the reasons name
    assert note.stale == (("gone/*", "matches_no_case"),)
    assert [(e.id, e.cases, e.rules) for e in note.entries] == [
        ("read/version/*", 2, ("E1", "E4")),
        ("dedupe/hang", 1, ("D3",)),
        ("gone/*", 0, ()),
    ]


def test_note_is_rendered_under_the_table_with_cases_per_cited_rule(
    tool: ModuleType, spec: Any
) -> None:
    rows = [tool.row_from_report("fast-agent", agent_report(), spec)]
    section = tool.render_section(rows)
    table_end = section.index(tool.render_row(rows[0]))
    note = section[table_end:]
    assert "- **fast-agent-mcp**: The expectations file [`conformance/implementations/" in note
    assert "records 3 entries (2 xfail, 1 skip), applied to 3 cases (1 skipped, 2 xfail)" in note
    assert "of SPEC [E1](SPEC.md#E1), [E4](SPEC.md#E4), [D3](SPEC.md#D3)" in note
    assert (
        "cases per rule the reasons cite: [E1](SPEC.md#E1) 2, [D2](SPEC.md#D2) 1, "
        "[D3](SPEC.md#D3) 1"
    ) in note
    assert "stale: `gone/*` (matches no case)" in note
    assert "Skipped: 1 case of operations it does not declare (`plan` 1)." in note
    assert "accepts true" not in note  # reasons stay in the linked expectations file


def test_expectations_are_recovered_from_cases_in_reports_without_the_expectations_member(
    tool: ModuleType, spec: Any
) -> None:
    doc = agent_report()
    del doc["expectations"]
    note = tool.row_from_report("fast-agent", doc, spec).expectations
    assert note.file is None
    assert [e.id for e in note.entries] == ["read/version/*", "dedupe/hang"]
    assert "The expectations file records 2 entries" in tool.expectations_text(note)


def test_implementation_without_expectations_or_skips_gets_no_note(
    tool: ModuleType, spec: Any
) -> None:
    row = tool.row_from_report("reference", reference_report(), spec)
    assert row.expectations is None and tool.render_note(row) == []


def test_failed_handshake_gives_a_row_named_after_the_report_file(
    tool: ModuleType, spec: Any
) -> None:
    doc = report("x", [case("read/a", "adapter_error")]) | {"implementation": None}
    doc["handshake_error"] = "no reply to the start request within 20 s"
    assert schemas.errors(schemas.REPORT, doc) == ()
    row = tool.row_from_report("broken", doc, spec)
    assert (row.name, row.version, row.operations) == ("broken", "—", ())
    assert row.diagnostics is not None and row.diagnostics.unexpected == 1
    assert "The handshake failed: no reply" in "\n".join(tool.render_note(row))


def test_replace_section_keeps_everything_outside_the_markers(tool: ModuleType) -> None:
    out = tool.replace_section(README, "NEW\n")
    assert out == README.replace("old\n", "NEW\n")
    assert tool.replace_section(out, "NEW\n") == out


@pytest.mark.parametrize(
    "readme",
    [
        "no markers\n",
        "<!-- implementations:end -->\n<!-- implementations:start -->\n",
        README + README,
    ],
    ids=["missing", "reversed", "twice"],
)
def test_replace_section_refuses_a_readme_without_one_marker_pair(
    tool: ModuleType, readme: str
) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        tool.replace_section(readme, "x\n")


def test_write_then_check_passes_and_a_changed_report_makes_check_fail(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = write_reports(tmp_path / "reports", {"reference": reference_report()})
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    argv = ["--reports", str(reports), "--readme", str(readme)]
    assert tool.main([*argv, "--check"]) == 1  # the placeholder "old" is stale
    assert tool.main([*argv, "--write"]) == 0
    assert tool.main([*argv, "--check"]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# project\n\ntext before\n\n<!-- implementations:start -->\n")
    assert text.endswith("<!-- implementations:end -->\n\n## after\n")
    write_reports(reports, {"fast-agent": agent_report()})  # a new report: README is stale
    assert tool.main([*argv, "--check"]) == 1
    assert "is stale; run python tools/implementations_table.py --write" in capsys.readouterr().err


def test_report_that_fails_the_schema_is_refused_with_exit_2(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = reference_report() | {"totals": {"passed": 3}}
    reports = write_reports(tmp_path / "reports", {"reference": bad})
    assert tool.main(["--reports", str(reports)]) == 2
    assert "reference.json: not a valid report" in capsys.readouterr().err


def test_empty_reports_directory_is_an_error(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tool.main(["--reports", str(tmp_path)]) == 2
    assert "no reports" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The committed reports and the README on disk

needs_committed_reports = pytest.mark.skipif(
    not (REPO / "conformance" / "implementations" / "reports").is_dir(),
    reason="conformance/implementations/reports/ does not exist yet: no committed reports "
    "to generate the README's Known implementations table from",
)


@needs_committed_reports
def test_readme_known_implementations_is_in_sync_with_the_committed_reports(
    tool: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tool.main(["--check"]) == 0, capsys.readouterr().err


@needs_committed_reports
def test_committed_reports_cover_the_reference_javascript_and_fast_agent(
    tool: ModuleType, spec: Any
) -> None:
    rows = tool.load_rows(tool.DEFAULT_REPORTS, spec)
    assert {"reference", "javascript", "fast-agent"} <= {r.key for r in rows}
    for row in rows:
        assert (REPO / row.directory).is_dir(), f"{row.key}: {row.directory} does not exist"


def test_cases_not_applicable_are_noted_with_the_forms_read(tool: ModuleType, spec: Any) -> None:
    report = reference_report()
    report["totals"] = {**report["totals"], "not_applicable": 2}
    report["history_formats"] = ["channels"]
    note = tool.render_note(tool.row_from_report("fast-agent", report, spec))
    assert "Not applicable: 2 cases of a history form it does not read (it reads: channels;" in (
        " ".join(note)
    )
