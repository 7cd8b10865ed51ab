"""The report formats of the stored-history tools: ``validate`` as text, JSON or SARIF 2.1.0
(SPEC H3), ``scan`` as text or JSON (SPEC H8).

JSON is one document per invocation for both tools, each with a schema in conformance/schemas/
(``validate-report``, ``scan-report``), as the run report is (``report``): what ``jq`` and
``json.load`` read in one go.

They sit here, beside the runs they report on (:mod:`reasoning_replay.history.validate_run`,
:mod:`reasoning_replay.history.scan`), rather than in :mod:`reasoning_replay.suite.reports`: those
report a conformance run, these report on files on disk, and a reader looking for what
``validate`` or ``scan`` prints finds it next to what they do. Paths that are not UTF-8 are written
with ``\\xNN`` escapes (text, JSON) or percent-encoded bytes (SARIF URIs).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Final, TextIO
from urllib.parse import quote

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.display_paths import display_path
from reasoning_replay.history.file_results import FileResult, Target, located_findings
from reasoning_replay.history.finding_places import (
    FILE_START,
    BlockKey,
    BlockPlace,
    block_key,
)
from reasoning_replay.history.permission_fixes import PERMISSION_CODES, Fix, is_fixed
from reasoning_replay.history.scan import FileScan
from reasoning_replay.history.store_urls import is_store_url
from reasoning_replay.history.validate_run import Totals, Writer
from reasoning_replay.history.validation import Finding, Severity
from reasoning_replay.resources import data_path
from reasoning_replay.suite import runner_version
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.versions import spec_url, versions

VALIDATE_FORMATS: Final = ("text", "json", "sarif")
PERMISSIONS_NOT_CHECKED: Final = "files on stores without POSIX modes: permissions not checked"
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


# --- validate: text, JSON, SARIF --------------------------------------------------------------


def _location_text(finding: Finding) -> str:
    if finding.message_index is None:
        return ""
    if finding.code is Code.CACHE_STATE_INVALID:
        return f"message {finding.message_index}, cache-state record"
    return f"message {finding.message_index}, block {finding.block_index}"


_STATUS: Final = {Severity.ERROR: "FAIL", Severity.WARNING: "WARN", Severity.NOTE: "NOTE"}
_SHOWN_PLACES: Final = 3  # a summarised code names this many of its blocks


class TextWriter:
    """Per-file lines as files finish, then a summary table.

    A code found at several blocks of one file is one line (how many, the first blocks): a
    legacy history has a finding per block, and a line each would bury the rest. ``verbose``
    lists every block, and the files skipped as not histories.
    """

    wants_places: Final = False

    def __init__(self, out: TextIO, *, verbose: bool = False) -> None:
        self._out = out
        self._verbose = verbose
        self._skipped: list[tuple[str, str]] = []

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        if result.skipped is not None:
            self._skipped.append((display_path(result.target.path), result.skipped))
            return
        report, path = result.report, result.target.path
        located = located_findings(result)
        counts = report.counts
        replay = "replays as stored" if report.replays_as_stored else "does not replay as stored"
        if report.provider_mismatch:  # SPEC H3, P4: blocks another provider issued
            replay += f"; {report.provider_mismatch} would not replay to {result.provider}"
        if result.is_session_file and result.target.remote:  # SPEC H4: no mode to check
            about = "session metadata: permissions not checked, the store has no POSIX modes"
        elif result.is_session_file:
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
        groups: dict[tuple[Code, Severity], list[Finding]] = {}
        for _, finding in located:
            groups.setdefault((finding.code, finding.severity), []).append(finding)
        for (code, severity), findings in groups.items():
            if self._verbose or len(findings) == 1:
                for finding in findings:
                    self._line(finding, _location_text(finding), result, fixes)
            else:
                shown = "; ".join(_location_text(f) for f in findings[:_SHOWN_PLACES])
                more = len(findings) - _SHOWN_PLACES
                where = f"{len(findings)} blocks ({shown}" + (
                    f"; {more} more, -v lists them)" if more > 0 else ")"
                )
                self._line(Finding(code, level=severity), where, result, fixes)

    def _line(
        self, finding: Finding, where: str, result: FileResult, fixes: dict[Code, Fix]
    ) -> None:
        line = f"  {finding.severity.value:<8} {finding.code.value:<30}"
        if where:
            line += f" {where}:"
        line += " " + finding_message(finding, result.target, fixes.get(finding.code))
        self._out.write(line.rstrip() + "\n")

    def finish(self, totals: Totals) -> None:
        b, f = totals.blocks, totals.findings
        rows = [
            (
                "files",
                totals.files,
                f"histories {totals.histories}, session.json {totals.session_files}; with "
                f"errors {totals.files_with_errors}, with warnings {totals.files_with_warnings}, "
                f"clean {totals.clean_files}; histories that replay as stored "
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
        if totals.skipped:
            hint = "" if self._verbose else "; -v lists them"
            rows.append(("skipped", totals.skipped, f"JSON files that are not histories{hint}"))
        if totals.excluded:
            rows.append(("excluded", totals.excluded, "paths left out by --exclude"))
        if totals.permissions_not_checked:
            rows.append(
                ("no modes", totals.permissions_not_checked, PERMISSIONS_NOT_CHECKED + " (SPEC H4)")
            )
        width = max(len(str(n)) for _, n, _ in rows)
        if self._verbose and self._skipped:
            self._out.write("\nskipped (not histories)\n")
            for path, reason in self._skipped:
                self._out.write(f"  {path}: {reason}\n")
        self._out.write("\nsummary\n")
        for name, number, detail in rows:
            self._out.write(f"  {name:<9}{number:>{width}}  {detail}\n")
        verdict = "FAILED: error findings" if totals.exit_status else "PASSED: no error findings"
        self._out.write(f"{verdict}\n")


VALIDATE_REPORT_SCHEMA: Final = "conformance/schemas/validate-report.schema.json"


class JsonWriter:
    """One JSON document for the whole run (``conformance/schemas/validate-report.schema.json``):
    ``files`` (each with its findings), ``skipped``, ``summary``. Each file's entry is written
    as soon as it is ready, one per line inside the ``files`` array, so the document streams
    and memory holds no more than a file's entry; ``jq`` and ``json.load`` read it whole."""

    wants_places: Final = False

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._opened = False
        self._skipped: list[dict[str, str]] = []

    @staticmethod
    def _dumps(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def _open(self) -> None:
        header = {"tool": {"name": TOOL_NAME, "version": runner_version()}}
        self._out.write(self._dumps(header)[:-1] + ',"files":[')
        self._opened = True
        self._first = True

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        if result.skipped is not None:
            path = display_path(result.target.path)
            self._skipped.append({"path": path, "reason": result.skipped})
            return
        if not self._opened:
            self._open()
        findings = []
        for about, finding in located_findings(result):
            entry: dict[str, Any] = {"path": display_path(about)}
            entry.update(finding.to_json())
            entry["message"] = finding_message(finding, result.target, fixes.get(finding.code))
            if finding.code in PERMISSION_CODES:
                entry["fixed"] = is_fixed(finding, fixes)
            findings.append(entry)
        record: dict[str, Any] = {"path": display_path(result.target.path)}
        if result.is_session_file:
            record["kind"] = "session"
        else:
            report = result.report
            record |= {
                "kind": "history",
                "provider": result.provider,
                "counts": report.counts.to_json(),
                "replays_as_stored": report.replays_as_stored,
                "provider_mismatch": report.provider_mismatch,
            }
        record["findings"] = findings
        self._out.write(("\n" if self._first else ",\n") + self._dumps(record))
        self._first = False

    def finish(self, totals: Totals) -> None:
        if not self._opened:
            self._open()
        skipped = self._dumps(self._skipped)
        self._out.write(f'\n],"skipped":{skipped},"summary":{self._dumps(totals.to_json())}}}\n')


TOOL_NAME: Final = "conformance validate"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL: Final = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
FINGERPRINT_KEY: Final = "reasoningReplayFinding/v1"


def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def _uri_path(path: str) -> str:
    """A path's raw bytes, percent-encoded as RFC 3986 asks: file names are bytes on POSIX and
    need not be UTF-8, and a SARIF URI carries them faithfully that way (SARIF 2.1.0 §3.10)."""
    return quote(os.fsencode(path))


def artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifactLocation: relative paths against ``%SRCROOT%`` (the working directory),
    a file of a store by its URL."""
    if is_store_url(path):
        scheme, rest = path.split("://", 1)
        return {"uri": f"{scheme}://{quote(rest, safe='/@:')}"}
    if Path(path).is_absolute():
        return {"uri": "file://" + _uri_path(Path(path).as_posix())}
    posix = Path(path).as_posix()
    relative = posix[2:] if posix.startswith("./") else posix
    return {"uri": _uri_path(relative), "uriBaseId": "SRCROOT"}


def finding_fingerprint(finding: Finding, place: BlockPlace | None, ordinal: int) -> str:
    """A finding's identity across runs (SARIF ``partialFingerprints``): its code, its message
    and block indexes, the digest of its block's text as stored (never the ciphertext), and
    its ordinal among the file's findings of that code at that block; not its line, so an edit
    elsewhere in the file keeps it."""
    parts = [
        finding.code.value,
        "" if finding.message_index is None else str(finding.message_index),
        "" if finding.block_index is None else str(finding.block_index),
        "" if place is None else place.digest,
        str(ordinal),
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def sarif_rule(code: Code) -> dict[str, Any]:
    """A SARIF rule (reportingDescriptor) for a registry code: its meaning, and a link to the
    SPEC rule that defines it at the project's public URL (versions.json)."""
    anchor, meaning = registry().get(code.value, ("", code.value))
    rule: dict[str, Any] = {
        "id": code.value,
        "name": _camel(code.value),
        "shortDescription": {"text": meaning},
        "fullDescription": {"text": meaning + (f" (SPEC {anchor})" if anchor else "")},
        "defaultConfiguration": {"level": _SARIF_LEVEL[Finding(code).severity]},
    }
    if anchor:
        rule["helpUri"] = spec_url(anchor)
        rule["help"] = {"text": f"{meaning} See SPEC.md#{anchor}: {spec_url(anchor)}"}
        rule["properties"] = {"spec_rule": anchor}
    return rule


class SarifWriter:
    """A SARIF 2.1.0 log that code scanning can place: each result has a region (the block's
    text in the file, found from its bytes; the file's start for a finding about the whole
    file), a partial fingerprint, and a rule with a link to its SPEC rule. Results are small
    (no file contents), so they are kept until the end, when the log is written."""

    wants_places: Final = True

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._results: list[dict[str, Any]] = []
        self._codes: list[Code] = []
        self._artifacts: list[dict[str, Any]] = []
        self._skipped = 0

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        if result.skipped is not None:
            self._skipped += 1
            return
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
        seen: dict[tuple[str, BlockKey | None], int] = {}
        for about, finding in located_findings(result):
            if finding.code not in self._codes:
                self._codes.append(finding.code)
            key = block_key(finding)
            place = None if key is None else result.places.get(key)
            physical: dict[str, Any] = {"artifactLocation": artifact_location(about)}
            if about == result.target.path:  # not a session directory: a file, with lines
                region = FILE_START if place is None else place.region
                physical["region"] = region.to_sarif()
            location: dict[str, Any] = {"physicalLocation": physical}
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
            ordinal = seen.get((finding.code.value, key), 0)
            seen[(finding.code.value, key)] = ordinal + 1
            sarif_result: dict[str, Any] = {
                "ruleId": finding.code.value,
                "level": _SARIF_LEVEL[finding.severity],
                "message": {
                    "text": finding_message(finding, result.target, fixes.get(finding.code))
                },
                "locations": [location],
                "partialFingerprints": {
                    FINGERPRINT_KEY: finding_fingerprint(finding, place, ordinal)
                },
            }
            if properties:
                sarif_result["properties"] = properties
            self._results.append(sarif_result)

    def finish(self, totals: Totals) -> None:
        codes = sorted(self._codes, key=list(Code).index)
        index = {code.value: i for i, code in enumerate(codes)}
        for sarif_result in self._results:
            sarif_result["ruleIndex"] = index[sarif_result["ruleId"]]
        log = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": TOOL_NAME,
                            "fullName": f"reasoning-replay {TOOL_NAME}",
                            "version": runner_version(),
                            "semanticVersion": runner_version(),
                            "informationUri": versions().public_url,
                            "rules": [sarif_rule(code) for code in codes],
                        }
                    },
                    "originalUriBaseIds": {
                        "SRCROOT": {"uri": "file://" + _uri_path(Path.cwd().as_posix()) + "/"}
                    },
                    "columnKind": "utf16CodeUnits",
                    "invocations": [_invocation(totals)],
                    "results": self._results,
                    "properties": {"summary": totals.to_json()},
                }
                | ({"artifacts": self._artifacts} if self._artifacts else {})
            ],
        }
        self._out.write(json.dumps(log, ensure_ascii=False, indent=2) + "\n")


def _invocation(totals: Totals) -> dict[str, Any]:
    """The run's invocation: its exit status and, where files were on stores without POSIX
    modes, a notification that their permissions were not checked (SPEC H4)."""
    invocation: dict[str, Any] = {"executionSuccessful": True, "exitCode": totals.exit_status}
    if totals.permissions_not_checked:
        text = f"{totals.permissions_not_checked} {PERMISSIONS_NOT_CHECKED} (SPEC H4)."
        invocation["toolExecutionNotifications"] = [
            {"level": "note", "message": {"text": text[0].upper() + text[1:]}}
        ]
    return invocation


def make_writer(fmt: str, out: TextIO, *, verbose: bool = False) -> Writer:
    if fmt == "json":
        return JsonWriter(out)
    if fmt == "sarif":
        return SarifWriter(out)
    return TextWriter(out, verbose=verbose)


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
