"""Run reports (SPEC §13): JSON (schema'd), JUnit XML, TAP 14, Markdown and the terminal report.

All writers are pure functions from a :class:`RunResult` to text; only :func:`write_report`
touches the file system.
"""

from __future__ import annotations

import re
import shlex
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

import yaml

from reasoning_replay.atomic_files import replace_file

from . import PROTOCOL_VERSION, RUNNER_NAME, jsontext, runner_version
from .applicability import case_form
from .compare import ABSENT
from .expectations import StaleEntry
from .forms import Form, HistoryFormat
from .outcomes import UNEXPECTED, Outcome
from .runner import CaseResult, RunResult, handshake_message
from .vectors import LEVELS

REPORT_FORMAT: Final = 2
STDOUT_PATH: Final = "-"  # a report written to standard output, and nothing else there
FORMATS: Final = ("json", "junit", "tap", "markdown")
_CLIP: Final = 64 * 1024  # request/response/stderr kept per case in reports
_TERMINAL_CLIP: Final = 2000
MISCONFIGURED_SHARE: Final = 0.9
# JUnit has three non-pass states; each outcome maps onto one of them.
_JUNIT_FAILURE: Final = frozenset(
    {
        Outcome.FAIL,
        Outcome.WRONG_CODE,
        Outcome.MISSED_REJECTION,
        Outcome.FALSE_REJECTION,
        Outcome.XPASS,
    }
)
_JUNIT_ERROR: Final = frozenset(
    {Outcome.ADAPTER_ERROR, Outcome.REPLY_TOO_LONG, Outcome.CRASH, Outcome.TIMEOUT}
)


@dataclass(frozen=True, slots=True)
class Repro:
    """How this run was invoked, to print one-line commands that rerun a single case."""

    impl: str | None = None  # the --impl string; None for the in-process reference
    oneshot: bool = False
    vectors: tuple[str, ...] = ()
    timeout: float | None = None
    history_format: str | None = None  # --history-format

    def run_command(self, case_id: str) -> str:
        parts = ["conformance", "run"]
        if self.impl is not None:
            parts += ["--impl", self.impl]
        if self.oneshot:
            parts.append("--oneshot")
        if self.timeout is not None:
            parts += ["--timeout", f"{self.timeout:g}"]
        if self.history_format is not None:
            parts += ["--history-format", self.history_format]
        for v in self.vectors:
            parts += ["--vectors", v]
        parts += ["-k", case_id]
        return shlex.join(parts)

    def request_command(self, case_id: str, history_format: str | None = None) -> str:
        """The command that sends one case by hand; ``history_format`` is the form the run sent
        its history in (an items-form request is converted by ``conformance request`` too)."""
        parts = ["conformance", "request", case_id]
        if history_format == HistoryFormat.ITEMS:
            parts += ["--history-format", HistoryFormat.ITEMS.value]
        for v in self.vectors:
            parts += ["--vectors", v]
        target = self.impl if self.impl is not None else "python -m reasoning_replay.adapter"
        oneshot = "" if self.impl is not None else " --oneshot"
        return f"{shlex.join(parts)} | {target}{oneshot}"


def _clip(text: str, limit: int = _CLIP) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters]"


def case_detail(r: CaseResult, *, clip: int = _CLIP) -> dict[str, Any] | None:
    """The ``detail`` object of a case in the JSON report (also used by TAP and Markdown)."""
    v = r.verdict
    if v.detail is None and v.underlying is None:
        return None
    d = v.detail
    doc: dict[str, Any] = {"message": d.message if d else str(v.outcome)}
    if v.underlying is not None:
        doc["underlying"] = str(v.underlying)
    if d is not None:
        if d.mismatch is not None:
            doc["pointer"] = d.mismatch.pointer
            if d.mismatch.expected is not ABSENT:
                doc["expected"] = d.mismatch.expected
            if d.mismatch.actual is not ABSENT:
                doc["actual"] = d.mismatch.actual
        if d.expected_code is not None:
            doc["expected_code"] = d.expected_code
        if d.actual_code is not None:
            doc["actual_code"] = d.actual_code
        if d.traceback:
            doc["traceback"] = _clip(d.traceback, clip)
    if r.request is not None:
        doc["request"] = r.request.render(clip)
    if r.response is not None:
        doc["response"] = r.response.render(clip)
    if r.stderr:
        doc["stderr"] = _clip(r.stderr, clip)
    return doc


