"""Private, atomic history writes (SPEC H4, H5): modes, never widening, cleanup, atomicity."""

from __future__ import annotations

import errno
import fnmatch
import importlib
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest
from reasoning_replay.atomic_files import temporary_files_for, temporary_name
from reasoning_replay.history.persistence import (
    copy_private,
    is_private_directory,
    is_private_file,
    make_session_directory,
    tighten_mode,
    write_private_atomic,
)
from reasoning_replay.history.safe_files import NotARegularFileError

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
UMASKS = (0o000, 0o022, 0o077, 0o277)


@contextmanager
def _umask(value: int) -> Iterator[None]:
    previous = os.umask(value)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _entries(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


# --- predicates (H4) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "private"),
    [
        (0o100600, True),
        (0o100400, True),
        (0o100700, True),  # H4 looks at group and other bits only
        (0o100000, True),
        (0o100640, False),
        (0o100604, False),
        (0o100660, False),
        (0o600, True),
        (0o644, False),
    ],
)
def test_is_private_file(mode: int, private: bool) -> None:
    assert is_private_file(mode) is private


@pytest.mark.parametrize(
    ("mode", "private"),
    [(0o40700, True), (0o40500, True), (0o40711, False), (0o40750, False), (0o41700, True)],
)
def test_is_private_directory(mode: int, private: bool) -> None:
    assert is_private_directory(mode) is private


# --- new files and rewrites (H5) ---------------------------------------------------------------


@pytest.mark.parametrize("umask", UMASKS)
def test_a_new_file_is_0600_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "history_a.json"
    with _umask(umask):
        write_private_atomic(target, b'{"messages": []}')
    assert target.read_bytes() == b'{"messages": []}'
    assert _mode(target) == 0o600
    assert _entries(tmp_path) == ["history_a.json"]


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        (0o644, 0o600),
        (0o666, 0o600),
        (0o640, 0o600),
        (0o755, 0o600),
        (0o600, 0o600),
        (0o400, 0o400),
        (0o200, 0o200),
        (0o000, 0o000),
    ],
)
@pytest.mark.parametrize("umask", (0o000, 0o022))
def test_a_rewrite_never_widens_the_mode(
    tmp_path: Path, existing: int, expected: int, umask: int
) -> None:
    target = tmp_path / "history_a.json"
    target.write_bytes(b"old")
    target.chmod(existing)
    with _umask(umask):
        write_private_atomic(target, b"new")
    assert _mode(target) == expected
    assert expected & ~existing == 0  # no bit the old file lacked
    assert is_private_file(target.stat().st_mode)
    target.chmod(0o600)
    assert target.read_bytes() == b"new"


def test_a_rewrite_replaces_the_file_rather_than_writing_into_it(tmp_path: Path) -> None:
    target = tmp_path / "history_a.json"
    write_private_atomic(target, b"old content, longer than the new")
    with target.open("rb") as reader:  # a reader that opened the old file keeps reading it
        old_inode = os.fstat(reader.fileno()).st_ino
        write_private_atomic(target, b"new")
        assert reader.read() == b"old content, longer than the new"
    assert target.stat().st_ino != old_inode
    assert target.read_bytes() == b"new"
    assert _entries(tmp_path) == ["history_a.json"]


def test_a_symlinked_target_is_refused_and_left_alone(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b"theirs")
    elsewhere.chmod(0o644)
    target = tmp_path / "history_a.json"
    target.symlink_to(elsewhere)
    with pytest.raises(NotARegularFileError, match="symbolic link"):
        write_private_atomic(target, b"ours")
    assert target.is_symlink()
    assert elsewhere.read_bytes() == b"theirs"
    assert _mode(elsewhere) == 0o644
    assert _entries(tmp_path) == ["elsewhere.json", "history_a.json"]


def test_a_fifo_or_directory_target_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    fifo = tmp_path / "history_fifo.json"
    os.mkfifo(fifo)
    directory = tmp_path / "history_dir.json"
    directory.mkdir()
    for target in (fifo, directory):
        with pytest.raises(NotARegularFileError):
            write_private_atomic(target, b"ours")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert list(directory.iterdir()) == []
    assert _entries(tmp_path) == ["history_dir.json", "history_fifo.json"]


