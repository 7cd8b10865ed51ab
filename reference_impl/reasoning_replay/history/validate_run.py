"""One ``validate`` run over stored history files (SPEC §10.2, H1, H3 and H4): the walk
(:mod:`.walk`), each file's validation (:mod:`.file_results`) in jobs (:mod:`.validate_jobs`) or
an engine, the permission policy and fixes (:mod:`.permission_fixes`), and the totals; the report
formats are in :mod:`reasoning_replay.history.report_formats`, the command line in
:mod:`reasoning_replay.cli.validate`.

Each report is written as soon as it and every report before it are ready, in the walk's order.
A run that validates nothing (an empty directory, one without histories, everything excluded)
says so, and the command exits 2. A run may hand its files to an engine (:class:`Engine`, e.g.
:mod:`reasoning_replay.history.distributed`) instead of validating them here or in a local
process pool.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TextIO

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.file_results import FileResult, Target, located_findings
from reasoning_replay.history.path_patterns import ExcludePatterns
from reasoning_replay.history.permission_fixes import (
    Fix,
    apply_permission_policy,
    is_fixed,
    permission_fixes,
)
from reasoning_replay.history.validate_jobs import validate_all
from reasoning_replay.history.validation import Severity
from reasoning_replay.history.walk import NO_EXCLUSIONS, Walk
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames

EXIT_OK: Final = 0
EXIT_ERRORS: Final = 1
PROGRESS_MIN_FILES: Final = 20  # a bar for a handful of files is noise


# --- totals ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Totals:
    """The run's counts: the summary of every report format. ``files`` counts what was
    validated, histories and ``session.json`` files; skipped and excluded files are not in it."""

    files: int = 0
    histories: int = 0
    session_files: int = 0
    skipped: int = 0
    excluded: int = 0
    files_with_errors: int = 0
    files_with_warnings: int = 0
    files_with_notes: int = 0
    clean_files: int = 0
    replay_as_stored: int = 0  # histories only: session.json holds no replay (SPEC H1)
    bytes: int = 0
    blocks: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("resumable", "legacy", "redacted", "malformed"), 0)
    )
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(Severity, 0))
    fixed: int = 0
    unfixed_errors: int = 0
    permissions_not_checked: int = 0  # files of stores without POSIX modes (SPEC H4)

    def add(self, result: FileResult, fixes: dict[Code, Fix]) -> None:
        if result.skipped is not None:
            self.skipped += 1
            return
        report = result.report
        self.files += 1
        self.bytes += result.target.size
        self.permissions_not_checked += result.target.remote
        if result.is_session_file:
            self.session_files += 1
        else:
            self.histories += 1
            self.replay_as_stored += report.replays_as_stored
        for name, count in report.counts.to_json().items():
            self.blocks[name] += count
        severities = set()
        for _, finding in located_findings(result):
            severities.add(finding.severity)
            self.findings[finding.severity] += 1
            if is_fixed(finding, fixes):
                self.fixed += 1
            elif finding.severity is Severity.ERROR:
                self.unfixed_errors += 1
        self.files_with_errors += Severity.ERROR in severities
        self.files_with_warnings += Severity.WARNING in severities
        self.files_with_notes += Severity.NOTE in severities
        self.clean_files += not severities

    @property
    def nothing_validated(self) -> bool:
        """No history and no session.json was validated: the command exits 2."""
        return self.files == 0

    def nothing_validated_reason(self) -> str:
        """The one line that says so, with what the walk left out."""
        left_out = []
        if self.skipped:
            left_out.append(f"{self.skipped} JSON file(s) skipped as not histories")
        if self.excluded:
            left_out.append(f"{self.excluded} path(s) excluded")
        detail = "; ".join(left_out) if left_out else "no JSON file found"
        return (
            "nothing to validate: no history file (history_*.json, compacted_*.json, "
            f"session.json, or a JSON object with a member messages) in the paths given ({detail})"
        )

    @property
    def exit_status(self) -> int:
        return EXIT_ERRORS if self.unfixed_errors else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        not_checked = self.permissions_not_checked  # stated only where there were such files
        return {
            "files": self.files,
            "histories": self.histories,
            "session_files": self.session_files,
            "skipped": self.skipped,
            "excluded": self.excluded,
            "files_with_errors": self.files_with_errors,
            "files_with_warnings": self.files_with_warnings,
            "clean_files": self.clean_files,
            "replay_as_stored": self.replay_as_stored,
            "blocks": dict(self.blocks),
            "findings": {str(k): v for k, v in self.findings.items()},
            "fixed": self.fixed,
            "exit_status": self.exit_status,
        } | ({"permissions_not_checked": not_checked} if not_checked else {})


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


# --- the run -----------------------------------------------------------------------------------


class Writer(Protocol):
    """A report format (:mod:`reasoning_replay.history.report_formats`): each file's result as
    it is ready, then the totals. A writer writes nothing before its first validated file, so
    that a run that validates nothing leaves its output empty."""

    @property
    def wants_places(self) -> bool:
        """Whether results carry where each finding's block is (costs a second reading)."""
        ...

    def file(self, result: FileResult, fixes: dict[Code, Fix]) -> None: ...

    def finish(self, totals: Totals) -> None: ...


class Engine(Protocol):
    """What validates the files of a run instead of :func:`validate_all` (a cluster,
    :mod:`reasoning_replay.history.distributed`): every target's result, in the order of
    ``targets``."""

    def validate(
        self,
        targets: Iterable[Target],
        provider: str,
        provider_names: ProviderNames,
        *,
        places: bool,
    ) -> Iterator[FileResult]: ...


def run_validate(
    paths: Sequence[str],
    *,
    writer: Writer,
    provider: str = "openai",
    provider_names: ProviderNames = REGISTRY_ONLY,
    jobs: int = 1,
    fix_permissions: bool = False,
    permissions: str = "error",
    exclude: ExcludePatterns = NO_EXCLUSIONS,
    progress_stream: TextIO | None = None,
    out_is_tty: bool = False,
    engine: Engine | None = None,
) -> Totals:
    """Validate ``paths`` and write every result; the caller has checked that they exist.

    When nothing was validated (:attr:`Totals.nothing_validated`) the writer is not finished:
    it has written nothing, and the caller reports the run as a usage error. With an ``engine``
    the files are validated there (``jobs`` is not used); the walk, the permission policy, the
    fixes, the totals and the report stay in this process.
    """
    walk = Walk(exclude)
    targets: Iterable[Target] = walk.targets(paths)
    bar = None
    if progress_stream is not None:
        listed = list(targets)  # the bar needs the totals: paths only, never contents
        targets = listed
        if len(listed) >= PROGRESS_MIN_FILES:
            bar = FileProgress(progress_stream, len(listed), sum(t.size for t in listed))
    totals = Totals()
    places = writer.wants_places
    results = (
        validate_all(targets, provider, jobs, provider_names, places=places)
        if engine is None
        else engine.validate(targets, provider, provider_names, places=places)
    )
    try:
        for found in results:
            result = apply_permission_policy(found, permissions)
            fixes = permission_fixes(result) if fix_permissions else {}
            totals.add(result, fixes)
            if bar is not None and out_is_tty:
                bar.clear()  # the same terminal: the bar must not cut a report line
            writer.file(result, fixes)
            if bar is not None:
                bar.advance(result)
    finally:
        if bar is not None:
            bar.clear()
    totals.excluded = walk.excluded
    if not totals.nothing_validated:
        writer.finish(totals)
    return totals