# ---------------------------------------------------------------------------------------------
# JSON


def _counts(results: Iterable[CaseResult]) -> dict[str, int]:
    counts = Counter(r.outcome for r in results)
    return {str(o): counts[o] for o in Outcome}


def by_form(results: Iterable[CaseResult]) -> dict[Form, list[CaseResult]]:
    """The results of each form (SPEC CL4), in the forms' order, forms with no case left out."""
    found: dict[Form, list[CaseResult]] = {}
    for r in results:
        found.setdefault(case_form(r.case), []).append(r)
    return {form: found[form] for form in Form if form in found}


def profile_document(view: RunResult) -> dict[str, Any]:
    """One profile's summary (the report's ``profiles`` member)."""
    levels: dict[str, list[CaseResult]] = {}
    for r in view.results:
        levels.setdefault(r.case.level, []).append(r)
    return {
        "passed": view.passed,
        "totals": _counts(view.results),
        "unexpected": len(view.unexpected),
        "failing": len(view.failing),
        "levels": {level: _counts(levels[level]) for level in LEVELS if level in levels},
        "forms": {str(form): _counts(rs) for form, rs in by_form(view.results).items()},
    }


def provenance_of(run: RunResult) -> str | None:
    """What the implementation announces it records about an item's issuer (SPEC CL4)."""
    return run.info.provenance if run.info is not None else None


def defaults_documents(run: RunResult) -> list[dict[str, Any]]:
    """Every defaults case's reply as probed (SPEC CL4), for the JSON report."""
    return [{"case": case.id, **probe.to_document()} for case, probe in run.probes]


def _case_profiles(run: RunResult, index: int) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for view in run.profiles:
        r = view.results[index]
        doc[str(view.profile)] = {"outcome": str(r.outcome), "unexpected": r.unexpected}
        if r.entry is not None:
            doc[str(view.profile)]["expectation"] = r.entry.id
    return doc


def _stale(run: RunResult) -> list[StaleEntry]:
    """The stale entries of every profile, each once."""
    return list(dict.fromkeys(s for view in run.profiles for s in view.stale))


def json_report(run: RunResult) -> dict[str, Any]:
    cases = []
    for i, r in enumerate(run.results):
        c: dict[str, Any] = {
            "id": r.case.id,
            "operation": r.case.operation,
            "spec": r.case.spec,
            "level": r.case.level,
            "outcome": str(r.outcome),
            "unexpected": r.unexpected,
            "profiles": _case_profiles(run, i),
            "duration_s": round(r.duration_s, 6),
            "form": str(case_form(r.case)),
        }
        if r.history_format is not None:
            c["history_format"] = str(r.history_format)
        detail = case_detail(r)
        if detail is not None:
            c["detail"] = detail
        if r.entry is not None:
            c["expectation"] = r.entry.to_document()
        cases.append(c)
    doc: dict[str, Any] = {
        "report_format": REPORT_FORMAT,
        "runner": {"name": RUNNER_NAME, "version": runner_version()},
        "suite": {
            "version": run.suite.version,
            "sha256": run.suite.sha256,
            "cases": len(run.suite.cases),
        },
        "protocol": None if run.mode == "in-process" else PROTOCOL_VERSION,
        "mode": run.mode,
    }
    if run.command is not None:
        doc["command"] = list(run.command)
    doc["implementation"] = run.info.to_document() if run.info is not None else None
    if run.handshake_failure is not None:
        doc["handshake_error"] = handshake_message(run.handshake_failure)
    doc |= {
        "started": run.started.isoformat().replace("+00:00", "Z"),
        "duration_s": round(run.duration_s, 6),
        "restarts": run.restarts,
    }
    if run.restart_causes:
        doc["restart_causes"] = dict(run.restart_causes)
    doc |= {
        "totals": {str(k): n for k, n in run.totals().items()},
        "unexpected": len(run.failing),
        "profile": str(run.profile),
        "strict_levels": run.strict_levels,
        "history_formats": [str(f) for f in run.history_formats],
        "provenance": provenance_of(run),
        "defaults": defaults_documents(run),
        "profiles": {str(view.profile): profile_document(view) for view in run.profiles},
    }
    exp = run.expectations
    if exp.source is not None or exp.entries:
        record: dict[str, Any] = {} if exp.source is None else {"file": exp.source}
        doc["expectations"] = record | exp.to_document()
    doc |= {
        "cases": cases,
        "stale_expectations": [
            {"id": s.id, "problem": s.problem, **({"cases": list(s.cases)} if s.cases else {})}
            for s in _stale(run)
        ],
    }
    return doc


