"""The README's "Known implementations" table, generated from conformance JSON reports.

    python tools/implementations_table.py [--reports DIR] [--readme PATH] [--write | --check]

Reads every ``DIR/*.json`` (default ``conformance/implementations/reports/``), each written by
``conformance run --report json:PATH`` and valid against ``conformance/schemas/report.schema.json``;
the file's name (``reference.json``, ``javascript.json``, ``rust.json``, ``fast-agent.json``) is the
row's key. One row per report: the implementation (linked to its directory), language and version
from the handshake, the operations it declares, the passed / xfail / unexpected counts of each
profile (SPEC.md#profiles) from the report's ``profiles``, the skipped count, the suite version
and the date of the run. Rows sort reference first, then by
name. Under the table, one note per implementation that has something to add: its expectations
file (entries, the cases they cover, the SPEC rules of those cases and the rules their reasons
cite) and why cases were skipped.

Without ``--write`` or ``--check`` the section is printed. ``--write`` replaces the README text
between ``<!-- implementations:start -->`` and ``<!-- implementations:end -->``; ``--check`` exits
1 when that text differs from what the reports give. Exit status: 0 done or in sync, 1 stale,
2 usage or I/O error or an invalid report.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from known_implementations import directory_of
from reasoning_replay.atomic_files import replace_file
from reasoning_replay.operations import OPERATIONS
from reasoning_replay.suite import schemas
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.specdoc import parse_spec

REPO: Final = Path(__file__).resolve().parents[1]
DEFAULT_REPORTS: Final = REPO / "conformance" / "implementations" / "reports"
DEFAULT_README: Final = REPO / "README.md"
SPEC_PATH: Final = REPO / "SPEC.md"
START: Final = "<!-- implementations:start -->"
END: Final = "<!-- implementations:end -->"
REFERENCE: Final = "reference"
SPEC_LINK: Final = "SPEC.md"
_RULE_TOKEN: Final = re.compile(r"\b[A-Z][A-Z0-9]*[0-9](?:\.[0-9]+)*\b")
_ENTRY_STATES: Final = ("xfail", "skip", "flaky")
HEADER: Final = (
    "implementation",
    "language",
    "version",
    "operations",
    "verdict: passed / xfail / unexpected",
    "diagnostics: passed / xfail / unexpected",
    "skipped",
    "suite",
    "date",
)
_NUMERIC: Final = frozenset(HEADER[4:7])
INTRO: Final = "\n".join(
    (
        "Each row is one `conformance run --report json:PATH` over the whole suite, saved in",
        "[`conformance/implementations/reports/`](conformance/implementations/reports/);",
        "`python tools/implementations_table.py --write` regenerates this section from them, and",
        "`--check` (run by the tests) fails when it is stale. Each case is judged in two profiles",
        "([SPEC §13](SPEC.md#profiles)): *verdict* compares the decision and what reaches the",
        "provider (a reject of any code passes a reject case), *diagnostics* the exact codes too.",
        "*xfail* counts the failures that an implementation's expectations file records, each with",
        "a reason; *unexpected* counts every other failure of a MUST case. Rule family by rule",
        "family ([`docs/implementations.md`](docs/implementations.md)), and every case with its",
        "outcome and reason ([`docs/implementations.html`](docs/implementations.html)):",
        "`python tools/run_implementations.py` reruns every implementation and regenerates both,",
        "and this table.",
    )
)


class ReportError(Exception):
    """A report that cannot be read or is not valid against the report schema."""


# ---------------------------------------------------------------------------------------------
# From a report to a row (pure)


@dataclass(frozen=True, slots=True)
class SpecIndex:
    """What the notes need from SPEC.md: its anchors, and the order its rules come in."""

    anchors: frozenset[str]
    rule_order: tuple[str, ...]

    def sorted(self, rules: Iterable[str]) -> tuple[str, ...]:
        position = {a: i for i, a in enumerate(self.rule_order)}
        return tuple(sorted(set(rules), key=lambda a: (position.get(a, len(position)), a)))

    def cited(self, text: str) -> set[str]:
        """The SPEC anchors named in free text (``E1``, ``E4.1``, ``F6``)."""
        return {t for t in _RULE_TOKEN.findall(text) if t in self.anchors}


@dataclass(frozen=True, slots=True)
class EntryNote:
    """One expectations entry and the cases of the run it was applied to."""

    id: str
    state: str
    reason: str
    cases: int
    rules: tuple[str, ...]  # the SPEC anchors of those cases


@dataclass(frozen=True, slots=True)
class ExpectationsNote:
    file: str | None  # as given to --expectations; None when the report does not say
    entries: tuple[EntryNote, ...]
    cases: int  # cases an entry was applied to
    outcomes: tuple[tuple[str, int], ...]  # those cases per outcome, in the outcomes' order
    rules: tuple[str, ...]  # SPEC anchors of those cases
    cited: tuple[str, ...]  # SPEC anchors the reasons name
    cases_by_cited: tuple[tuple[str, int], ...]  # per anchor the reasons name, the cases they cover
    stale: tuple[tuple[str, str], ...]  # (entry id, problem) of the run's stale_expectations
    scoped: tuple[tuple[str, int], ...] = ()  # entries for one profile only, per profile

    def states(self) -> Counter[str]:
        return Counter(e.state for e in self.entries)


@dataclass(frozen=True, slots=True)
class Counts:
    """One profile's passed / xfail / unexpected counts."""

    passed: int
    xfail: int
    unexpected: int

    def render(self) -> str:
        return f"{_count(self.passed)} / {_count(self.xfail)} / {_count(self.unexpected)}"


