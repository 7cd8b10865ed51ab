"""Files replaced whole or not at all, whose temporary file never outlives its writer (SPEC H5).

A writer puts the new content in a temporary file in the target's directory and renames it over
the target, so that a reader, or a crash at any moment, sees the complete old file or the
complete new one. What a killed writer must not leave behind is the temporary file itself: for a
history it is a copy of a bearer secret (SPEC §16), and nothing would ever remove it. So:

- where Linux offers ``O_TMPFILE`` (and ``/proc/self/fd`` to name such a file), the temporary
  file has no name until it is complete. It is then linked in as the target itself when there
  is no target, else under a temporary name that the rename takes away a few system calls
  later. A crash before the link leaves nothing at all.
- elsewhere (another system, a filesystem without ``O_TMPFILE``) it is created under its
  temporary name, ``.{target name}.{16 hexadecimal digits}.tmp``.
- either way its writer holds an ``flock`` on it from before it has a name until after the
  rename, and each write first removes the temporary files of its target's name whose lock is
  free: their writer has ended. Nothing else is ever removed: not another target's temporary
  files, not a file whose lock is held, not a link or anything but a regular file.

A target must be absent or a regular file: a symbolic link (to anything), a FIFO, a device, a
socket or a directory is refused with :class:`NotARegularFileError` and left as it is, when the
write starts and again just before the rename, since a rename would replace it.

POSIX only (modes, ``flock``, directory ``fsync``). Every function raises :class:`OSError` (or a
subclass) when the operating system fails; nothing is retried except where a comment says why.
Limits: ``flock`` on a network filesystem may be emulated or missing; a temporary file whose
lock cannot be taken for that reason, or that its owner cannot open (a rewrite to mode 0000), is
left where it is rather than removed without proof that its writer has ended.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import stat
import threading
from pathlib import Path
from types import TracebackType
from typing import Final

from reasoning_replay.file_kinds import NotARegularFileError

TEMP_SUFFIX: Final = ".tmp"
NEW_FILE_MODE: Final = 0o666  # what open() creates, less the umask: files that hold no secret
PERMISSION_BITS: Final = 0o777  # a replacement never carries setuid, setgid or sticky bits
_TOKEN_BYTES: Final = 8
_PROC_FD: Final = "/proc/self/fd"
# O_TMPFILE refused by the filesystem (EOPNOTSUPP), or unknown to an old kernel (EISDIR, EINVAL)
_NO_TMPFILE: Final = frozenset((errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL))
_CREATE_ATTEMPTS: Final = 16  # fresh names for a named temporary file (see _create_named)

# The temporary names this process is writing: its own sweeps never take them for abandoned
# (where flock is emulated by per-process locks, a thread would not see another one's lock).
_writing: set[str] = set()
_writing_lock = threading.Lock()


def existing_mode(path: Path) -> int | None:
    """The ``st_mode`` of the regular file at ``path``, None when nothing is there.

    lstat, not stat: a symbolic link is never followed, and never replaced either (a rename over
    it would drop what the user linked to). Raises :class:`NotARegularFileError` for a link, a
    FIFO, a device, a socket or a directory (SPEC H5).
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
    the ``.tmp`` suffix keep a temporary file from ever matching a history file name
    (``history_*.json``, ``compacted_*.json``, ``session.json``, SPEC H1).
    """
    return path.with_name(f".{path.name}.{secrets.token_hex(_TOKEN_BYTES)}{TEMP_SUFFIX}")


def _temporary_pattern(path: Path) -> re.Pattern[str]:
    hex_digits = 2 * _TOKEN_BYTES
    return re.compile(
        rf"\.{re.escape(path.name)}\.[0-9a-f]{{{hex_digits}}}{re.escape(TEMP_SUFFIX)}\Z"
    )


def temporary_files_for(path: Path) -> tuple[Path, ...]:
    """Every temporary file of ``path``'s name in its directory, in name order: those being
    written now and those a killed writer left (:func:`sweep_temporary_files` tells them apart)."""
    pattern = _temporary_pattern(path)
    try:
        with os.scandir(path.parent) as entries:
            names = [entry.name for entry in entries if pattern.match(entry.name)]
    except FileNotFoundError:
        return ()
    return tuple(path.parent / name for name in sorted(names))


def sweep_temporary_files(path: Path) -> int:
    """Remove the temporary files of ``path``'s name whose writer has ended; how many.

    A writer holds an ``flock`` on its temporary file until it has renamed it, so a free lock
    is proof that no writer will rename that file any more. A file this process is writing, a
    file whose lock is held, and anything that is not a regular file are left alone.
    """
    removed = 0
    for temporary in temporary_files_for(path):
        with _writing_lock:
            ours = os.fspath(temporary) in _writing
        if not ours and _remove_if_abandoned(temporary):
            removed += 1
    return removed


def _remove_if_abandoned(temporary: Path) -> bool:
    fd = _open_for_lock(temporary)
    if fd is None:
        return False
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # held (its writer runs), or no locking here: no proof, left alone
        try:
            now = temporary.lstat()
        except FileNotFoundError:
            return False
        if (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
            return False  # renamed away and the name reused meanwhile: not the file we locked
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        return True
    finally:
        os.close(fd)


def _open_for_lock(temporary: Path) -> int | None:
    """A descriptor to lock ``temporary`` through (read, else write access: a rewrite of a
    0200 file leaves one); None when it is gone, a link, or cannot be opened at all."""
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    for access in (os.O_RDONLY, os.O_WRONLY):
        try:
            return os.open(temporary, access | flags)
        except PermissionError:
            continue
        except OSError:
            return None
    return None


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    # os.write may write less than asked (signals, quotas): loop until all is written.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_directory(directory: Path) -> None:
    """Flush a directory entry change (a rename, a link) to storage (SPEC H5)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as error:
        # Some filesystems cannot sync a directory and say so with EINVAL; nothing better exists.
        if error.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