# ---------------------------------------------------------------------------------------------
# JUnit XML

# XML 1.0 cannot hold most control characters, even escaped; adapters can print anything.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: str) -> str:
    return _XML_BAD.sub("\ufffd", text)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (tracebacks, stderr) as literal blocks, readable in every report."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def _yaml(value: Any) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def _detail_text(r: CaseResult) -> str:
    detail = case_detail(r)
    if detail is None:
        return ""
    return _yaml(detail)


def _not_deciding(r: CaseResult) -> str:
    return f"{r.case.level} case, not deciding conformance (SPEC.md#levels): {r.outcome}: "


def junit_xml(run: RunResult) -> str:
    root = ET.Element("testsuites", name="reasoning-replay conformance")
    totals: Counter[str] = Counter()
    for view in run.profiles:
        _junit_profile(root, view, totals)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    root.set("time", f"{run.duration_s:.6f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_profile(root: ET.Element, run: RunResult, totals: Counter[str]) -> None:
    """One test suite per operation of one profile."""
    by_op: dict[str, list[CaseResult]] = {}
    for r in run.results:
        by_op.setdefault(r.case.operation, []).append(r)
    for op, results in sorted(by_op.items()):
        suite = ET.SubElement(root, "testsuite", name=f"{op} [{run.profile}]")
        props = ET.SubElement(suite, "properties")
        for name, value in _run_properties(run):
            ET.SubElement(props, "property", name=name, value=_x(value))
        counts: Counter[str] = Counter()
        for r in results:
            tc = ET.SubElement(
                suite,
                "testcase",
                classname=f"conformance.{run.profile}.{op}",
                name=r.case.id,
                time=f"{r.duration_s:.6f}",
            )
            message = _x(r.verdict.detail.message if r.verdict.detail else str(r.outcome))
            text = _x(_detail_text(r))
            if r.unexpected and not run.decides(r):
                ET.SubElement(tc, "skipped", message=_not_deciding(r) + message)
                counts["skipped"] += 1
            elif r.outcome in _JUNIT_FAILURE:
                el = ET.SubElement(tc, "failure", type=str(r.outcome), message=message)
                el.text = text
                counts["failures"] += 1
            elif r.outcome in _JUNIT_ERROR:
                el = ET.SubElement(tc, "error", type=str(r.outcome), message=message)
                el.text = text
                counts["errors"] += 1
            elif r.outcome in (Outcome.SKIPPED, Outcome.XFAIL, Outcome.NOT_APPLICABLE):
                label = _SKIP_LABELS.get(r.outcome, "")
                ET.SubElement(tc, "skipped", message=label + message)
                counts["skipped"] += 1
        suite.set("tests", str(len(results)))
        for key in ("failures", "errors", "skipped"):
            suite.set(key, str(counts[key]))
        suite.set("time", f"{sum(r.duration_s for r in results):.6f}")
        totals.update(counts)
        totals["tests"] += len(results)


_SKIP_LABELS: Final = {Outcome.XFAIL: "xfail: ", Outcome.NOT_APPLICABLE: "not_applicable: "}


def _run_properties(run: RunResult) -> list[tuple[str, str]]:
    props = [
        ("suite.version", run.suite.version),
        ("suite.sha256", run.suite.sha256),
        ("mode", run.mode),
        ("profile", str(run.profile)),
        ("history_formats", ", ".join(run.history_formats)),
        ("provenance", provenance_of(run) or "not announced"),
    ]
    props += [(f"defaults.{case.id}", probe.describe()) for case, probe in run.probes]
    if run.info is not None:
        props.append(("implementation", run.info.label()))
    if run.handshake_failure is not None:
        props.append(("handshake_error", handshake_message(run.handshake_failure)))
    return props


# ---------------------------------------------------------------------------------------------
# TAP version 14


def _tap_safe(text: str) -> str:
    return text.replace("\\", "\\\\").replace("#", "\\#").replace("\n", " ")


def tap_text(run: RunResult) -> str:
    """One test point per case and profile, named ``ID [PROFILE]``."""
    views = run.profiles
    lines = ["TAP version 14", f"1..{sum(len(v.results) for v in views)}"]
    notes = [f"# {_tap_safe(line)}" for line in capability_lines(run)]
    if run.info is not None:
        notes.insert(0, f"# implementation: {run.info.label()}")
    lines[1:1] = notes
    points = ((view, r) for view in views for r in view.results)
    for n, (view, r) in enumerate(points, start=1):
        name = f"{n} - {_tap_safe(r.case.id)} [{view.profile}]"
        message = r.verdict.detail.message if r.verdict.detail else ""
        if r.outcome is Outcome.PASS:
            lines.append(f"ok {name}")
            continue
        if r.outcome is Outcome.SKIPPED:
            lines.append(f"ok {name} # SKIP {_tap_safe(message)}")
            continue
        if r.outcome is Outcome.NOT_APPLICABLE:
            lines.append(f"ok {name} # SKIP not_applicable: {_tap_safe(message)}")
            continue
        if r.outcome is Outcome.XFAIL:
            reason = r.entry.reason if r.entry is not None else message
            lines.append(f"not ok {name} # TODO {_tap_safe(reason)}")
        elif r.unexpected and not view.decides(r):
            lines.append(f"not ok {name} # TODO {_tap_safe(_not_deciding(r) + message)}")
        else:
            lines.append(f"not ok {name}")
        diag = {"outcome": str(r.outcome), "spec": r.case.spec, "level": r.case.level}
        diag |= case_detail(r) or {}
        block = _yaml(diag)
        lines.append("  ---")
        lines.extend("  " + ln for ln in block.splitlines())
        lines.append("  ...")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown (for $GITHUB_STEP_SUMMARY)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def summary_rows(run: RunResult) -> tuple[list[Outcome], list[tuple[str, Counter[Outcome]]]]:
    """Outcomes that occur (in canonical order) and per-operation counts."""
    per_op: dict[str, Counter[Outcome]] = {}
    for r in run.results:
        per_op.setdefault(r.case.operation, Counter())[r.outcome] += 1
    seen = {o for c in per_op.values() for o in c}
    columns = [o for o in Outcome if o in seen]
    return columns, sorted(per_op.items())


def capability_lines(run: RunResult) -> list[str]:
    """What the implementation announces about history forms and issuers (SPEC CL3, CL4), and
    each defaults case's reply as probed (SPEC P5): the same lines in every report."""
    judged = ", ".join(run.history_formats) or "none"
    if run.judged_as is not None:
        judged += f" (--history-format {run.judged_as})"
    lines = [
        f"history formats judged in: {judged}",
        f"provenance: {provenance_of(run) or 'not announced'}",
    ]
    lines += [
        f"defaults {case.id} ({probe.model} to {probe.target_provider}): {probe.describe()}"
        for case, probe in run.probes
    ]
    return lines


def form_summary(view: RunResult) -> str:
    """Per form (SPEC CL4): ``neutral 420 passed of 420 applicable; storage ...``."""
    parts = []
    for form, results in by_form(view.results).items():
        applicable = [r for r in results if r.outcome is not Outcome.NOT_APPLICABLE]
        passed = sum(r.outcome is Outcome.PASS for r in applicable)
        text = f"{form} {passed} passed of {len(applicable)} applicable"
        if len(applicable) < len(results):
            text += f" ({len(results) - len(applicable)} not applicable)"
        parts.append(text)
    return "; ".join(parts)


def profile_summary(view: RunResult) -> str:
    """One profile's counts: ``verdict: 5 passed, 1 xfail, 0 unexpected``."""
    totals = view.totals()
    parts = [f"{totals[Outcome.PASS]} passed"]
    for o in (Outcome.SKIPPED, Outcome.NOT_APPLICABLE, Outcome.XFAIL):
        if totals[o]:
            parts.append(f"{totals[o]} {o}")
    parts.append(f"{len(view.failing)} unexpected")
    if view.not_met:
        parts.append(f"{len(view.not_met)} SHOULD/MAY not met")
    if view.stale_fails:
        parts.append(f"{len(view.stale_fails)} stale expectations")
    return f"{view.profile}: " + ", ".join(parts)


def _verdict_line(run: RunResult) -> str:
    status = "PASSED" if run.ok else "FAILED"
    views = "; ".join(profile_summary(v) for v in run.profiles)
    return f"{status}: {views} ({len(run.results)} cases, {run.duration_s:.2f} s)"


def unexpected_cases(run: RunResult) -> list[tuple[CaseResult, tuple[str, ...]]]:
    """Each case unexpected in some profile, once (as the last such profile judged it), with
    the profiles it is unexpected in."""
    found: dict[str, tuple[CaseResult, tuple[str, ...]]] = {}
    for view in run.profiles:
        for r in view.unexpected:
            names = found[r.case.id][1] if r.case.id in found else ()
            found[r.case.id] = (r, (*names, str(view.profile)))
    order = {r.case.id: i for i, r in enumerate(run.results)}
    return sorted(found.values(), key=lambda item: order[item[0].case.id])


def markdown_text(run: RunResult, repro: Repro | None = None) -> str:
    repro = repro or Repro()
    who = run.info.label() if run.info is not None else "unknown implementation"
    out = [
        f"## reasoning-replay conformance: {_md(who)}",
        "",
        f"Suite {run.suite.version} (`{run.suite.sha256[:12]}`), mode {run.mode}. "
        f"**{_verdict_line(run)}**",
        "",
    ]
    if run.handshake_failure is not None:
        out += [f"> Handshake failed: {_md(handshake_message(run.handshake_failure))}", ""]
    out += [f"- {_md(line)}" for line in capability_lines(run)[:2]]
    out.append("")
    for view in run.profiles:
        out += [f"### Profile `{view.profile}`: {_md(profile_summary(view))}", ""]
        columns, rows = summary_rows(view)
        out.append("| operation | " + " | ".join(str(c) for c in columns) + " | total |")
        out.append("| --- |" + " ---: |" * (len(columns) + 1))
        for op, counts in rows:
            cells = " | ".join(str(counts.get(c, 0)) for c in columns)
            out.append(f"| `{op}` | {cells} | {sum(counts.values())} |")
        out += ["", f"By form ([SPEC CL4](SPEC.md#CL4)): {_md(form_summary(view))}", ""]
    if run.probes:
        out += ["### Defaults, as probed ([SPEC P5](SPEC.md#P5))", ""]
        out += ["| case | model | target | store | include | key | reasoning |"]
        out += ["| --- | --- | --- | --- | --- | --- | --- |"]
        for case, probe in run.probes:
            doc = probe.to_document()
            shown = [_md(_shown(doc, name)) for name in ("store", "include")]
            out.append(
                f"| `{case.id}` | {_md(str(probe.model))} | {_md(str(probe.target_provider))} | "
                f"{' | '.join(shown)} | {probe.key_form} | {_md(_shown(doc, 'reasoning'))} |"
            )
        out.append("")
    unexpected = [(r, p) for r, p in unexpected_cases(run) if run.decides(r)]
    not_met = [(r, p) for r, p in unexpected_cases(run) if not run.decides(r)]
    if unexpected:
        out += [f"### Unexpected results ({len(unexpected)})", ""]
        for r, profiles in unexpected[:100]:
            msg = r.verdict.detail.message if r.verdict.detail else ""
            out.append(
                f"<details><summary><code>{_html(r.case.id)}</code>: {r.outcome} "
                f"({r.case.spec}, {r.case.level}; {', '.join(profiles)}): "
                f"{_html(msg[:200])}</summary>"
            )
            out.append("")
            detail = case_detail(r, clip=_TERMINAL_CLIP) or {}
            out.append(
                _fence(
                    _yaml(detail).rstrip(),
                    "yaml",
                )
            )
            out.append("")
            out.append(_fence(repro.run_command(r.case.id), "sh"))
            out += ["", "</details>", ""]
        if len(unexpected) > 100:
            out += [f"... and {len(unexpected) - 100} more (see the JSON report).", ""]
    if not_met:
        out += [f"### SHOULD and MAY cases not met ({len(not_met)}; they decide nothing)", ""]
        out += [f"- `{r.case.id}` ({r.case.spec}, {r.case.level}): {r.outcome}" for r, _ in not_met]
        out.append("")
    stale = _stale(run)
    if stale:
        out += ["### Stale expectations", ""]
        out += [f"- {_md(s.describe())}" for s in stale]
        out.append("")
    return "\n".join(out)


def _shown(doc: dict[str, Any], name: str) -> str:
    return jsontext.dumps_str(doc[name]) if name in doc else "absent"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------------------
# Terminal


def failure_key(r: CaseResult) -> tuple[str, str, str]:
    """(operation, outcome, code signature): failures sharing a key usually share a cause."""
    d = r.verdict.detail
    code = ""
    if d is not None:
        if d.expected_code and d.actual_code:
            code = f"expected {d.expected_code}, got {d.actual_code}"
        elif d.actual_code:
            code = f"got {d.actual_code}"
        elif d.expected_code:
            code = f"expected {d.expected_code}"
    return (r.case.operation, str(r.outcome), code)


def triage(results: Sequence[CaseResult]) -> list[tuple[tuple[str, str, str], list[CaseResult]]]:
    groups: dict[tuple[str, str, str], list[CaseResult]] = {}
    for r in results:
        groups.setdefault(failure_key(r), []).append(r)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def nearly_all_failed(run: RunResult) -> bool:
    ran = [r for r in run.results if r.outcome not in (Outcome.SKIPPED, Outcome.NOT_APPLICABLE)]
    bad = sum(1 for r in ran if r.outcome in UNEXPECTED)
    return len(ran) >= 3 and bad >= MISCONFIGURED_SHARE * len(ran)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    body = [list(header), *(list(r) for r in rows)]
    widths = [max(len(row[i]) for row in body) for i in range(len(header))]
    return [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in body
    ]


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + ln for ln in text.splitlines())


