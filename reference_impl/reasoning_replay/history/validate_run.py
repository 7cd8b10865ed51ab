"""One ``validate`` run over stored history files (SPEC §10.2, H1, H3 and H4): the walk, the jobs,
the permission fixes and the totals; the report formats are in
:mod:`reasoning_replay.history.report_formats`, the command line in
:mod:`reasoning_replay.cli.validate`.

Files are validated one at a time (or by a process pool of at most ``jobs`` workers, never
more than usable CPUs or batches of files), in a deterministic order, and each report is
written as soon as it and every report before it are ready, so memory holds one file's contents
per worker.

Which files are histories. A file named on the command line is always validated. A directory is
walked recursively for ``*.json`` files, less those ``exclude`` matches
(:mod:`reasoning_replay.history.path_patterns`); of those, a file named as SPEC H1 names a
session directory's files (``history_*.json``, ``compacted_*.json``; ``session.json``, checked for
permissions only) is validated, and any other is validated only if its shape is a history's: a
JSON object with a member ``messages`` (an export, a saved copy). Any other JSON file
(``package.json``, a generated corpus, a file that is not JSON at all) is skipped: listed with
the reason and counted, never a finding. A run that validates nothing (an empty directory, one
without histories, everything excluded) says so, and the command exits 2.

The session directory of a file is
its parent when that directory holds ``session.json`` or a ``history_*.json`` file; its mode is
checked once, with the first of its files, and the provider of each of its history files is read
from its ``session.json`` where that records one (SPEC H3, P4).

Files are read without blocking and only when regular (a FIFO is ``history_unreadable``, never a
hang); fixing permissions changes modes through descriptors opened without following links, and
reports a permission finding on a link as not fixed, naming the link (SPEC H4).

A path may also be an fsspec URL (``s3://bucket/sessions``, ``memory://...``): the store is walked
by the same rules (:mod:`reasoning_replay.history.stores`), its files are read through fsspec, and
they have no POSIX modes, so their permissions are counted as not checked (SPEC H4). A run may
hand its files to an engine (:class:`Engine`, e.g. :mod:`reasoning_replay.history.distributed`)
instead of validating them here or in a local process pool.
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import json
import os
import stat
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TextIO

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.finding_places import BlockKey, BlockPlace, block_key, block_places
from reasoning_replay.history.history_files import history_shape_problem
from reasoning_replay.history.path_patterns import ExcludePatterns
from reasoning_replay.history.persistence import tighten_mode
from reasoning_replay.history.safe_files import display_path, listings, open_regular
from reasoning_replay.history.store_urls import is_store_url, read_store_file
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
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames

if TYPE_CHECKING:
    from reasoning_replay.history.store_walk import StoreWalk

EXIT_OK: Final = 0
EXIT_ERRORS: Final = 1
PROGRESS_MIN_FILES: Final = 20  # a bar for a handful of files is noise
_CHUNK_FILES: Final = 8  # a pool task: up to this many files ...
_CHUNK_BYTES: Final = 8 * 1024 * 1024  # ... or about this many bytes
PERMISSION_CODES: Final = frozenset((Code.FILE_MODE_TOO_OPEN, Code.DIRECTORY_MODE_TOO_OPEN))
PERMISSION_POLICIES: Final = ("error", "warning", "ignore")
SESSION_FILE_MAX_BYTES: Final = 16 * 1024 * 1024  # session.json is metadata: kilobytes
NO_EXCLUSIONS: Final = ExcludePatterns()


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
    by_shape: bool = False  # found in a walk under another name: a history only by its shape
    remote: bool = False  # a file of an fsspec store, named by its URL: no POSIX modes (SPEC H4)


def is_history_name(name: str) -> bool:
    """SPEC H1: the names of a session directory's files, ``session.json`` included."""
    return name == SESSION_FILE_NAME or (
        name.endswith(".json") and name.startswith(("history_", "compacted_"))
    )


def is_session_dir(names: Iterable[str]) -> bool:
    """Whether a directory whose entries have these names is a session directory (SPEC H1)."""
    return any(
        n == SESSION_FILE_NAME or (n.startswith("history_") and n.endswith(".json")) for n in names
    )


