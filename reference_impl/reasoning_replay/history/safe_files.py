"""Opening the files a command line names without harm (SPEC H4, H5): no hang, no link write.

The history tools read and write paths that users, scripts and pre-commit hooks give them, and
a path may name a FIFO (reading blocks until a writer comes), a device, a socket, or a symbolic
link to any of these. This module is the I/O edge that tells them apart: files are opened
without blocking (``O_NONBLOCK``) and looked at through the open descriptor (``fstat``), so what
is checked is what is read; outputs are looked at with ``lstat``, so a link is seen as a link.

Every function raises :class:`OSError` (or a subclass) when the operating system fails.
POSIX only, like :mod:`reasoning_replay.history.persistence`.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# Re-exported: the history tools name the error from here, where files are opened.
from reasoning_replay.file_kinds import NotARegularFileError as NotARegularFileError  # noqa: PLC0414
from reasoning_replay.file_kinds import kind_of

_READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def open_regular(path: Path | str) -> io.BufferedReader:
    """Open ``path`` for reading, following links, and refuse what is not a regular file.

    ``O_NONBLOCK`` keeps a FIFO without a writer from blocking the open; the kind is taken
    from the open descriptor, so no swap between a check and the open can fool it. For regular
    files ``O_NONBLOCK`` changes nothing. Raises :class:`NotARegularFileError` for a FIFO, a
    device, a socket or a directory, and OSError when the file cannot be opened.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file (:func:`open_regular`) and its status, from one descriptor."""
    with open_regular(path) as handle:
        status = os.fstat(handle.fileno())
        return handle.read(), status


def output_problem(path: Path, inputs: tuple[os.stat_result, ...] = ()) -> str | None:
    """Why ``path`` must not be written as an output, or None when it may be.

    An output may be absent or an existing regular file that is none of ``inputs`` (compared
    by device and inode, so a hard link or a link to an input is caught). Anything else (a
    symbolic link to anything, a FIFO, a device, a socket, a directory) is refused: writing
    would replace it, or block, or write through the link to a file the user did not name.
    """
    try:
        status = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return f"it is {kind_of(status.st_mode)}, not a regular file"
    if any((status.st_dev, status.st_ino) == (s.st_dev, s.st_ino) for s in inputs):
        return "it is the input file"
    return None


@dataclass(frozen=True, slots=True)
class Listing:
    """One directory of a walk: its entries sorted by name, or why it could not be listed."""

    directory: str
    entries: tuple[os.DirEntry[str], ...] = ()
    error: OSError | None = None


def listings(root: str, prune: Callable[[str], bool] | None = None) -> Iterator[Listing]:
    """Every directory under ``root`` (itself first), depth first in name order, each listed
    once. A symbolic link to a directory is an entry, never descended into: no loop, nothing
    outside the tree. A directory that cannot be listed is yielded with its error, so that a
    caller reports it rather than skipping it (a leak scan fails closed, SPEC H8). A
    subdirectory for whose path ``prune`` is true is neither listed nor descended into."""
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = tuple(sorted(listing, key=lambda entry: entry.name))
        except OSError as error:
            yield Listing(directory, error=error)
            continue
        yield Listing(directory, entries)
        subdirectories = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False) and not (prune and prune(entry.path)):
                    subdirectories.append(entry.path)
            except OSError:
                continue  # the caller meets the same error on this entry and reports it
        stack.extend(reversed(subdirectories))