def failure_block(r: CaseResult, repro: Repro, profiles: Sequence[str] = ()) -> list[str]:
    d = r.verdict.detail
    where = f" in {', '.join(profiles)}" if profiles else ""
    out = [f"{str(r.outcome).upper()} {r.case.id}  [{r.case.spec}, {r.case.level}]{where}"]
    if d is not None:
        out.append(f"  {d.message}")
        if d.mismatch is not None:
            m = d.mismatch
            exp = "<absent>" if m.expected is ABSENT else jsontext.dumps_str(m.expected)
            act = "<absent>" if m.actual is ABSENT else jsontext.dumps_str(m.actual)
            out.append(f"  at {m.pointer or '/'}:")
            out.append(f"    expected: {_clip(exp, _TERMINAL_CLIP)}")
            out.append(f"    actual:   {_clip(act, _TERMINAL_CLIP)}")
        if d.traceback:
            out.append("  traceback:")
            out.append(_indent(_clip(d.traceback, _TERMINAL_CLIP)))
    if r.request is not None:
        out.append(f"  request:  {r.request.render(_TERMINAL_CLIP)}")
    if r.response is not None:
        out.append(f"  response: {r.response.render(_TERMINAL_CLIP)}")
    if r.stderr:
        out.append("  stderr (tail):")
        out.append(_indent(r.stderr[-_TERMINAL_CLIP:]))
    out.append(f"  rerun:    {repro.run_command(r.case.id)}")
    out.append(f"  by hand:  {repro.request_command(r.case.id, r.history_format)}")
    return out


