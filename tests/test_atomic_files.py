"""Files replaced whole or not at all, whose temporary file never outlives its writer (SPEC H5)."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from reasoning_replay import atomic_files
from reasoning_replay.atomic_files import (
    Replacement,
    replace_file,
    sweep_temporary_files,
    temporary_files_for,
    temporary_name,
)
from reasoning_replay.file_kinds import NotARegularFileError
from reasoning_replay.history.persistence import write_private_atomic


def _entries(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _unnamed_files_here(directory: Path) -> bool:
    """Whether this system and ``directory``'s filesystem make O_TMPFILE files."""
    if not hasattr(os, "O_TMPFILE") or not Path("/proc/self/fd").is_dir():
        return False
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except OSError:
        return False
    os.close(fd)
    return True


needs_unnamed_files = pytest.mark.skipif(
    not _unnamed_files_here(Path(os.environ.get("TMPDIR", "/tmp"))),
    reason="needs O_TMPFILE (Linux) on the temporary directory's filesystem",
)


@pytest.fixture(params=["unnamed", "named"])
def temporary_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways a temporary file is made: unnamed (O_TMPFILE) where the system offers it, and
    named from the start, as on a system or filesystem without O_TMPFILE."""
    if request.param == "named":
        monkeypatch.setattr(atomic_files, "_create_unnamed", lambda directory, mode: None)
    elif not _unnamed_files_here(Path(os.environ.get("TMPDIR", "/tmp"))):
        pytest.skip("needs O_TMPFILE (Linux)")
    return str(request.param)


@contextmanager
def _locked_by_another_process(path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process that holds an flock on ``path`` (as a running writer does) until the end."""
    code = textwrap.dedent(
        """
        import fcntl, os, sys
        fd = os.open(sys.argv[1], os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        sys.stdin.read()
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"locked\n"
        yield process
    finally:
        process.communicate(timeout=30)


# --- a crash leaves nothing -------------------------------------------------------------------


@needs_unnamed_files
def test_an_unnamed_temporary_file_has_no_name_until_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the content is written and flushed, the directory holds the old file only: a
    crash at any of those moments leaves nothing behind."""
    target = tmp_path / "history_a.json"
    write_private_atomic(target, b"old")
    seen: list[list[str]] = []
    real_fsync = os.fsync

    def look_then_fsync(fd: int) -> None:
        seen.append(_entries(tmp_path))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", look_then_fsync)
    with Replacement(target, mode=0o600) as replacement:
        replacement.write(b"new")
        seen.append(_entries(tmp_path))
    assert seen[:2] == [["history_a.json"], ["history_a.json"]]  # written, then flushed
    assert target.read_bytes() == b"new"
    assert _entries(tmp_path) == ["history_a.json"]


@needs_unnamed_files
def test_a_new_file_is_linked_in_under_its_own_name_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked: list[str] = []
    real_link = os.link

    def recording_link(src: str, dst: str, **kwargs: object) -> None:
        linked.append(dst)
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", recording_link)
    write_private_atomic(tmp_path / "history_a.json", b"{}")
    assert linked == ["history_a.json"]  # no temporary name ever existed
    write_private_atomic(tmp_path / "history_a.json", b"{}")
    assert len(linked) == 2 and linked[1].startswith(".history_a.json.")  # then renamed over


def test_a_writer_killed_between_link_and_rename_leaves_a_file_the_next_write_removes(
    tmp_path: Path,
) -> None:
    """The one moment a crash can leave a temporary file: after it got its name, before the
    rename. The next write of the same target removes it (its writer's lock is gone)."""
    target = tmp_path / "history_a.json"
    write_private_atomic(target, b"old")
    code = textwrap.dedent(
        """
        import os, signal, sys
        from pathlib import Path
        from reasoning_replay.history.persistence import write_private_atomic

        def die(self, other):
            os.kill(os.getpid(), signal.SIGKILL)

        Path.replace = die
        write_private_atomic(Path(sys.argv[1]), b"new")
        """
    )
    killed = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
    assert killed.returncode == -signal.SIGKILL
    (leftover,) = temporary_files_for(target)
    assert _mode(leftover) == 0o600 and leftover.read_bytes() == b"new"
    assert target.read_bytes() == b"old"

    write_private_atomic(target, b"newer")
    assert _entries(tmp_path) == ["history_a.json"]
    assert target.read_bytes() == b"newer"


# --- the sweep: only abandoned temporary files of the target, nothing else ------------------


def test_temporary_files_whose_writer_has_ended_are_removed_by_the_next_write(
    tmp_path: Path, temporary_kind: str
) -> None:
    target = tmp_path / "history_a.json"
    left = [temporary_name(target) for _ in range(3)]
    for path in left:
        path.write_bytes(b"a killed writer's copy")
        path.chmod(0o600)
    left[2].chmod(0o200)  # a rewrite of a write-only file: opened for writing to be locked
    write_private_atomic(target, b"{}")
    assert _entries(tmp_path) == ["history_a.json"]


def test_a_temporary_file_whose_writer_runs_is_left_alone(
    tmp_path: Path, temporary_kind: str
) -> None:
    target = tmp_path / "history_a.json"
    running = temporary_name(target)
    running.write_bytes(b"being written")
    with _locked_by_another_process(running):
        write_private_atomic(target, b"{}")
        assert running.exists()
        assert sweep_temporary_files(target) == 0
    assert sweep_temporary_files(target) == 1  # its writer has ended
    assert _entries(tmp_path) == ["history_a.json"]


def test_the_sweep_removes_nothing_but_the_targets_own_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "history_a.json"
    others = {
        temporary_name(tmp_path / "history_b.json").name: "another target's",
        ".history_a.json.nothex.tmp": "not our pattern",
        ".history_a.json.0123456789abcdef.tmp.bak": "not our pattern",
        "history_a.json.0123456789abcdef.tmp": "no leading dot",
        ".history_a.json.0123456789ABCDEF.tmp": "upper-case digits",
    }
    for name in others:
        (tmp_path / name).write_bytes(b"theirs")
    a_link = temporary_name(target)
    a_link.symlink_to(tmp_path / "history_b.json")
    a_directory = temporary_name(target)
    a_directory.mkdir()
    a_fifo = temporary_name(target)
    os.mkfifo(a_fifo)
    before = _entries(tmp_path)
    assert sweep_temporary_files(target) == 0
    assert _entries(tmp_path) == before
    write_private_atomic(target, b"{}")
    assert _entries(tmp_path) == sorted([*before, "history_a.json"])


def test_a_named_temporary_file_taken_by_a_sweep_is_replaced_by_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the creation of a named temporary file and its lock, another writer's sweep
    may hold it (or have removed it): the writer sees that and takes a fresh name."""
    monkeypatch.setattr(atomic_files, "_create_unnamed", lambda directory, mode: None)
    real_flock = fcntl.flock
    refused: list[int] = []

    def busy_once(fd: int, operation: int) -> None:
        if operation & fcntl.LOCK_NB and not refused:
            refused.append(fd)
            raise BlockingIOError(errno.EWOULDBLOCK, "held by a sweep")
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", busy_once)
    target = tmp_path / "history_a.json"
    write_private_atomic(target, b"{}")
    assert refused and target.read_bytes() == b"{}"
    # The refused file is the sweep's to remove: here nobody holds it, so the next write does.
    monkeypatch.undo()
    write_private_atomic(target, b"{}")
    assert _entries(tmp_path) == ["history_a.json"]


# --- files that hold no secret: reports, bundles, expectations -------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_a_new_plain_file_gets_the_umasks_mode_and_a_rewrite_keeps_its_mode(
    tmp_path: Path, temporary_kind: str, umask: int
) -> None:
    target = tmp_path / "report.json"
    previous = os.umask(umask)
    try:
        replace_file(target, b"1")
    finally:
        os.umask(previous)
    assert _mode(target) == 0o666 & ~umask
    target.chmod(0o640)
    replace_file(target, b"2")
    assert _mode(target) == 0o640 and target.read_bytes() == b"2"
    assert _entries(tmp_path) == ["report.json"]


def test_a_discarded_or_failed_replacement_leaves_the_old_file_and_nothing_else(
    tmp_path: Path, temporary_kind: str
) -> None:
    target = tmp_path / "report.json"
    replace_file(target, b"old")
    with pytest.raises(RuntimeError), Replacement(target) as replacement:
        replacement.write(b"half of the ne")
        raise RuntimeError("the report could not be finished")
    replacement = Replacement(target)
    replacement.write(b"new")
    replacement.discard()
    replacement.discard()  # idempotent
    with pytest.raises(ValueError, match="committed or discarded"):
        replacement.write(b"more")
    assert target.read_bytes() == b"old"
    assert _entries(tmp_path) == ["report.json"]


def test_a_plain_target_that_is_a_link_or_special_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"theirs")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    os.mkfifo(tmp_path / "fifo.json")
    for name in ("link.json", "fifo.json"):
        with pytest.raises(NotARegularFileError):
            replace_file(tmp_path / name, b"ours")
    assert (tmp_path / "real.json").read_bytes() == b"theirs"
    assert _entries(tmp_path) == ["fifo.json", "link.json", "real.json"]
