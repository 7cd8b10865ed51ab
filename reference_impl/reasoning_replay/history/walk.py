"""The walk of a ``validate`` run (SPEC H1, H3): the files to validate, in a deterministic order.

Which files are histories. A file named on the command line is always validated. A directory is
walked recursively for ``*.json`` files, less those ``exclude`` matches
(:mod:`reasoning_replay.history.path_patterns`); of those, a file named as SPEC H1 names a
session directory's files (``history_*.json``, ``compacted_*.json``; ``session.json``, checked for
permissions only) is validated, and any other is validated only if its shape is a history's: a
JSON object with a member ``messages`` (an export, a saved copy). Any other JSON file
(``package.json``, a generated corpus, a file that is not JSON at all) is skipped: listed with
the reason and counted, never a finding.

The session directory of a file is
its parent when that directory holds ``session.json`` or a ``history_*.json`` file; its mode is
checked once, with the first of its files, and the provider of each of its history files is read
from its ``session.json`` where that records one (SPEC H3, P4).

A path may also be an fsspec URL (``s3://bucket/sessions``, ``memory://...``): the store is walked
by the same rules (:mod:`reasoning_replay.history.store_walk`), its files are read through fsspec,
and they have no POSIX modes, so their permissions are counted as not checked (SPEC H4).
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from reasoning_replay.history.file_results import Target
from reasoning_replay.history.path_patterns import ExcludePatterns
from reasoning_replay.history.safe_files import listings
from reasoning_replay.history.session_files import (
    SESSION_FILE_NAME,
    is_history_name,
    is_session_dir,
    provider_of_file,
    read_session_providers,
)
from reasoning_replay.history.store_urls import is_store_url

if TYPE_CHECKING:
    from reasoning_replay.history.store_walk import StoreWalk

NO_EXCLUSIONS: Final = ExcludePatterns()


class Walk:
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
                self._providers[parent] = read_session_providers(parent)
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
                    from .store_walk import StoreWalk  # noqa: PLC0415 - fsspec, only for a URL

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