def _profile_table(view: RunResult) -> list[str]:
    columns, rows = summary_rows(view)
    table_rows = [
        [op, *(str(c.get(col, 0)) for col in columns), str(sum(c.values()))] for op, c in rows
    ]
    totals = view.totals()
    table_rows.append(["TOTAL", *(str(totals[col]) for col in columns), str(len(view.results))])
    header = ["operation", *(str(c) for c in columns), "total"]
    forms = f"  by form: {form_summary(view)}"
    return [f"profile {view.profile}:", *_table(header, table_rows), forms, ""]


def restarts_line(run: RunResult) -> str:
    """How often the adapter was restarted, and after what (PROTOCOL.md, What the runner
    checks): ``the adapter was restarted 3 time(s): 2 after a crash (...), 1 after ...``."""
    causes = sorted(run.restart_causes.items(), key=lambda kv: (-kv[1], kv[0]))
    after = ", ".join(f"{n} after {cause}" for cause, n in causes)
    return f"the adapter was restarted {run.restarts} time(s)" + (f": {after}" if after else "")


def not_started_line(run: RunResult, repro: Repro) -> str:
    """The one line a run whose handshake failed ends with: the cause and the command."""
    assert run.handshake_failure is not None
    cause = handshake_message(run.handshake_failure)
    if run.command is None:
        return f"the reference implementation did not start: {cause}"
    check = shlex.join(["conformance", "smoke", "--impl", repro.impl or shlex.join(run.command)])
    oneshot = " --oneshot" if run.mode == "oneshot" else ""
    return (
        f"the adapter did not start ({run.mode} mode): {cause}; command: "
        f"{shlex.join(run.command)}; check it with: {check}{oneshot}"
    )


