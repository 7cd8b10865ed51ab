"""Private, atomic history writes (SPEC H4, H5).

A history file holds resumable replay state, which is bearer-capable (SPEC H6), so it is written
so that no other user can ever read it, and so that a crash or a concurrent reader sees either the
complete old file or the complete new one, never a mix (SPEC H5).

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

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

from .safe_files import NotARegularFileError, open_regular

FILE_MODE: Final = 0o600  # SPEC H4, H5
DIRECTORY_MODE: Final = 0o700  # SPEC H4, H5
GROUP_OTHER_BITS: Final = 0o077  # SPEC H4: none of these may be set
TEMP_SUFFIX: Final = ".tmp"
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


def _existing_mode(path: Path) -> int | None:
    """The mode of the regular file at ``path``, None when absent; anything else is refused.

    lstat, not stat: a symbolic link is never followed, and never replaced either (a rename over
    it would drop what the user linked to). Raises :class:`NotARegularFileError` for a link, a
    FIFO, a device, a socket or a directory: a rename would replace it (SPEC H5).
    """
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(path, mode)
    return mode


def temporary_name(path: Path) -> Path:
    """A fresh temporary path next to ``path``: ``.{name}.{random}.tmp``.

    Same directory, so the final rename never crosses a filesystem (SPEC H5). The leading dot and
    the ``.tmp`` suffix keep a temporary file left by a killed writer from ever matching a
    history file name (``history_*.json``, ``compacted_*.json``, ``session.json``, SPEC H1).
    """
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}{TEMP_SUFFIX}")


def temporary_files_for(path: Path) -> tuple[Path, ...]:
    """Temporary files a killed writer of ``path`` left behind, for a cleaner to remove.

    A SIGKILL or a power cut between creating and renaming the temporary file leaves it behind;
    no writer can prevent that. It is private (0600 or stricter) and never taken for the target.
    """
    pattern = re.compile(
        r"\." + re.escape(path.name) + r"\.[0-9a-f]{16}" + re.escape(TEMP_SUFFIX) + r"\Z"
    )
    try:
        entries = tuple(path.parent.iterdir())
    except FileNotFoundError:
        return ()
    return tuple(sorted(entry for entry in entries if pattern.match(entry.name)))


def _write_all(fd: int, data: bytes | memoryview) -> None:
    # os.write may write less than asked (signals, pipes, quotas): loop until all is written.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_directory(directory: Path) -> None:
    """Flush a directory entry change (the rename) to storage (SPEC H5)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as error:
        # Some filesystems cannot sync a directory and say so with EINVAL; nothing better exists.
        if error.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


def _replace_atomically(path: Path, mode: int, fill: Callable[[int], None]) -> None:
    """SPEC H5 steps: create exclusively at 0600, write, flush, rename over, flush the directory.

    ``fill`` writes the content to the temporary file's descriptor. On any failure before the
    rename the temporary file is removed and the error propagates; the target is untouched.
    """
    temporary = temporary_name(path)
    # O_EXCL: never reuse or follow anything already at the name (a planted symlink included).
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    renamed = False
    try:
        try:
            # The umask can only narrow 0600 at creation; fchmod makes the mode exact, before any
            # byte is written, and the open descriptor keeps write access even for 0400.
            os.fchmod(fd, mode)
            fill(fd)
            os.fsync(fd)  # data and mode on storage before the rename makes them visible
        finally:
            os.close(fd)
        _existing_mode(path)  # checked again just before the rename: still absent or regular
        temporary.replace(path)  # rename(2): atomic within one filesystem
        renamed = True
        _fsync_directory(path.parent)
    except BaseException:
        # BaseException too: a KeyboardInterrupt mid-write must not leave the temporary file.
        if not renamed:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        raise


def write_private_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as SPEC H5 says: atomically, privately, durably.

    The new file's mode is 0600 when ``path`` does not exist, else the old mode restricted to
    0600 (0644 becomes 0600, 0400 stays 0400): a rewrite never widens. A ``path`` that is a
    symbolic link (to anything), a FIFO, a device, a socket or a directory is refused with
    :class:`NotARegularFileError` and left as it is (SPEC H5).

    Raises OSError when the filesystem fails; the target then holds its old content and no
    temporary file is left (a failure of the final directory flush happens after the rename,
    so there the target already holds the new content).
    """
    _replace_atomically(path, _rewrite_mode(_existing_mode(path)), lambda fd: _write_all(fd, data))


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
        existing = _existing_mode(dst)
        if existing is not None:
            mode &= stat.S_IMODE(existing)

        def fill(fd: int) -> None:
            while chunk := os.read(source, _COPY_CHUNK):
                _write_all(fd, chunk)

        _replace_atomically(dst, mode, fill)


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
