"""The validation of one file of a ``validate`` run (SPEC H3, H4): a :class:`Target` the walk
found, read and validated into a :class:`FileResult`; this runs in workers.

Files are read without blocking and only when regular (a FIFO is ``history_unreadable``, never a
hang); a file of an fsspec store is read through fsspec and has no mode to check (SPEC H4).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.finding_places import BlockKey, BlockPlace, block_key, block_places
from reasoning_replay.history.history_files import history_shape_problem
from reasoning_replay.history.safe_files import open_regular
from reasoning_replay.history.session_files import is_session_file
from reasoning_replay.history.store_urls import read_store_file
from reasoning_replay.history.validation import (
    BlockCounts,
    FileReport,
    Finding,
    validate_history,
)
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames


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
