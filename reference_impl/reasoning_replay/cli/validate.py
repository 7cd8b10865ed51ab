"""``conformance validate PATH...``: check stored history files (SPEC §10.2, H3 and H4).

Files are validated one at a time (or by a process pool with ``--jobs``), in a deterministic
order, and each report is written as soon as it and every report before it are ready, so memory
holds one file's contents per worker. Directories are walked recursively for ``*.json``;
``session.json`` is checked for permissions only (SPEC H1). The session directory of a file is
its parent when that directory holds ``session.json`` or a ``history_*.json`` file; its mode is
checked once, with the first of its files, and the provider of each of its history files is read
from its ``session.json`` where that records one (SPEC H3, P4).

Files are read without blocking and only when regular (a FIFO is ``history_unreadable``, never a
hang); ``--fix-permissions`` changes modes through descriptors opened without following links,
and reports a permission finding on a link as not fixed, naming the link (SPEC H4). Paths that
are not UTF-8 are written with ``\\xNN`` escapes (text, JSON) or percent-encoded bytes (SARIF URIs).

Exit status (SPEC H3): 0 no ``error`` finding (fixed permissions do not count), 1 an ``error``
finding, 2 a usage error or a path that does not exist.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import os
import stat
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Protocol, TextIO
from urllib.parse import quote

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.persistence import tighten_mode
from reasoning_replay.history.safe_files import display_path, open_regular, output_problem
from reasoning_replay.history.validation import (
    SESSION_FILE_NAME,
    BlockCounts,
    FileReport,
    Finding,
    Severity,
    is_session_file,
    provider_of_file,
    session_providers,
    validate_history,
)
from reasoning_replay.resources import data_path
from reasoning_replay.suite import runner_version
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.versions import versions

EXIT_OK: Final = 0
EXIT_ERRORS: Final = 1
EXIT_USAGE: Final = 2
FORMATS: Final = ("text", "json", "sarif")
PROGRESS_MIN_FILES: Final = 20  # a bar for a handful of files is noise
_CHUNK_FILES: Final = 8  # a pool task: up to this many files ...
_CHUNK_BYTES: Final = 8 * 1024 * 1024  # ... or about this many bytes
_REPLAY_CHANNEL: Final = "openai-reasoning-encrypted"
_CACHE_STATE_CHANNEL: Final = "fast-agent-responses-cache-state"
_PERMISSION_CODES: Final = frozenset((Code.FILE_MODE_TOO_OPEN, Code.DIRECTORY_MODE_TOO_OPEN))
PERMISSION_POLICIES: Final = ("error", "warning", "ignore")
SESSION_FILE_MAX_BYTES: Final = 16 * 1024 * 1024  # session.json is metadata: kilobytes


class ValidateUsageError(Exception):
    """A usage error or a path that does not exist: exit status 2."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``validate`` on the ``conformance`` subcommand parsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "validate",
        allow_abbrev=False,  # a file named like an abbreviated option must not become one
        help="validate stored history files and session directories (SPEC H1-H4)",
        description="Validate stored history files: replay blocks, cache-state records, "
        "duplicates and permissions (SPEC §10.2). Exit 0 without error findings, 1 with, "
        "2 for a usage error or a missing path.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="history file or directory")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("--output", type=Path, metavar="FILE", help="write the report to FILE")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes")
    p.add_argument(
        "--fix-permissions",
        action="store_true",
        help="remove group and other permission bits from files and session directories "
        "(never through a symbolic link)",
    )
    p.add_argument(
        "--permissions",
        choices=PERMISSION_POLICIES,
        default="error",
        help="permission findings (SPEC H4) are errors (default), warnings, or not reported",
    )
    p.add_argument(
        "--provider",
        default="openai",
        metavar="NAME",
        help="provider of files whose session.json records none (SPEC P4, H3; default openai)",
    )
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    return p


# --- discovery -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """One file to validate, with what the walk learned about it."""

    path: str
    size: int
    directory: str | None = None  # the session directory checked with this file, if any
    directory_mode: int | None = None
    listing_error: str | None = None  # a directory that could not be listed
    provider: str | None = None  # recorded in the session directory's session.json (SPEC P4)


def _is_session_dir(names: Iterable[str]) -> bool:
    return any(
        n == SESSION_FILE_NAME or (n.startswith("history_") and n.endswith(".json")) for n in names
    )