def test_a_target_swapped_for_a_symlink_before_the_rename_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "history_a.json"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b"theirs")
    real_fsync = os.fsync

    def swap_then_fsync(fd: int) -> None:
        real_fsync(fd)
        if not target.is_symlink():
            target.symlink_to(elsewhere)  # an attacker's link, planted mid-write

    monkeypatch.setattr(os, "fsync", swap_then_fsync)
    with pytest.raises(NotARegularFileError):
        write_private_atomic(target, b"ours")
    assert target.is_symlink() and elsewhere.read_bytes() == b"theirs"
    assert temporary_files_for(target) == ()


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def short_write(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data[:1000]))

    monkeypatch.setattr(os, "write", short_write)
    data = bytes(range(256)) * 100
    target = tmp_path / "history_a.json"
    write_private_atomic(target, data)
    assert target.read_bytes() == data


# --- failures leave the old file and no temporary file ----------------------------------------


@pytest.mark.parametrize("fails", ["write", "fsync", "replace", "interrupt"])
def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: str
) -> None:
    target = tmp_path / "history_a.json"
    write_private_atomic(target, b"old")
    real_write = os.write
    raised: type[BaseException] = OSError

    def failing_write(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data[:2]))  # part of the new content reaches the temporary file
        raise OSError(errno.ENOSPC, "No space left on device")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    def failing_replace(self: Path, other: Path) -> Path:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    def interrupted_write(fd: int, data: bytes | memoryview) -> int:
        raise KeyboardInterrupt

    if fails == "write":
        monkeypatch.setattr(os, "write", failing_write)
    elif fails == "fsync":
        monkeypatch.setattr(os, "fsync", failing_fsync)
    elif fails == "replace":
        monkeypatch.setattr(Path, "replace", failing_replace)
    else:
        monkeypatch.setattr(os, "write", interrupted_write)
        raised = KeyboardInterrupt

    with pytest.raises(raised):
        write_private_atomic(target, b"new content")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert _entries(tmp_path) == ["history_a.json"]


def test_a_missing_directory_raises_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_private_atomic(tmp_path / "gone" / "history_a.json", b"{}")
    assert _entries(tmp_path) == []


def test_a_directory_removed_mid_write_raises_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "session"
    make_session_directory(session)
    real_fsync = os.fsync

    def fsync_then_lose_directory(fd: int) -> None:
        real_fsync(fd)
        for entry in session.iterdir():
            entry.unlink()
        session.rmdir()

    monkeypatch.setattr(os, "fsync", fsync_then_lose_directory)
    with pytest.raises(FileNotFoundError):
        write_private_atomic(session / "history_a.json", b"{}")
    assert _entries(tmp_path) == []


# --- temporary names --------------------------------------------------------------------------


def test_temporary_names_are_fresh_hidden_and_never_history_names(tmp_path: Path) -> None:
    target = tmp_path / "history_a.json"
    names = {temporary_name(target) for _ in range(100)}
    assert len(names) == 100
    for name in names:
        assert name.parent == tmp_path
        assert name.name.startswith(".history_a.json.") and name.name.endswith(".tmp")
        for pattern in ("history_*.json", "compacted_*.json", "session.json", "*.json"):
            assert not fnmatch.fnmatchcase(name.name, pattern)


def test_temporary_files_for_finds_only_the_targets_leftovers(tmp_path: Path) -> None:
    target = tmp_path / "history_a.json"
    leftover = temporary_name(target)
    leftover.write_bytes(b"{")
    temporary_name(tmp_path / "history_b.json").write_bytes(b"{")
    (tmp_path / ".history_a.json.nothex.tmp").write_bytes(b"{")
    assert temporary_files_for(target) == (leftover,)
    assert temporary_files_for(tmp_path / "missing" / "history_a.json") == ()


# --- session directories ----------------------------------------------------------------------


@pytest.mark.parametrize("umask", (*UMASKS, 0o777))
def test_session_directories_and_their_parents_are_0700(tmp_path: Path, umask: int) -> None:
    session = tmp_path / "a" / "b" / "session"
    with _umask(umask):
        make_session_directory(session)
    for directory in (tmp_path / "a", tmp_path / "a" / "b", session):
        assert directory.is_dir()
        assert _mode(directory) == 0o700


