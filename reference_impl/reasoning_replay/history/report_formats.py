"""The report formats of the stored-history tools: ``validate`` as text, JSON lines or SARIF
2.1.0 (SPEC H3), ``scan`` as text or JSON (SPEC H8).

They sit here, beside the runs they report on (:mod:`reasoning_replay.history.validate_run`,
:mod:`reasoning_replay.history.scan`), rather than in :mod:`reasoning_replay.suite.reports`: those
report a conformance run, these report on files on disk, and a reader looking for what
``validate`` or ``scan`` prints finds it next to what they do. Paths that are not UTF-8 are written
with ``\\xNN`` escapes (text, JSON) or percent-encoded bytes (SARIF URIs).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Final, TextIO
from urllib.parse import quote

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.safe_files import display_path
from reasoning_replay.history.scan import FileScan
from reasoning_replay.history.validate_run import (
    PERMISSION_CODES,
    FileResult,
    Fix,
    Target,
    Totals,
    Writer,
    is_fixed,
    located_findings,
)
from reasoning_replay.history.validation import Finding, Severity, is_session_file
from reasoning_replay.resources import data_path
from reasoning_replay.suite import runner_version
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.versions import versions

VALIDATE_FORMATS: Final = ("text", "json", "sarif")
SCAN_FORMATS: Final = ("text", "json")
_REPLAY_CHANNEL: Final = "openai-reasoning-encrypted"
_CACHE_STATE_CHANNEL: Final = "fast-agent-responses-cache-state"


# --- what findings say -------------------------------------------------------------------------


@cache
def registry() -> dict[str, tuple[str, str]]:
    """code → (SPEC anchor, meaning), from the SPEC.md registry; empty if SPEC.md is missing."""
    try:
        spec = parse_spec(data_path("SPEC.md").read_text(encoding="utf-8"))
    except OSError:
        return {}
    return {e.code: (e.anchor, e.meaning.replace("`", "")) for e in spec.registry}


def _meaning(code: Code) -> str:
    return registry().get(code.value, ("", code.value))[1]


def finding_message(finding: Finding, target: Target, fix: Fix | None) -> str:
    """A sentence for people: the registry's meaning, the detail, and a fix if one was made."""
    parts = [_meaning(finding.code)]
    if finding.code is Code.DIRECTORY_MODE_TOO_OPEN and target.directory_mode is not None:
        directory = display_path(target.directory or "")
        parts.append(f"Directory {directory}, mode {target.directory_mode:04o}.")
    elif finding.detail:
        parts.append(finding.detail[0].upper() + finding.detail[1:] + ".")
    if fix is not None:
        parts.append(
            f"Could not fix: {fix.error}."
            if fix.error is not None
            else f"Fixed: {fix.old:04o} -> {fix.new:04o}."
        )
    return " ".join(parts)


def logical_location(finding: Finding) -> str | None:
    """Where in the history a finding is, as a JSON-path-like name, if it is inside it."""
    if finding.message_index is None:
        return None
    channel = _CACHE_STATE_CHANNEL if finding.code is Code.CACHE_STATE_INVALID else _REPLAY_CHANNEL
    where = f"messages[{finding.message_index}].channels.{channel}"
    return where if finding.block_index is None else f"{where}[{finding.block_index}]"


# --- validate: text, JSON lines, SARIF ---------------------------------------------------------


def _location_text(finding: Finding) -> str:
    if finding.message_index is None:
        return ""
    if finding.code is Code.CACHE_STATE_INVALID:
        return f"message {finding.message_index}, cache-state record"
    return f"message {finding.message_index}, block {finding.block_index}"


_STATUS: Final = {Severity.ERROR: "FAIL", Severity.WARNING: "WARN", Severity.NOTE: "NOTE"}


