"""Private, atomic history writes (SPEC H4, H5).

A history file holds resumable replay state, which is bearer-capable (SPEC H6), so it is written
so that no other user can ever read it, and so that a crash or a concurrent reader sees either the
complete old file or the complete new one, never a mix, and so that no temporary copy of it
outlives its writer (SPEC H5); how is :mod:`reasoning_replay.atomic_files`'s.

This is the I/O edge of the reference: data is handled elsewhere as values, but here the
operating system can fail, and every function raises :class:`OSError` (or a subclass) when it
does. Nothing is retried and nothing is swallowed except where a comment says why.

POSIX only: modes, ``O_DIRECTORY`` and directory ``fsync`` have no Windows equivalent.

Mode rules, in one place:

==========================  ==============================================================
operation                   resulting mode
==========================  ==============================================================
new file                    ``0o600``, whatever the umask
rewrite of an existing file ``existing & 0o600`` (0644 → 0600, 0400 → 0400; never wider)
copy                        ``src & 0o600``, and also ``& existing`` when ``dst`` exists
new session directory       ``0o700`` (parents created by the call too), whatever the umask
existing session directory  untouched (never widened; tighten with :func:`tighten_mode`)
:func:`tighten_mode`        ``mode & ~0o077``: group and other bits removed, nothing else
==========================  ==============================================================

Special bits (setuid, setgid, sticky) play no part in privacy (SPEC H4 looks at ``0o077``);
:func:`tighten_mode` leaves them alone, and written files never get them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from reasoning_replay.atomic_files import Replacement, existing_mode, replace_file

from .safe_files import NotARegularFileError, open_regular

FILE_MODE: Final = 0o600  # SPEC H4, H5
DIRECTORY_MODE: Final = 0o700  # SPEC H4, H5
GROUP_OTHER_BITS: Final = 0o077  # SPEC H4: none of these may be set
_COPY_CHUNK: Final = 1 << 20


def is_private_file(mode: int) -> bool:
    """SPEC H4: a history file (or ``session.json``) has no group or other permission.

    ``mode`` may be a full ``st_mode``; only the permission bits are looked at.
    """
    return stat.S_IMODE(mode) & GROUP_OTHER_BITS == 0


def is_private_directory(mode: int) -> bool:
    """SPEC H4: a session directory is not accessible to group or others (0700 or stricter)."""
    return stat.S_IMODE(mode) & GROUP_OTHER_BITS == 0


def _rewrite_mode(existing_mode: int | None) -> int:
    """SPEC H5: the mode of a rewritten file: 0600 if new, else the old mode restricted to 0600."""
    if existing_mode is None:
        return FILE_MODE
    return stat.S_IMODE(existing_mode) & FILE_MODE


def write_private_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as SPEC H5 says: atomically, privately, durably, and with no
    temporary file that outlives the write (:mod:`reasoning_replay.atomic_files`).

    The new file's mode is 0600 when ``path`` does not exist, else the old mode restricted to
    0600 (0644 becomes 0600, 0400 stays 0400): a rewrite never widens. A ``path`` that is a
    symbolic link (to anything), a FIFO, a device, a socket or a directory is refused with
    :class:`NotARegularFileError` and left as it is (SPEC H5).

    Raises OSError when the filesystem fails; the target then holds its old content and no
    temporary file is left (a failure of the final directory flush happens after the rename,
    so there the target already holds the new content).
    """
    replace_file(path, data, mode=_rewrite_mode(existing_mode(path)))


def copy_private(src: Path, dst: Path) -> None:
    """Copy a history file as SPEC H5 says for copies and migrations: keep or tighten modes.

    ``dst`` gets ``src``'s mode restricted to 0600, and, when ``dst`` already exists, also
    restricted to its old mode, so the copy is never wider than either: the source 0644 gives
    0600, 0400 gives 0400. It is written atomically like :func:`write_private_atomic`.

    The mode is read from the open source descriptor, so it belongs to the bytes copied. A
    source that is not a regular file (a FIFO would block) and a ``dst`` that is not absent or a
    regular file (:func:`write_private_atomic`) raise :class:`NotARegularFileError`.
    Raises OSError when the filesystem fails.
    """
    with open_regular(src) as handle:
        source = handle.fileno()
        mode = stat.S_IMODE(os.fstat(source).st_mode) & FILE_MODE
        existing = existing_mode(dst)
        if existing is not None:
            mode &= stat.S_IMODE(existing)
        with Replacement(dst, mode=mode) as replacement:
            while chunk := os.read(source, _COPY_CHUNK):
                replacement.write(chunk)