class _Walk:
    """Deterministic discovery: arguments in order, directory entries sorted by name, a
    directory's files before its subdirectories; symbolic links to directories not followed."""

    def __init__(self) -> None:
        self._session: dict[str, bool] = {}
        self._providers: dict[str, Mapping[str, str]] = {}
        self._checked: set[str] = set()

    def _target(self, path: str, size: int, parent: str, names: Iterable[str] | None) -> Target:
        if parent not in self._session:
            if names is None:
                try:
                    names = [child.name for child in Path(parent).iterdir()]
                except OSError:
                    names = ()
            names = list(names)
            self._session[parent] = _is_session_dir(names)
            if SESSION_FILE_NAME in names:
                self._providers[parent] = _read_session_providers(parent)
        provider = provider_of_file(Path(path).name, self._providers.get(parent, {}))
        if not self._session[parent] or parent in self._checked:
            return Target(path, size, provider=provider)
        self._checked.add(parent)
        try:
            mode: int | None = stat.S_IMODE(Path(parent).stat().st_mode)
        except OSError:
            mode = None
        return Target(path, size, parent, mode, provider=provider)

    def targets(self, paths: Sequence[str]) -> Iterator[Target]:
        for path in paths:
            if Path(path).is_dir():
                yield from self._directory(path)
            else:
                try:
                    size = Path(path).stat().st_size
                except OSError:
                    size = 0
                yield self._target(path, size, str(Path(path).parent), None)

    def _directory(self, root: str) -> Iterator[Target]:
        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as error:
                yield Target(directory, 0, listing_error=error.strerror or str(error))
                continue
            names = [e.name for e in entries]
            subdirs = []
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
                    elif entry.name.endswith(".json"):
                        # A FIFO, a device or a link to one is a target too: reading it is
                        # refused without blocking and reported (history_unreadable).
                        size = entry.stat(follow_symlinks=False).st_size
                        yield self._target(entry.path, size, directory, names)
                except OSError:
                    yield Target(entry.path, 0)
            stack.extend(reversed(subdirs))


def _read_session_providers(directory: str) -> Mapping[str, str]:
    """The providers a session directory's ``session.json`` records, by history file name; an
    empty mapping when it cannot be read or says nothing usable (then ``--provider`` applies)."""
    try:
        with open_regular(Path(directory, SESSION_FILE_NAME)) as handle:
            data = handle.read(SESSION_FILE_MAX_BYTES + 1)
        if len(data) > SESSION_FILE_MAX_BYTES:
            return {}
        return session_providers(json.loads(data))
    except (OSError, ValueError, RecursionError):
        return {}


# --- validation of one file (runs in workers) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileResult:
    """A file's report with the path and mode it was made for."""

    target: Target
    report: FileReport
    file_mode: int | None
    provider: str | None = None  # the file's provider: issuer and target (SPEC P4, H3)


def _unreadable(target: Target, detail: str) -> FileResult:
    finding = Finding(Code.HISTORY_UNREADABLE, detail=detail)
    return FileResult(target, FileReport((finding,), BlockCounts(), False, target.path), None)


def validate_target(target: Target, provider: str) -> FileResult:
    """Read one file and validate it; an I/O error is a ``history_unreadable`` finding."""
    if target.listing_error is not None:
        return _unreadable(target, f"cannot list directory: {target.listing_error}")
    session_only = is_session_file(target.path)
    try:
        if session_only:
            file_mode = stat.S_IMODE(Path(target.path).stat().st_mode)
            data = b""
        else:
            # Without blocking, and only a regular file: a FIFO must not hang the run (H3).
            with open_regular(target.path) as handle:
                file_mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
                data = handle.read()
    except OSError as error:
        return _unreadable(target, f"cannot read: {error.strerror or error}")
    used = provider if target.provider is None else target.provider
    report = validate_history(
        data,
        provider=used,
        file_mode=file_mode,
        directory_mode=target.directory_mode,
        file_name=target.path,
    )
    return FileResult(target, report, file_mode, None if session_only else used)


def _validate_chunk(chunk: Sequence[Target], provider: str) -> list[FileResult]:
    return [validate_target(target, provider) for target in chunk]


def _chunks(targets: Iterable[Target]) -> Iterator[list[Target]]:
    chunk: list[Target] = []
    size = 0
    for target in targets:
        chunk.append(target)
        size += target.size
        if len(chunk) >= _CHUNK_FILES or size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def validate_all(targets: Iterable[Target], provider: str, jobs: int) -> Iterator[FileResult]:
    """Every target's result, in the order of ``targets``, whatever the number of workers.

    With ``jobs > 1`` a process pool validates chunks of files; at most ``4 * jobs`` chunks are
    in flight, so neither the pending files nor the finished reports pile up.
    """
    if jobs <= 1:
        for target in targets:
            yield validate_target(target, provider)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: deque[Future[list[FileResult]]] = deque()
        for chunk in _chunks(targets):
            pending.append(pool.submit(_validate_chunk, chunk, provider))
            if len(pending) >= 4 * jobs:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


# --- fixing permissions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fix:
    """A permission change ``--fix-permissions`` made (or could not make)."""

    path: str
    old: int
    new: int
    error: str | None = None