@pytest.mark.parametrize("existing", [0o755, 0o750, 0o700, 0o500, 0o711])
def test_an_existing_directory_is_left_as_it_is(tmp_path: Path, existing: int) -> None:
    parent = tmp_path / "sessions"
    parent.mkdir()
    parent.chmod(existing)
    try:
        make_session_directory(parent)
        assert _mode(parent) == existing
        if existing & 0o300 == 0o300:  # the owner can create entries in it
            make_session_directory(parent / "session")
            assert _mode(parent) == existing
            assert _mode(parent / "session") == 0o700
    finally:
        parent.chmod(0o700)


def test_a_file_in_the_way_of_a_session_directory_raises(tmp_path: Path) -> None:
    (tmp_path / "session").write_bytes(b"")
    with pytest.raises(FileExistsError):
        make_session_directory(tmp_path / "session")
    with pytest.raises((FileExistsError, NotADirectoryError)):
        make_session_directory(tmp_path / "session" / "inner")


# --- tighten_mode (the H4 fixer) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (0o644, 0o600),
        (0o666, 0o600),
        (0o777, 0o700),
        (0o604, 0o600),
        (0o040, 0o000),
        (0o4755, 0o4700),  # special bits are not group/other permissions: kept
        (0o600, None),
        (0o400, None),
        (0o700, None),
        (0o000, None),
    ],
)
def test_tighten_mode_on_files(tmp_path: Path, before: int, after: int | None) -> None:
    path = tmp_path / "history_a.json"
    path.write_bytes(b"{}")
    path.chmod(before)
    assert tighten_mode(path, directory=False) == after
    assert _mode(path) == (before if after is None else after)


def test_tighten_mode_only_ever_removes_group_and_other_bits(tmp_path: Path) -> None:
    path = tmp_path / "history_a.json"
    path.write_bytes(b"{}")
    for before in range(0o1000):
        path.chmod(before)
        result = tighten_mode(path, directory=False)
        now = _mode(path)
        assert now & ~before == 0  # nothing added
        assert now == before & 0o700  # exactly the group and other bits removed
        assert result == (None if now == before else now)


@pytest.mark.parametrize(("before", "after"), [(0o755, 0o700), (0o711, 0o700), (0o700, None)])
def test_tighten_mode_on_directories(tmp_path: Path, before: int, after: int | None) -> None:
    session = tmp_path / "session"
    session.mkdir()
    session.chmod(before)
    assert tighten_mode(session, directory=True) == after
    assert _mode(session) == (before if after is None else after)


def test_tighten_mode_refuses_the_wrong_kind_and_symlinks(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir(mode=0o755)
    history = tmp_path / "history_a.json"
    history.write_bytes(b"{}")
    history.chmod(0o644)
    link = tmp_path / "history_link.json"
    link.symlink_to(history)
    with pytest.raises(IsADirectoryError):
        tighten_mode(session, directory=False)
    with pytest.raises(NotADirectoryError):
        tighten_mode(history, directory=True)
    with pytest.raises(OSError, match="symbolic link") as error:
        tighten_mode(link, directory=False)
    assert error.value.errno == errno.ELOOP
    assert _mode(history) == 0o644  # never changed through the link
    fifo = tmp_path / "history_fifo.json"
    os.mkfifo(fifo, 0o644)
    with pytest.raises(NotARegularFileError, match="FIFO"):
        tighten_mode(fifo, directory=False)  # opened without blocking, then refused
    assert _mode(fifo) == 0o644


def test_tighten_mode_without_read_permission_changes_the_mode_by_name_not_through_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "history_a.json"
    history.write_bytes(b"{}")
    history.chmod(0o266)
    real_open = os.open

    def unreadable(path: object, flags: int, *args: int) -> int:
        if path == history:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", unreadable)
    assert tighten_mode(history, directory=False) == 0o200
    assert _mode(history) == 0o200


# --- copies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [(0o644, 0o600), (0o600, 0o600), (0o640, 0o600), (0o755, 0o600), (0o400, 0o400)],
)
def test_a_copy_keeps_or_tightens_the_source_mode(
    tmp_path: Path, source: int, expected: int
) -> None:
    src, dst = tmp_path / "history_a.json", tmp_path / "copy" / "history_a.json"
    data = b'{"messages": []}' * 100_000  # more than one read chunk
    src.write_bytes(data)
    src.chmod(source)
    make_session_directory(dst.parent)
    with _umask(0o000):
        copy_private(src, dst)
    assert _mode(dst) == expected
    assert expected & ~source == 0
    assert _mode(src) == source
    assert dst.read_bytes() == data
    assert _entries(dst.parent) == ["history_a.json"]