def counts_of(totals: Mapping[str, int], unexpected: int) -> Counts:
    return Counts(totals.get("pass", 0), totals.get("xfail", 0), unexpected)


@dataclass(frozen=True, slots=True)
class Row:
    key: str  # the report's file name without .json
    name: str
    directory: str
    language: str
    version: str
    operations: tuple[str, ...]
    verdict: Counts | None  # None: the report has no verdict profile
    diagnostics: Counts | None  # None: the report has no diagnostics profile
    skipped: int
    codes_only: int  # cases that pass the verdict profile and fail the diagnostics profile
    suite_version: str
    suite_sha256: str
    date: str
    expectations: ExpectationsNote | None
    not_declared: tuple[tuple[str, int], ...]  # skipped for an undeclared operation, per operation
    skipped_by_adapter: int  # the adapter answered "skipped"
    handshake_error: str | None
    not_applicable: int = 0  # cases of a history form it does not read (SPEC CL4)
    history_formats: tuple[str, ...] = ()  # the forms the run judged it in; () when not said


def operation_order(operations: Iterable[str]) -> tuple[str, ...]:
    """The reference's order of the operations (SPEC §13 classes), others after, by name."""
    position = {op: i for i, op in enumerate(OPERATIONS)}
    return tuple(sorted(set(operations), key=lambda op: (position.get(op, len(position)), op)))