def tighten(path: str, *, directory: bool = False) -> Fix | None:
    """SPEC H4: remove group and other bits, never add one; ``None`` when nothing to remove.

    Never through a symbolic link: a link is a :class:`Fix` whose error names it, and nothing
    is changed, here or where it points (:func:`reasoning_replay.history.persistence.tighten_mode`).
    """
    try:
        old = stat.S_IMODE(Path(path).lstat().st_mode)
        new = tighten_mode(Path(path), directory=directory)
    except OSError as error:
        if error.errno == errno.ELOOP:  # SPEC H4: a fixer never changes a mode through a link
            reason = f"{display_path(path)} is a symbolic link, not followed; nothing was changed"
        else:
            reason = error.strerror or str(error)
        return Fix(path, 0, 0, reason)
    return None if new is None else Fix(path, old, new)


def _fixes(result: FileResult) -> dict[Code, Fix]:
    fixes: dict[Code, Fix] = {}
    codes = {f.code for f in result.report.findings}
    if Code.FILE_MODE_TOO_OPEN in codes:
        fix = tighten(result.target.path)
        if fix is not None:
            fixes[Code.FILE_MODE_TOO_OPEN] = fix
    if Code.DIRECTORY_MODE_TOO_OPEN in codes and result.target.directory is not None:
        fix = tighten(result.target.directory, directory=True)
        if fix is not None:
            fixes[Code.DIRECTORY_MODE_TOO_OPEN] = fix
    return fixes


def apply_permission_policy(result: FileResult, policy: str) -> FileResult:
    """``--permissions``: keep permission findings as errors, lower them to warnings, or drop
    them (SPEC H3); every other finding is unchanged."""
    if policy == "error":
        return result
    findings: list[Finding] = []
    for finding in result.report.findings:
        if finding.code not in _PERMISSION_CODES:
            findings.append(finding)
        elif policy == "warning":
            findings.append(dataclasses.replace(finding, level=Severity.WARNING))
    report = dataclasses.replace(result.report, findings=tuple(findings))
    return dataclasses.replace(result, report=report)


def located_findings(result: FileResult) -> list[tuple[str, Finding]]:
    """Each finding with the path it is about (SPEC H3): the session directory for its mode,
    the file otherwise."""
    target = result.target
    located: list[tuple[str, Finding]] = []
    for finding in result.report.findings:
        about_directory = finding.code is Code.DIRECTORY_MODE_TOO_OPEN
        located.append(
            (target.directory if about_directory and target.directory else target.path, finding)
        )
    return located


def _is_fixed(finding: Finding, fixes: dict[Code, Fix]) -> bool:
    fix = fixes.get(finding.code)
    return fix is not None and fix.error is None


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


# --- totals ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Totals:
    files: int = 0
    files_with_errors: int = 0
    files_with_warnings: int = 0
    files_with_notes: int = 0
    clean_files: int = 0
    replay_as_stored: int = 0
    bytes: int = 0
    blocks: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("resumable", "legacy", "redacted", "malformed"), 0)
    )
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(Severity, 0))
    fixed: int = 0
    unfixed_errors: int = 0

    def add(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        report = result.report
        self.files += 1
        self.bytes += result.target.size
        self.replay_as_stored += report.replays_as_stored
        for name, count in report.counts.to_json().items():
            self.blocks[name] += count
        severities = set()
        for _, finding in located_findings(result):
            severities.add(finding.severity)
            self.findings[finding.severity] += 1
            if _is_fixed(finding, fixes):
                self.fixed += 1
            elif finding.severity is Severity.ERROR:
                self.unfixed_errors += 1
        self.files_with_errors += Severity.ERROR in severities
        self.files_with_warnings += Severity.WARNING in severities
        self.files_with_notes += Severity.NOTE in severities
        self.clean_files += not severities

    @property
    def exit_status(self) -> int:
        return EXIT_ERRORS if self.unfixed_errors else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "summary",
            "files": self.files,
            "files_with_errors": self.files_with_errors,
            "files_with_warnings": self.files_with_warnings,
            "clean_files": self.clean_files,
            "replay_as_stored": self.replay_as_stored,
            "blocks": dict(self.blocks),
            "findings": {str(k): v for k, v in self.findings.items()},
            "fixed": self.fixed,
            "exit_status": self.exit_status,
        }


# --- output formats ----------------------------------------------------------------------------


class Writer(Protocol):
    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None: ...

    def finish(self, totals: Totals) -> None: ...


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
            if finding.code in _PERMISSION_CODES:
                line["fixed"] = _is_fixed(finding, fixes)
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
            if finding.code in _PERMISSION_CODES:
                properties["fixed"] = _is_fixed(finding, fixes)
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


# --- progress ----------------------------------------------------------------------------------