class _Walk:
    """Deterministic discovery: arguments in order, directory entries sorted by name, a
    directory's files before its subdirectories; symbolic links to directories not followed."""

    def __init__(self, exclude: ExcludePatterns = NO_EXCLUSIONS) -> None:
        self._session: dict[str, bool] = {}
        self._providers: dict[str, Mapping[str, str]] = {}
        self._checked: set[str] = set()
        self._exclude = exclude
        self._excluded = 0  # files and directories of local walks that --exclude left out
        self._stores: StoreWalk | None = None  # the walk of fsspec URLs, made when one is given

    @property
    def excluded(self) -> int:
        """Files and directories of walks that --exclude left out."""
        return self._excluded + (0 if self._stores is None else self._stores.excluded)

    def _target(
        self,
        path: str,
        size: int,
        parent: str,
        names: Iterable[str] | None,
        *,
        by_shape: bool = False,
    ) -> Target:
        if parent not in self._session:
            if names is None:
                try:
                    names = [child.name for child in Path(parent).iterdir()]
                except OSError:
                    names = ()
            names = list(names)
            self._session[parent] = is_session_dir(names)
            if SESSION_FILE_NAME in names:
                self._providers[parent] = _read_session_providers(parent)
        provider = provider_of_file(Path(path).name, self._providers.get(parent, {}))
        # A file that may turn out not to be a history does not carry its directory's check.
        if by_shape or not self._session[parent] or parent in self._checked:
            return Target(path, size, provider=provider, by_shape=by_shape)
        self._checked.add(parent)
        try:
            mode: int | None = stat.S_IMODE(Path(parent).stat().st_mode)
        except OSError:
            mode = None
        return Target(path, size, parent, mode, provider=provider)

    def targets(self, paths: Sequence[str]) -> Iterator[Target]:
        for path in paths:
            if is_store_url(path):
                if self._stores is None:
                    from .store_walk import StoreWalk  # noqa: PLC0415 - a cycle, and fsspec

                    self._stores = StoreWalk(self._exclude)
                yield from self._stores.targets(path)
            elif Path(path).is_dir():
                yield from self._directory(path)
            else:
                try:
                    size = Path(path).stat().st_size
                except OSError:
                    size = 0
                yield self._target(path, size, str(Path(path).parent), None)

    def _pruned(self, root: str, path: str) -> bool:
        excluded = self._exclude.excludes(root, path, is_directory=True)
        self._excluded += excluded
        return excluded

    def _directory(self, root: str) -> Iterator[Target]:
        for listing in listings(root, prune=lambda path: self._pruned(root, path)):
            if listing.error is not None:
                error = listing.error
                yield Target(listing.directory, 0, listing_error=error.strerror or str(error))
                continue
            names = [e.name for e in listing.entries]
            for entry in listing.entries:
                try:
                    if entry.is_dir(follow_symlinks=False) or not entry.name.endswith(".json"):
                        continue
                    if self._exclude.excludes(root, entry.path, is_directory=False):
                        self._excluded += 1
                        continue
                    # A FIFO, a device or a link to one is a target too: reading it is refused
                    # without blocking and reported (history_unreadable).
                    size = entry.stat(follow_symlinks=False).st_size
                    shape = not is_history_name(entry.name)
                    yield self._target(entry.path, size, listing.directory, names, by_shape=shape)
                except OSError:
                    yield Target(entry.path, 0)


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
    """A file's report with the path and mode it was made for; or, for a file a walk found that
    is not a history, why it was skipped (then its report is empty)."""

    target: Target
    report: FileReport
    file_mode: int | None
    provider: str | None = None  # the file's provider: issuer and target (SPEC P4, H3)
    skipped: str | None = None
    # where each located finding's block is, when the report asked for places (SARIF)
    places: Mapping[BlockKey, BlockPlace] = field(default_factory=dict)

    @property
    def is_session_file(self) -> bool:
        return is_session_file(self.target.path)


def unreadable_result(target: Target, detail: str, provider: str) -> FileResult:
    """The result of a file that could not be read: one ``history_unreadable`` finding (SPEC
    H3), with ``detail`` saying why."""
    finding = Finding(Code.HISTORY_UNREADABLE, detail=detail)
    report = FileReport((finding,), BlockCounts(), False, target.path)
    return FileResult(
        target, report, None, provider if target.provider is None else target.provider
    )


