"""The walk of a store named by an fsspec URL (SPEC H1, H3): the rules of the local walk.

A store is walked as :class:`reasoning_replay.history.walk.Walk` walks a directory, so that
one set of files gives one report wherever it is kept: directories depth first, entries in name
order, a directory's files before its subdirectories; ``*.json`` files named as SPEC H1 names a
session directory's files are histories (``session.json`` for its permissions only), any other
``*.json`` file only by its shape (decided where it is read); ``--exclude`` patterns match paths
relative to the URL given; a directory holding ``session.json`` or a ``history_*.json`` file is a
session directory, and its ``session.json`` gives its files' providers (SPEC H3, P4). A URL that
names a file is always validated.

What differs is what a store has: no POSIX modes (SPEC H4: permissions not checked, and counted
as such in the report), no links, no FIFOs. Each file is named by the URL given joined with its
path below it (``s3://bucket/sessions`` + ``s1/history_dev.json``). Only listings and
``session.json`` files are read here; the files themselves are read where they are validated.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from reasoning_replay.history.file_results import Target
from reasoning_replay.history.path_patterns import ExcludePatterns
from reasoning_replay.history.session_files import (
    SESSION_FILE_MAX_BYTES,
    SESSION_FILE_NAME,
    is_history_name,
    is_session_dir,
    provider_of_file,
    session_providers,
)
from reasoning_replay.history.store_urls import open_store


def _name(entry: Mapping[str, Any]) -> str:
    return posixpath.basename(str(entry["name"]).rstrip("/"))


class StoreWalk:
    """Targets of the URLs of a run, with what ``--exclude`` left out."""

    def __init__(self, exclude: ExcludePatterns) -> None:
        self._exclude = exclude
        self._providers: dict[str, Mapping[str, str]] = {}
        self.excluded = 0

    def targets(self, url: str) -> Iterator[Target]:
        """Every file of ``url`` to validate, as the local walk finds a directory's."""
        fs, root = open_store(url)
        prefix = url.rstrip("/")
        root = root.rstrip("/") or root
        if fs.isdir(root):
            yield from self._directory(fs, root, prefix)
            return
        size = int(fs.size(root) or 0)
        parent = posixpath.dirname(root)
        try:
            names = [_name(e) for e in fs.ls(parent, detail=True)]
        except Exception:  # no listing: no session directory, no provider
            names = []
        yield self._target(fs, url, size, parent, names, by_shape=False)

    def _target(
        self, fs: Any, url: str, size: int, parent: str, names: list[str], *, by_shape: bool
    ) -> Target:
        if parent not in self._providers:
            in_session = is_session_dir(names) and SESSION_FILE_NAME in names
            self._providers[parent] = _session_providers(fs, parent) if in_session else {}
        provider = provider_of_file(posixpath.basename(url), self._providers[parent])
        return Target(url, size, provider=provider, by_shape=by_shape, remote=True)

    def _directory(self, fs: Any, root: str, prefix: str) -> Iterator[Target]:
        def url_of(path: str) -> str:
            return prefix + "/" + posixpath.relpath(path, root)

        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                listed = fs.ls(directory, detail=True)
            except Exception as error:  # reported, never skipped (SPEC H3)
                shown = prefix if directory == root else url_of(directory)
                reason = f"{type(error).__name__}: {error}"
                yield Target(shown, 0, listing_error=reason, remote=True)
                continue
            entries = sorted(
                (e for e in listed if str(e["name"]).rstrip("/") != directory),
                key=_name,
            )
            names = [_name(e) for e in entries]
            subdirectories = []
            for entry in entries:
                path = str(entry["name"]).rstrip("/")
                if entry.get("type") == "directory":
                    if self._exclude.excludes(root, path, is_directory=True):
                        self.excluded += 1
                    else:
                        subdirectories.append(path)
                    continue
                name = _name(entry)
                if not name.endswith(".json"):
                    continue
                if self._exclude.excludes(root, path, is_directory=False):
                    self.excluded += 1
                    continue
                size = int(entry.get("size") or 0)
                by_shape = not is_history_name(name)
                yield self._target(fs, url_of(path), size, directory, names, by_shape=by_shape)
            stack.extend(reversed(subdirectories))


def _session_providers(fs: Any, directory: str) -> Mapping[str, str]:
    """What a store's ``session.json`` records (as the local walk reads it); an empty mapping
    when it cannot be read or says nothing usable (then ``--provider`` applies)."""
    path = posixpath.join(directory, SESSION_FILE_NAME)
    try:
        if int(fs.size(path) or 0) > SESSION_FILE_MAX_BYTES:
            return {}
        return session_providers(json.loads(fs.cat_file(path)))
    except Exception:  # any store error: nothing recorded, as locally
        return {}