def _link(fd: int, name: Path) -> None:
    """Give the unnamed file open at ``fd`` the name ``name`` (FileExistsError if taken)."""
    # linkat(2) with AT_SYMLINK_FOLLOW links the file /proc/self/fd/N stands for. Python calls
    # plain link(2), which would link the magic link itself, unless a directory fd is given.
    directory = os.open(name.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.link(f"{_PROC_FD}/{fd}", name.name, dst_dir_fd=directory, follow_symlinks=True)
    finally:
        os.close(directory)


def _create_unnamed(directory: Path, mode: int) -> int | None:
    """An unnamed file in ``directory``, locked; None where the system cannot make one."""
    if not hasattr(os, "O_TMPFILE") or not Path(_PROC_FD).is_dir():
        return None
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno in _NO_TMPFILE:
            return None
        raise
    _lock(fd)  # nobody else knows of this file yet (its failure is _lock's to judge)
    return fd


def _lock(fd: int) -> bool:
    """Take the writer's lock on its temporary file; False when another holder has it.

    Where the filesystem has no locks (ENOLCK, EOPNOTSUPP: some network filesystems), the
    write goes on without one: no sweep can take a lock there either, so none removes the file.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def _create_named(path: Path, mode: int) -> tuple[int, Path]:
    """A new temporary file of ``path``'s name, locked, and its name (already registered).

    Between its creation and its lock, another writer's sweep may take it for abandoned; that
    is seen (the lock is refused, or the name no longer leads to it) and a fresh name is tried.
    """
    for _ in range(_CREATE_ATTEMPTS):
        temporary = temporary_name(path)
        with _writing_lock:
            _writing.add(os.fspath(temporary))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            # O_EXCL: never reuse or follow anything already at the name (a planted link).
            fd = os.open(temporary, flags, mode)
        except FileExistsError:
            _forget(temporary)
            continue
        except BaseException:
            _forget(temporary)
            raise
        try:
            if _lock(fd):
                status, now = os.fstat(fd), temporary.lstat()
                if (status.st_dev, status.st_ino) == (now.st_dev, now.st_ino):
                    return fd, temporary
        except FileNotFoundError:
            pass  # a sweep has removed it
        except BaseException:
            os.close(fd)
            _forget(temporary)
            raise
        os.close(fd)
        _forget(temporary)
    raise FileExistsError(errno.EEXIST, "no fresh temporary name could be created", str(path))


def _forget(temporary: Path) -> None:
    with _writing_lock:
        _writing.discard(os.fspath(temporary))


class Replacement:
    """The new content of ``path``, written to a temporary file and put in place by
    :meth:`commit`; :meth:`discard` (or an exception in a ``with`` block) leaves ``path`` as it
    was and no temporary file behind.

    ``mode`` is the new file's permission bits, exactly, whatever the umask; the temporary file
    is created 0600 and gets ``mode`` before any byte is written. ``None`` means a file that holds
    no secret: the target's current permission bits, or, for a new file, 0666 less the umask.
    """

    def __init__(self, path: Path, *, mode: int | None = None) -> None:
        self.path = path
        existing = existing_mode(path)
        sweep_temporary_files(path)
        create_mode = NEW_FILE_MODE if mode is None else 0o600
        self._temporary: Path | None = None
        fd = _create_unnamed(path.parent, create_mode)
        if fd is None:
            fd, self._temporary = _create_named(path, create_mode)
        self._fd: int | None = fd
        try:
            final = mode if mode is not None or existing is None else stat.S_IMODE(existing)
            if final is not None:
                # The umask can only narrow the mode at creation; fchmod makes it exact before
                # any byte is written, and the open descriptor keeps write access even for 0400.
                os.fchmod(fd, final & PERMISSION_BITS)
        except BaseException:
            self.discard()
            raise

    def fileno(self) -> int:
        if self._fd is None:
            raise ValueError("the replacement is already committed or discarded")
        return self._fd

    def write(self, data: bytes | bytearray | memoryview) -> None:
        _write_all(self.fileno(), data)

    def commit(self) -> None:
        """Flush the content to storage and put it in place of ``path`` (SPEC H5).

        Raises :class:`NotARegularFileError` when something other than a regular file has
        appeared at ``path`` meanwhile, and OSError when the filesystem fails; either way
        ``path`` keeps its old content and the temporary file is removed. A failure of the
        final directory flush comes after the rename: ``path`` then holds the new content.
        """
        fd = self.fileno()
        try:
            os.fsync(fd)  # data and mode on storage before a name makes them visible
            if self._temporary is not None or not self._link_as_target(fd):
                if self._temporary is None:
                    self._temporary = self._link_under_temporary_name(fd)
                existing_mode(self.path)  # checked again just before the rename
                self._temporary.replace(self.path)  # rename(2): atomic in one filesystem
                _forget(self._temporary)
                self._temporary = None  # the rename took the name away
        except BaseException:
            self.discard()
            raise
        self._close(remove=False)
        fsync_directory(self.path.parent)

    def _link_as_target(self, fd: int) -> bool:
        """Name the unnamed file ``path`` itself when nothing is there: no temporary name ever
        exists. False when something is (linkat never replaces, nor follows a link there)."""
        if existing_mode(self.path) is not None:
            return False
        try:
            _link(fd, self.path)
        except FileExistsError:
            return False
        return True

    def _link_under_temporary_name(self, fd: int) -> Path:
        for _ in range(_CREATE_ATTEMPTS):
            temporary = temporary_name(self.path)
            with _writing_lock:
                _writing.add(os.fspath(temporary))
            try:
                _link(fd, temporary)
            except FileExistsError:
                _forget(temporary)
                continue
            except BaseException:
                _forget(temporary)
                raise
            return temporary
        raise FileExistsError(errno.EEXIST, "no fresh temporary name", str(self.path))

    def discard(self) -> None:
        """Leave ``path`` as it was and remove the temporary file (idempotent)."""
        self._close(remove=True)

    def _close(self, *, remove: bool) -> None:
        temporary, self._temporary = self._temporary, None
        try:
            if remove and temporary is not None:
                with contextlib.suppress(FileNotFoundError):
                    temporary.unlink()
        finally:
            if temporary is not None:
                _forget(temporary)
            fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)  # the lock goes with it, after the name is gone

    def __enter__(self) -> Replacement:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def replace_file(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` whole or not at all (see :class:`Replacement` for ``mode``)."""
    with Replacement(path, mode=mode) as replacement:
        replacement.write(data)