def validate_target(
    target: Target,
    provider: str,
    provider_names: ProviderNames = REGISTRY_ONLY,
    *,
    places: bool = False,
) -> FileResult:
    """Read one file and validate it; an I/O error is a ``history_unreadable`` finding. A file
    found by shape that is not a history is skipped; with ``places``, each located finding's
    block is found in the file's text."""
    if target.listing_error is not None:
        return unreadable_result(target, f"cannot list directory: {target.listing_error}", provider)
    session_only = is_session_file(target.path)
    try:
        if target.remote:  # an object store: bytes, and no mode to check (SPEC H4)
            file_mode = None
            data = b"" if session_only else read_store_file(target.path)
        elif session_only:
            file_mode = stat.S_IMODE(Path(target.path).stat().st_mode)
            data = b""
        else:
            # Without blocking, and only a regular file: a FIFO must not hang the run (H3).
            with open_regular(target.path) as handle:
                file_mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
                data = handle.read()
    except OSError as error:
        return unreadable_result(target, f"cannot read: {error.strerror or error}", provider)
    if target.by_shape:
        problem = history_shape_problem(data)
        if problem is not None:
            empty = FileReport((), BlockCounts(), False, target.path)
            return FileResult(target, empty, file_mode, skipped=f"not a history: {problem}")
    used = provider if target.provider is None else target.provider
    report = validate_history(
        data,
        provider=used,
        file_mode=file_mode,
        directory_mode=target.directory_mode,
        file_name=target.path,
        provider_names=provider_names,
    )
    found: Mapping[BlockKey, BlockPlace] = {}
    if places:
        keys = [key for key in map(block_key, report.findings) if key is not None]
        found = block_places(data, keys) if keys else {}
    return FileResult(target, report, file_mode, None if session_only else used, places=found)


def _validate_chunk(
    chunk: Sequence[Target], provider: str, provider_names: ProviderNames, places: bool
) -> list[FileResult]:
    return [validate_target(target, provider, provider_names, places=places) for target in chunk]


def file_batches(
    targets: Iterable[Target], max_files: int, max_bytes: int
) -> Iterator[list[Target]]:
    """Targets in the walk's order, cut into tasks of ``max_files`` files or about ``max_bytes``
    bytes (a local pool's chunks, a cluster's batches)."""
    batch: list[Target] = []
    size = 0
    for target in targets:
        batch.append(target)
        size += target.size
        if len(batch) >= max_files or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system has one (a
    container or ``taskset`` may allow fewer than the machine has), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def worker_count(jobs: int, batches: int, cpus: int) -> int:
    """How many worker processes ``--jobs jobs`` starts: never more than asked, than usable
    CPUs, or than batches of files to give them (a batch holds at least one file); 1 means none
    (the files are validated in the calling process)."""
    return max(1, min(jobs, cpus, batches))


def validate_all(
    targets: Iterable[Target],
    provider: str,
    jobs: int,
    provider_names: ProviderNames = REGISTRY_ONLY,
    *,
    places: bool = False,
) -> Iterator[FileResult]:
    """Every target's result, in the order of ``targets``, whatever the number of workers.

    With more than one worker (:func:`worker_count`), a process pool validates batches of files;
    at most ``4 * workers`` batches are in flight, so neither the pending files nor the finished
    reports pile up. Only the first ``min(jobs, CPUs)`` batches are read ahead to count them.
    """
    batches = file_batches(targets, _CHUNK_FILES, _CHUNK_BYTES)
    wanted = min(jobs, usable_cpus())
    ahead = list(itertools.islice(batches, wanted)) if wanted > 1 else []
    workers = worker_count(jobs, len(ahead), wanted)
    if workers <= 1:
        for chunk in itertools.chain(ahead, batches):
            for target in chunk:
                yield validate_target(target, provider, provider_names, places=places)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: deque[Future[list[FileResult]]] = deque()
        for chunk in itertools.chain(ahead, batches):
            pending.append(pool.submit(_validate_chunk, chunk, provider, provider_names, places))
            if len(pending) >= 4 * workers:
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


def permission_fixes(result: FileResult) -> dict[Code, Fix]:
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
        if finding.code not in PERMISSION_CODES:
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


def is_fixed(finding: Finding, fixes: dict[Code, Fix]) -> bool:
    fix = fixes.get(finding.code)
    return fix is not None and fix.error is None


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
    walk = _Walk(exclude)
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