def terminal_text(run: RunResult, repro: Repro, *, verbosity: int = 0, limit: int = 20) -> str:
    out: list[str] = []
    if verbosity >= 0:
        who = run.info.label() if run.info is not None else "(no handshake)"
        cmd = f": {shlex.join(run.command)}" if run.command else ""
        out.append(f"implementation: {who} [{run.mode}{cmd}]")
        out.append(
            f"suite: {run.suite.version} sha256 {run.suite.sha256[:12]}; "
            f"{len(run.results)} of {len(run.suite.cases)} cases selected"
        )
        if run.handshake_failure is not None:
            out.append(f"handshake failed: {handshake_message(run.handshake_failure)}")
        if run.restarts:
            out.append(restarts_line(run))
        out += capability_lines(run)
        out.append("")
        for view in run.profiles:
            out += _profile_table(view)
    listed = unexpected_cases(run)
    unexpected = [r for r, _ in listed if run.decides(r)]
    where = {r.case.id: p for r, p in listed} if len(run.profiles) > 1 else {}
    if unexpected and verbosity >= 0:
        if nearly_all_failed(run):
            first = unexpected[0]
            msg = first.verdict.detail.message if first.verdict.detail else str(first.outcome)
            out.append(
                f"nearly everything failed ({len(unexpected)} of {len(run.results)} cases): "
                "the adapter is likely misconfigured. First error:"
            )
            out.append(f"  {first.case.id}: {first.outcome}: {msg}")
            if first.stderr:
                out.append(_indent(first.stderr[-_TERMINAL_CLIP:], "  | "))
            out.append("")
        out.append(f"unexpected results by cause ({len(unexpected)}):")
        for (op, outcome, code), members in triage(unexpected):
            sig = f" ({code})" if code else ""
            out.append(f"  {len(members):5d} x {op} {outcome}{sig}  e.g. {members[0].case.id}")
        out.append("")
        shown = unexpected if verbosity > 0 else unexpected[:limit]
        for r in shown:
            out += failure_block(r, repro, where.get(r.case.id, ()))
            out.append("")
        if len(shown) < len(unexpected):
            out.append(
                f"... {len(unexpected) - len(shown)} more unexpected results "
                "(use -v, or --report json:FILE)"
            )
            out.append("")
    not_met = [(r, p) for r, p in listed if not run.decides(r)]
    if not_met and verbosity >= 0:
        out.append(f"SHOULD and MAY cases not met ({len(not_met)}; they decide nothing):")
        out += [f"  {r.case.id} [{r.case.spec}, {r.case.level}]: {r.outcome}" for r, _ in not_met]
        out.append("")
    stale = _stale(run)
    if stale and verbosity >= 0:
        out.append("stale expectations:")
        out += [f"  {s.describe()}" for s in stale]
        out.append("")
    out.append(_verdict_line(run))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------


def render(fmt: str, run: RunResult, repro: Repro) -> str:
    if fmt == "json":
        return jsontext.dumps_pretty(json_report(run)) + "\n"
    if fmt == "junit":
        return junit_xml(run)
    if fmt == "tap":
        return tap_text(run)
    if fmt == "markdown":
        return markdown_text(run, repro)
    raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")


def write_report(
    fmt: str, path: Path, run: RunResult, repro: Repro, *, stdout: TextIO | None = None
) -> None:
    """Write the report to ``path``; ``-`` is standard output (``stdout``, else sys.stdout)."""
    text = render(fmt, run, repro)
    if str(path) == STDOUT_PATH:
        (sys.stdout if stdout is None else stdout).write(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text.encode("utf-8"))  # whole or not at all, no temporary file left