def report_entries(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The expectations entries: the report's ``expectations`` member, or else (reports written
    before it existed) the distinct entries its cases carry, in order of first use."""
    recorded = report.get("expectations")
    if recorded is not None:
        return list(recorded["entries"])
    seen: dict[str, Mapping[str, Any]] = {}
    for case in report["cases"]:
        entry = case.get("expectation")
        if entry is not None:
            seen.setdefault(entry["id"], entry)
    return list(seen.values())


def expectations_note(report: Mapping[str, Any], spec: SpecIndex) -> ExpectationsNote | None:
    entries = report_entries(report)
    if not entries:
        return None
    covered: dict[str, list[str]] = {}
    outcomes: Counter[str] = Counter()
    for case in report["cases"]:
        entry = case.get("expectation")
        if entry is not None:
            covered.setdefault(entry["id"], []).append(case["spec"])
            outcomes[case["outcome"]] += 1
    notes = tuple(
        EntryNote(
            id=e["id"],
            state=e["state"],
            reason=e["reason"],
            cases=len(covered.get(e["id"], ())),
            rules=spec.sorted(covered.get(e["id"], ())),
        )
        for e in entries
    )
    recorded = report.get("expectations") or {}
    by_cited: Counter[str] = Counter()
    for note in notes:
        for anchor in spec.cited(note.reason):
            by_cited[anchor] += note.cases
    return ExpectationsNote(
        file=recorded.get("file"),
        entries=notes,
        cases=sum(len(specs) for specs in covered.values()),
        outcomes=tuple((str(o), outcomes[o]) for o in Outcome if outcomes[o]),
        rules=spec.sorted(r for n in notes for r in n.rules),
        cited=spec.sorted(a for e in entries for a in spec.cited(e["reason"])),
        cases_by_cited=tuple((a, by_cited[a]) for a in spec.sorted(by_cited) if by_cited[a]),
        stale=tuple((s["id"], s["problem"]) for s in report["stale_expectations"]),
        scoped=tuple(sorted(Counter(e["profile"] for e in entries if "profile" in e).items())),
    )


def skipped_causes(
    report: Mapping[str, Any], declared: Sequence[str] | None
) -> tuple[tuple[tuple[str, int], ...], int]:
    """Skipped cases per undeclared operation, and those the adapter itself skipped (cases
    skipped by an expectations entry are the expectations note's)."""
    not_declared: Counter[str] = Counter()
    by_adapter = 0
    for case in report["cases"]:
        if case["outcome"] != "skipped" or case.get("expectation", {}).get("state") == "skip":
            continue
        if declared is not None and case["operation"] not in declared:
            not_declared[case["operation"]] += 1
        else:
            by_adapter += 1
    ops = operation_order(not_declared)
    return tuple((op, not_declared[op]) for op in ops), by_adapter


def _profile_counts(report: Mapping[str, Any], profile: str) -> Counts | None:
    found = report["profiles"].get(profile)
    return None if found is None else counts_of(found["totals"], found["failing"])


def codes_only(report: Mapping[str, Any]) -> int:
    """Cases whose verdict agrees with SPEC and whose codes do not (both profiles run)."""
    return sum(
        1
        for case in report["cases"]
        if case["profiles"].get("verdict", {}).get("outcome") == "pass"
        and case["profiles"].get("diagnostics", {}).get("outcome", "pass") != "pass"
    )


def row_from_report(key: str, report: Mapping[str, Any], spec: SpecIndex) -> Row:
    """A table row; every count is taken from the report's ``profiles``."""
    info = report["implementation"]
    totals: Mapping[str, int] = report["totals"]
    declared = None if info is None else tuple(info["operations"])
    not_declared, by_adapter = skipped_causes(report, declared)
    return Row(
        key=key,
        name=key if info is None else info["name"],
        directory=directory_of(key),
        language="—" if info is None else info["language"],
        version="—" if info is None else info["version"],
        operations=() if declared is None else operation_order(declared),
        verdict=_profile_counts(report, "verdict"),
        diagnostics=_profile_counts(report, "diagnostics"),
        skipped=totals.get("skipped", 0),
        codes_only=codes_only(report),
        suite_version=report["suite"]["version"],
        suite_sha256=report["suite"]["sha256"],
        date=report["started"][:10],
        expectations=expectations_note(report, spec),
        not_declared=not_declared,
        skipped_by_adapter=by_adapter,
        handshake_error=report.get("handshake_error"),
        not_applicable=totals.get("not_applicable", 0),
        history_formats=tuple(report.get("history_formats", ())),
    )


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """The reference first, then by name (case-insensitively), then by key."""
    return sorted(rows, key=lambda r: (r.key != REFERENCE, r.name.casefold(), r.key))


# ---------------------------------------------------------------------------------------------
# Rendering (pure)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _count(n: int) -> str:
    return f"{n:,}"


def _rules(anchors: Iterable[str]) -> str:
    return ", ".join(f"[{a}]({SPEC_LINK}#{a})" for a in anchors)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{_count(n)} {word if n == 1 else plural or word + 's'}"


def _file_link(path: str) -> str:
    """A relative path inside the repository is linked; anything else is only shown."""
    if path.startswith(("/", "..")) or "://" in path:
        return f"`{path}`"
    return f"[`{path}`]({path})"


def render_row(row: Row) -> str:
    ops = ", ".join(row.operations) if row.operations else "—"
    cells = (
        f"[{_cell(row.name)}]({row.directory})",
        _cell(row.language),
        _cell(row.version),
        _cell(ops),
        "—" if row.verdict is None else row.verdict.render(),
        "—" if row.diagnostics is None else row.diagnostics.render(),
        _count(row.skipped),
        f"{_cell(row.suite_version)} (`{row.suite_sha256[:12]}`)",
        row.date,
    )
    return "| " + " | ".join(cells) + " |"


def render_table(rows: Sequence[Row]) -> str:
    rule = "|" + "|".join(" ---: " if h in _NUMERIC else " --- " for h in HEADER) + "|"
    lines = ["| " + " | ".join(HEADER) + " |", rule, *(render_row(r) for r in sort_rows(rows))]
    return "\n".join(lines)


def expectations_text(note: ExpectationsNote) -> str:
    states = note.states()
    by_state = ", ".join(f"{states[s]} {s}" for s in _ENTRY_STATES if states[s])
    if note.scoped:
        by_state += "; " + ", ".join(
            f"{_count(n)} for the {p} profile only" for p, n in note.scoped
        )
    where = "" if note.file is None else " " + _file_link(note.file)
    text = (
        f"The expectations file{where} records {_plural(len(note.entries), 'entry', 'entries')} "
        f"({by_state}), applied to {_plural(note.cases, 'case')}"
    )
    if note.outcomes:
        text += " (" + ", ".join(f"{_count(n)} {o}" for o, n in note.outcomes) + ")"
    if note.rules:
        text += f" of SPEC {_rules(note.rules)}"
    if note.cases_by_cited:
        cited = ", ".join(f"{_rules((a,))} {_count(n)}" for a, n in note.cases_by_cited)
        text += f"; cases per rule the reasons cite: {cited}"
    elif note.cited:
        text += f"; the reasons cite {_rules(note.cited)}"
    if note.stale:
        stale = ", ".join(f"`{i}` ({p.replace('_', ' ')})" for i, p in note.stale)
        text += f"; stale: {stale}"
    return text + "."


def skipped_text(row: Row) -> str | None:
    parts = []
    if row.not_declared:
        ops = ", ".join(f"`{op}` {_count(n)}" for op, n in row.not_declared)
        total = sum(n for _, n in row.not_declared)
        parts.append(f"{_plural(total, 'case')} of operations it does not declare ({ops})")
    if row.skipped_by_adapter:
        parts.append(f"{_plural(row.skipped_by_adapter, 'case')} its adapter answered skipped")
    return None if not parts else "Skipped: " + "; ".join(parts) + "."


def render_note(row: Row) -> list[str]:
    """The note under the table for one implementation; empty when there is nothing to add."""
    sentences = []
    if row.handshake_error is not None:
        sentences.append(f"The handshake failed: {_cell(row.handshake_error)}.")
    if row.codes_only and row.verdict is not None:
        ran = row.verdict.passed + row.verdict.xfail + row.verdict.unexpected
        sentences.append(
            f"It reaches SPEC's verdict in {_count(row.verdict.passed)} of the {_count(ran)} "
            f"cases it runs; in {_plural(row.codes_only, 'case')} of those its diagnostic codes "
            "differ or are missing."
        )
    if row.expectations is not None:
        sentences.append(expectations_text(row.expectations))
    skipped = skipped_text(row)
    if skipped is not None:
        sentences.append(skipped)
    if row.not_applicable:
        reads = ", ".join(row.history_formats) or "no form"
        sentences.append(
            f"Not applicable: {_plural(row.not_applicable, 'case')} of a history form it does "
            f"not read (it reads: {reads}; [SPEC CL4]({SPEC_LINK}#CL4))."
        )
    if not sentences:
        return []
    # Each entry's reason is in the linked file; the README keeps to counts.
    return [f"- **{_cell(row.name)}**: " + " ".join(sentences)]


def render_section(rows: Sequence[Row]) -> str:
    """The README text between the markers (without them), ending with a newline."""
    out = ["## Known implementations", "", INTRO, "", render_table(rows), ""]
    notes = [note for r in sort_rows(rows) if (note := render_note(r))]
    for i, note in enumerate(notes):
        out += note if i == 0 else ["", *note]
    if notes:
        out.append("")
    return "\n".join(out)


def replace_section(readme: str, section: str) -> str:
    """The README with the text between the markers replaced by ``section``."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < 0 or readme.count(START) != 1 or readme.count(END) != 1 or end < start:
        raise ValueError(f"the README needs exactly one {START} followed by one {END}")
    return readme[: start + len(START)] + "\n" + section + readme[end:]


# ---------------------------------------------------------------------------------------------
# I/O


def spec_index(text: str) -> SpecIndex:
    doc = parse_spec(text)
    return SpecIndex(doc.anchors, tuple(r.anchor for r in doc.rules))


def load_report(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: {exc}") from exc
    errs = schemas.errors(schemas.REPORT, report)
    if errs:
        raise ReportError(f"{path}: not a valid report: " + "; ".join(map(str, errs)))
    return dict(report)


def load_rows(reports: Path, spec: SpecIndex) -> list[Row]:
    paths = sorted(reports.glob("*.json"))
    if not paths:
        raise ReportError(f"no reports (*.json) in {reports}")
    return [row_from_report(p.stem, load_report(p), spec) for p in paths]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=Path, default=DEFAULT_REPORTS, metavar="DIR")
    parser.add_argument("--readme", type=Path, default=DEFAULT_README, metavar="PATH")
    parser.add_argument("--spec", type=Path, default=SPEC_PATH, metavar="PATH")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the README section")
    mode.add_argument("--check", action="store_true", help="exit 1 when the README is stale")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = spec_index(args.spec.read_text(encoding="utf-8"))
        section = render_section(load_rows(args.reports, spec))
        if not (args.write or args.check):
            sys.stdout.write(section)
            return 0
        readme = args.readme.read_text(encoding="utf-8")
        updated = replace_section(readme, section)
    except (OSError, ReportError, ValueError) as exc:
        print(f"implementations_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if updated != readme:
            print(
                f"{args.readme}: the Known implementations section is stale; "
                "run python tools/implementations_table.py --write",
                file=sys.stderr,
            )
            return 1
        print(f"ok: {args.readme} is in sync with {args.reports}")
        return 0
    if updated != readme:
        replace_file(args.readme, updated.encode("utf-8"))
    print(f"wrote the Known implementations section of {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