def test_a_copy_never_widens_an_existing_destination(tmp_path: Path) -> None:
    src, dst = tmp_path / "history_a.json", tmp_path / "history_b.json"
    src.write_bytes(b"new")
    src.chmod(0o600)
    dst.write_bytes(b"old")
    dst.chmod(0o400)
    copy_private(src, dst)
    assert _mode(dst) == 0o400
    assert dst.read_bytes() == b"new"


def test_a_copy_from_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "history_fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFileError, match="FIFO"):
        copy_private(fifo, tmp_path / "history_b.json")
    assert _entries(tmp_path) == ["history_fifo.json"]


def test_a_failed_copy_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "a_directory").mkdir()
    with pytest.raises(NotARegularFileError, match="directory"):
        copy_private(tmp_path / "a_directory", tmp_path / "history_a.json")
    assert _entries(tmp_path) == ["a_directory"]


# --- atomicity: concurrent readers and killed writers -----------------------------------------


def test_concurrent_readers_see_only_complete_versions(tmp_path: Path) -> None:
    target = tmp_path / "history_a.json"
    versions = (b"A" * 300_000, b"B" * 200_000)
    write_private_atomic(target, versions[0])
    done = threading.Event()
    seen: list[bytes] = []

    def read() -> None:
        while not done.is_set():
            data = target.read_bytes()
            if data not in versions:
                seen.append(data)

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    try:
        for index in range(100):
            write_private_atomic(target, versions[index % 2])
    finally:
        done.set()
        for reader in readers:
            reader.join()
    assert [len(data) for data in seen] == []


def _kill_test() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("kill_test")


def test_a_killed_writer_leaves_a_complete_old_or_new_file(tmp_path: Path) -> None:
    """200 kills at random moments: the target is always a complete old or new version, and no
    temporary file outlives the write after its writer's death (SPEC H5)."""
    kill_test = _kill_test()
    lines: list[str] = []
    summary = kill_test.run_kill_test(200, 64, 7, workdir=tmp_path, report=lines.append)
    assert summary.ok, "\n".join(lines)
    assert summary.count(kill_test.Outcome.CORRUPT) == 0
    assert summary.count(kill_test.Outcome.OLD) + summary.count(kill_test.Outcome.NEW) == 200
    assert summary.left_after_next_write == 0
    assert summary.line().startswith("200 trials: 200 intact (old: ")
    assert len(lines) == 201  # the calibration line and one per trial
    assert _entries(tmp_path) == []  # the tool cleans up after itself


def test_temporary_files_of_killed_writers_never_outlive_the_next_write(tmp_path: Path) -> None:
    """Where temporary files are named from the start (no O_TMPFILE), most kills leave one;
    the next write removes every one of them."""
    kill_test = _kill_test()
    lines: list[str] = []
    summary = kill_test.run_kill_test(
        100, 64, 7, workdir=tmp_path, writer=kill_test.Writer.ATOMIC_NAMED, report=lines.append
    )
    assert summary.ok, "\n".join(lines)
    assert summary.left_by_kills > 0  # the kills did leave some: the sweep was exercised
    assert summary.left_after_next_write == 0
    assert summary.count(kill_test.Outcome.CORRUPT) == 0


def test_the_kill_test_catches_a_writer_that_is_not_atomic(tmp_path: Path) -> None:
    kill_test = _kill_test()
    lines: list[str] = []
    summary = kill_test.run_kill_test(
        5, 64, 7, workdir=tmp_path, writer=kill_test.Writer.IN_PLACE, report=lines.append
    )
    assert not summary.ok
    assert summary.count(kill_test.Outcome.CORRUPT) >= 1, "\n".join(lines)
    assert "corrupt" in summary.line() and "FAILED" in summary.line()