class FileProgress:
    """A one-line bar on stderr: files and megabytes done, redrawn at most ten times a second."""

    _WIDTH: Final = 30

    def __init__(self, stream: TextIO, files: int, size: int) -> None:
        self._stream = stream
        self._files = files
        self._size = max(size, 1)
        self._done = 0
        self._bytes = 0
        self._last = 0.0
        self._drawn = False

    def advance(self, result: FileResult) -> None:
        self._done += 1
        self._bytes += result.target.size
        now = time.monotonic()
        if self._done != self._files and now - self._last < 0.1 and self._drawn:
            return
        self._last = now
        filled = self._WIDTH * self._bytes // self._size
        bar = "#" * filled + "-" * (self._WIDTH - filled)
        self._stream.write(
            f"\r[{bar}] {self._done}/{self._files} files, "
            f"{self._bytes / 1e6:.0f}/{self._size / 1e6:.0f} MB"
        )
        self._stream.flush()
        self._drawn = True

    def clear(self) -> None:
        if self._drawn:
            self._stream.write("\r" + " " * (self._WIDTH + 60) + "\r")
            self._stream.flush()
            self._drawn = False


# --- the command -------------------------------------------------------------------------------


def run_validate(
    paths: Sequence[str],
    *,
    writer: Writer,
    provider: str = "openai",
    jobs: int = 1,
    fix_permissions: bool = False,
    permissions: str = "error",
    progress_stream: TextIO | None = None,
    out_is_tty: bool = False,
) -> Totals:
    """Validate ``paths`` and write every result; the caller has checked that they exist."""
    targets: Iterable[Target] = _Walk().targets(paths)
    bar = None
    if progress_stream is not None:
        listed = list(targets)  # the bar needs the totals: paths only, never contents
        targets = listed
        if len(listed) >= PROGRESS_MIN_FILES:
            bar = FileProgress(progress_stream, len(listed), sum(t.size for t in listed))
    totals = Totals()
    try:
        for found in validate_all(targets, provider, jobs):
            result = apply_permission_policy(found, permissions)
            fixes = _fixes(result) if fix_permissions else {}
            totals.add(result, fixes)
            if bar is not None and out_is_tty:
                bar.clear()  # the same terminal: the bar must not cut a report line
            writer.file(result, fixes)
            if bar is not None:
                bar.advance(result)
    finally:
        if bar is not None:
            bar.clear()
    writer.finish(totals)
    return totals


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The ``validate`` subcommand; usage errors are reported here, with exit status 2."""
    try:
        return _validate_command(args, out, err)
    except ValidateUsageError as error:
        print(f"conformance validate: error: {error}", file=err)
        return EXIT_USAGE


def _validate_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        raise ValidateUsageError(f"no such file or directory: {', '.join(missing)}")
    if args.jobs < 1:
        raise ValidateUsageError("--jobs must be at least 1")
    if args.fix_permissions and args.permissions == "ignore":
        raise ValidateUsageError("--fix-permissions has nothing to fix with --permissions ignore")
    show_progress = not args.no_progress and err.isatty()
    target = out if args.output is None else _open_report(args.output, args.paths)
    try:
        totals = run_validate(
            args.paths,
            writer=make_writer(args.format, target),
            provider=args.provider,
            jobs=args.jobs,
            fix_permissions=args.fix_permissions,
            permissions=args.permissions,
            progress_stream=err if show_progress else None,
            out_is_tty=target.isatty(),
        )
    finally:
        if target is not out:
            target.close()
    return totals.exit_status


def _open_report(path: Path, inputs: Sequence[str]) -> TextIO:
    """Open ``--output`` for the report, refusing to harm a file: never one of the files named
    for validation (a file named ``--output=X.json`` must not turn a hook against ``X.json``),
    never through a link, never a FIFO or a device (issue 12)."""
    statuses = []
    for name in inputs:
        try:
            statuses.append(Path(name).stat())
        except OSError:
            continue
    problem = output_problem(path, tuple(statuses))
    if problem is not None:
        raise ValidateUsageError(f"refusing to write {display_path(path)}: {problem}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)  # the report holds no replay material: the umask's mode
    except OSError as error:
        raise ValidateUsageError(f"cannot write {display_path(path)}: {error.strerror}") from error
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # swapped since the check: leave it as it is
        os.close(fd)
        raise ValidateUsageError(f"refusing to write {display_path(path)}: not a regular file")
    os.ftruncate(fd, 0)
    return open(fd, "w", encoding="utf-8", closefd=True)  # noqa: PTH123 (a descriptor)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reasoning_replay.cli.validate PATH...``, the same as the subcommand."""
    parser = argparse.ArgumentParser(prog="conformance")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["validate", *(sys.argv[1:] if argv is None else argv)])
    return cmd_validate(args, sys.stdout, sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