class TextWriter:
    """Per-file lines as files finish, then a summary table."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        report, path = result.report, result.target.path
        located = located_findings(result)
        counts = report.counts
        replay = "replays as stored" if report.replays_as_stored else "does not replay as stored"
        if report.provider_mismatch:  # SPEC H3, P4: blocks another provider issued
            replay += f"; {report.provider_mismatch} would not replay to {result.provider}"
        if is_session_file(path):
            about = "session metadata: permissions only"
        elif not report.findings:
            about = f"{counts.resumable} resumable; {replay}"
        else:
            about = (
                f"resumable {counts.resumable}, legacy {counts.legacy}, redacted "
                f"{counts.redacted}, malformed {counts.malformed}; {replay}"
            )
        severities = {f.severity for _, f in located}
        status = next((_STATUS[s] for s in Severity if s in severities), "ok")
        self._out.write(f"{status:<5} {display_path(path)}  ({about})\n")
        for _, finding in located:
            fix = fixes.get(finding.code)
            where = _location_text(finding)
            line = f"  {finding.severity.value:<8} {finding.code.value:<30}"
            if where:
                line += f" {where}:"
            line += " " + finding_message(finding, result.target, fix)
            self._out.write(line.rstrip() + "\n")

    def finish(self, totals: Totals) -> None:
        b, f = totals.blocks, totals.findings
        rows = [
            (
                "files",
                totals.files,
                f"with errors {totals.files_with_errors}, with warnings "
                f"{totals.files_with_warnings}, clean {totals.clean_files}, replay as stored "
                f"{totals.replay_as_stored}",
            ),
            (
                "blocks",
                sum(b.values()),
                f"resumable {b['resumable']}, legacy {b['legacy']}, "
                f"redacted {b['redacted']}, malformed {b['malformed']}",
            ),
            (
                "findings",
                sum(f.values()),
                f"error {f[Severity.ERROR]}, warning "
                f"{f[Severity.WARNING]}, note {f[Severity.NOTE]}",
            ),
        ]
        if totals.fixed:
            rows.append(("fixed", totals.fixed, "permissions tightened"))
        width = max(len(str(n)) for _, n, _ in rows)
        self._out.write("\nsummary\n")
        for name, number, detail in rows:
            self._out.write(f"  {name:<9}{number:>{width}}  {detail}\n")
        verdict = "FAILED: error findings" if totals.exit_status else "PASSED: no error findings"
        self._out.write(f"{verdict}\n")


class JsonLinesWriter:
    """One JSON object per line: each finding, then its file's record; a summary line last.
    Every line is valid against conformance/schemas/validate-finding.schema.json."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def _line(self, value: dict[str, Any]) -> None:
        self._out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        path = display_path(result.target.path)
        for about, finding in located_findings(result):
            fix = fixes.get(finding.code)
            line: dict[str, Any] = {"type": "finding", "path": display_path(about)}
            line.update(finding.to_json())
            line["message"] = finding_message(finding, result.target, fix)
            if finding.code in PERMISSION_CODES:
                line["fixed"] = is_fixed(finding, fixes)
            self._line(line)
        report = result.report
        self._line(
            {
                "type": "file",
                "path": path,
                "counts": report.counts.to_json(),
                "replays_as_stored": report.replays_as_stored,
                "provider_mismatch": report.provider_mismatch,
                "findings": len(located_findings(result)),
            }
            | ({} if result.provider is None else {"provider": result.provider})
        )

    def finish(self, totals: Totals) -> None:
        self._line(totals.to_json())


SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL: Final = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def _uri_path(path: str) -> str:
    """A path's raw bytes, percent-encoded as RFC 3986 asks: file names are bytes on POSIX and
    need not be UTF-8, and a SARIF URI carries them faithfully that way (SARIF 2.1.0 §3.10)."""
    return quote(os.fsencode(path))


def artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifactLocation: relative paths against ``%SRCROOT%`` (the working directory)."""
    if Path(path).is_absolute():
        return {"uri": "file://" + _uri_path(Path(path).as_posix())}
    posix = Path(path).as_posix()
    relative = posix[2:] if posix.startswith("./") else posix
    return {"uri": _uri_path(relative), "uriBaseId": "SRCROOT"}


class SarifWriter:
    """A SARIF 2.1.0 log: rules are the registry codes used, results in file order. Results are
    small (no file contents), so they are kept until the end, when the log is written."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._results: list[dict[str, Any]] = []
        self._codes: list[Code] = []
        self._artifacts: list[dict[str, Any]] = []

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        if result.report.provider_mismatch:  # SPEC H3, P4: a count per file, not a finding
            self._artifacts.append(
                {
                    "location": artifact_location(result.target.path),
                    "properties": {
                        "provider": result.provider,
                        "provider_mismatch": result.report.provider_mismatch,
                    },
                }
            )
        for about, finding in located_findings(result):
            if finding.code not in self._codes:
                self._codes.append(finding.code)
            location: dict[str, Any] = {
                "physicalLocation": {"artifactLocation": artifact_location(about)}
            }
            logical = logical_location(finding)
            if logical is not None:
                location["logicalLocations"] = [{"fullyQualifiedName": logical, "kind": "element"}]
            properties: dict[str, Any] = {}
            if finding.message_index is not None:
                properties["message_index"] = finding.message_index
            if finding.block_index is not None:
                properties["block_index"] = finding.block_index
            if finding.code in PERMISSION_CODES:
                properties["fixed"] = is_fixed(finding, fixes)
            sarif_result: dict[str, Any] = {
                "ruleId": finding.code.value,
                "level": _SARIF_LEVEL[finding.severity],
                "message": {
                    "text": finding_message(finding, result.target, fixes.get(finding.code))
                },
                "locations": [location],
            }
            if properties:
                sarif_result["properties"] = properties
            self._results.append(sarif_result)

    def finish(self, totals: Totals) -> None:
        codes = sorted(self._codes, key=list(Code).index)
        index = {code.value: i for i, code in enumerate(codes)}
        for sarif_result in self._results:
            sarif_result["ruleIndex"] = index[sarif_result["ruleId"]]
        rules = []
        for code in codes:
            anchor, meaning = registry().get(code.value, ("", code.value))
            rule: dict[str, Any] = {
                "id": code.value,
                "name": _camel(code.value),
                "shortDescription": {"text": meaning},
                "defaultConfiguration": {"level": _SARIF_LEVEL[Finding(code).severity]},
            }
            if anchor:
                rule["properties"] = {"spec_rule": anchor}
            rules.append(rule)
        log = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": "reasoning-replay validate",
                            "version": runner_version(),
                            "informationUri": versions().public_url,
                            "rules": rules,
                        }
                    },
                    "originalUriBaseIds": {
                        "SRCROOT": {"uri": "file://" + _uri_path(Path.cwd().as_posix()) + "/"}
                    },
                    "invocations": [{"executionSuccessful": True, "exitCode": totals.exit_status}],
                    "results": self._results,
                }
                | ({"artifacts": self._artifacts} if self._artifacts else {})
            ],
        }
        self._out.write(json.dumps(log, ensure_ascii=False, indent=2) + "\n")


def make_writer(fmt: str, out: TextIO) -> Writer:
    if fmt == "json":
        return JsonLinesWriter(out)
    if fmt == "sarif":
        return SarifWriter(out)
    return TextWriter(out)


# --- scan: text, JSON ---------------------------------------------------------------------------


def write_scan_text(results: Iterable[FileScan], out: TextIO, err: TextIO) -> tuple[bool, bool]:
    """Write findings as ``file:line: code sha256:prefix`` as each file is done (streamed);
    whether anything was found, and whether a path could not be scanned."""
    count = files = scanned = failed = 0
    for result in results:
        name = display_path(result.path)
        for finding in result.findings:
            out.write(f"{name}:{finding.line}: {finding.code} sha256:{finding.sha256_prefix}\n")
        for note in result.notes:
            err.write(f"{name}: note: {note}\n")
        if result.skipped is not None:
            err.write(f"{name}: skipped: {result.skipped}\n")
        if result.error is not None:
            err.write(f"{name}: error: {result.error}\n")
            failed += 1
        count += len(result.findings)
        files += 1 if result.findings else 0
        scanned += 1 if result.skipped is None and result.error is None else 0
    err.write(f"{count} finding(s) in {files} of {scanned} file(s) scanned\n")
    if failed:  # fail closed: never a bare "0 findings" about what was not read (SPEC H8)
        err.write(f"incomplete: {failed} path(s) could not be scanned\n")
    return count > 0, failed > 0


def write_scan_json(results: Iterable[FileScan], out: TextIO) -> tuple[bool, bool]:
    """One JSON document once every file is done; whether anything was found, and whether a path
    could not be scanned."""
    done = list(results)
    document = {
        "findings": [
            f.to_json() | {"file": display_path(r.path)} for r in done for f in r.findings
        ],
        "files_scanned": sum(1 for r in done if r.skipped is None and r.error is None),
        "notes": [{"file": display_path(r.path), "note": n} for r in done for n in r.notes],
        "skipped": [{"file": display_path(r.path), "reason": r.skipped} for r in done if r.skipped],
        "errors": [{"file": display_path(r.path), "error": r.error} for r in done if r.error],
    }
    out.write(json.dumps(document, indent=2) + "\n")
    return bool(document["findings"]), bool(document["errors"])