def make_session_directory(path: Path) -> None:
    """Create a session directory with mode 0700, and its missing parents with 0700 too (H5).

    The mode is exact whatever the umask. A directory that already exists (``path`` or a parent)
    is left as it is: never widened, and not tightened either, since that is a fixer's choice
    (:func:`tighten_mode`). Raises FileExistsError when ``path`` exists and is not a directory,
    and OSError when the filesystem fails.
    """
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(DIRECTORY_MODE)
        except FileExistsError:
            if directory.is_dir():
                continue  # created concurrently by someone else: theirs, so left untouched
            raise
        # The umask may have narrowed 0700 (never widened it); make it exact. By path, not by an
        # open descriptor: opening needs read permission, which a umask such as 0o777 removed.
        # lstat first: if the name was swapped for a symlink since mkdir, change nothing.
        mode = directory.lstat().st_mode
        if not stat.S_ISDIR(mode):
            raise FileExistsError(errno.EEXIST, "replaced while being created", str(directory))
        if stat.S_IMODE(mode) != DIRECTORY_MODE:
            directory.chmod(DIRECTORY_MODE)


def tighten_mode(path: Path, *, directory: bool) -> int | None:
    """SPEC H4 fixer: remove group and other permissions from ``path``; never add any.

    Returns the new permission bits, or None when ``path`` was already private (nothing
    changed). Owner and special bits are kept. ``directory`` says what the caller expects
    ``path`` to be; a mismatch raises NotADirectoryError or IsADirectoryError, so a fixer never
    changes what it did not mean to; a file that is not a regular file (a FIFO, a device)
    raises :class:`NotARegularFileError`. A symbolic link is refused (OSError ELOOP), never
    followed: a fixer walking a session directory must not change files outside it.

    The mode is changed through a descriptor opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked
    with ``fstat``, so what was checked is what is changed, whatever is renamed meanwhile.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "refusing to follow a symbolic link", str(path)) from None
        if error.errno != errno.EACCES:
            raise
        # No read permission (a non-root owner of a 0200 file): change the mode by name, but
        # never through a link; where the platform cannot promise that, nothing is changed.
        return _tighten_by_name(path, directory=directory)
    try:
        mode = os.fstat(fd).st_mode
        tightened = _tightened(path, mode, directory=directory)
        if tightened is not None:
            os.fchmod(fd, tightened)
        return tightened
    finally:
        os.close(fd)


def _tightened(path: Path, mode: int, *, directory: bool) -> int | None:
    """The mode :func:`tighten_mode` gives a file of ``mode``, None when nothing changes."""
    if stat.S_ISLNK(mode):
        raise OSError(errno.ELOOP, "refusing to follow a symbolic link", str(path))
    if directory and not stat.S_ISDIR(mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    if not directory and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not directory and not stat.S_ISREG(mode):
        raise NotARegularFileError(path, mode)
    permissions = stat.S_IMODE(mode)
    if permissions & GROUP_OTHER_BITS == 0:
        return None
    return permissions & ~GROUP_OTHER_BITS


def _tighten_by_name(path: Path, *, directory: bool) -> int | None:
    tightened = _tightened(path, path.lstat().st_mode, directory=directory)
    if tightened is not None:
        try:
            os.chmod(path, tightened, follow_symlinks=False)  # noqa: PTH101 (Path has no nofollow)
        except NotImplementedError:
            raise OSError(
                errno.EPERM, "cannot change the mode without opening it", str(path)
            ) from None
    return tightened
