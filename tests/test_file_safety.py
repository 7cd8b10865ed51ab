"""The history tools' command lines harm no file and never hang (issue 12, defects 3-8, 10).

``export``, ``validate`` and ``scan`` are given paths by users, scripts and pre-commit hooks: an
output that is the input, a link, a FIFO or a device; inputs that are FIFOs; directories that
cannot be read; file names that look like options or are not UTF-8. Commands that could block
forever run in a subprocess with a generous timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay.cli.main import main
from reasoning_replay.suite import schemas
from support import envelope_text, history_of_blocks, validate_report_records

REPO = Path(__file__).resolve().parent.parent

GUARD_SECONDS = 120  # a hang guard, not a measurement: the commands take well under a second


def envelope(item_id: str = "rs_a", cipher: str = "gAAAA-cipher-for-file-safety") -> str:
    return envelope_text(item_id, cipher)


def history_text(*blocks: str) -> str:
    return history_of_blocks(*blocks)


def write_history(path: Path, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(history_text(envelope()), encoding="utf-8")
    path.chmod(mode)
    return path


def conformance(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The command line in a child process: a hang becomes a failure, not a stuck run."""
    command = [sys.executable, "-m", "reasoning_replay.cli.main", *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, timeout=GUARD_SECONDS, check=False)


def snapshot(directory: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every entry of ``directory`` with its kind and content (or link target), not following."""
    entries: dict[str, tuple[int, bytes | str]] = {}
    for entry in sorted(directory.iterdir()):
        mode = entry.lstat().st_mode
        if entry.is_symlink():
            entries[entry.name] = (mode, str(entry.readlink()))
        elif entry.is_file():
            entries[entry.name] = (mode, entry.read_bytes())
        else:
            entries[entry.name] = (mode, b"")
    return entries


# --- export: the output is never the input, a link or a special file (defects 3, 4) --------------


def test_export_refuses_to_overwrite_its_own_input_by_any_name(tmp_path: Path, capsys: Any) -> None:
    source = write_history(tmp_path / "history_dev.json")
    (tmp_path / "hard.json").hardlink_to(source)
    (tmp_path / "in_link.json").symlink_to(source)
    before = snapshot(tmp_path)
    cases = [
        (source, source),
        (source, tmp_path / "hard.json"),  # a hard link: the same inode
        (tmp_path / "in_link.json", source),  # IN reached through a link is still OUT
        (source, tmp_path / ".." / tmp_path.name / "history_dev.json"),
    ]
    for mode in ("resumable", "redacted"):
        for inp, out in cases:
            assert main(["export", "--mode", mode, str(inp), str(out)]) == 2
            assert "refusing to write" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", ["fifo", "link-to-file", "link-to-fifo", "dangling-link", "dir"])
def test_export_refuses_an_output_that_is_not_absent_or_a_regular_file(
    tmp_path: Path, kind: str
) -> None:
    source = write_history(tmp_path / "history_dev.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "theirs.json").write_bytes(b"theirs")
    os.mkfifo(elsewhere / "pipe")
    out = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "link-to-file":
        out.symlink_to(elsewhere / "theirs.json")
    elif kind == "link-to-fifo":
        out.symlink_to(elsewhere / "pipe")
    elif kind == "dangling-link":
        out.symlink_to(elsewhere / "absent.json")
    else:
        out.mkdir()
    before, before_elsewhere = snapshot(tmp_path), snapshot(elsewhere)
    result = conformance(["export", "--mode", "redacted", str(source), str(out)], tmp_path)
    assert result.returncode == 2
    assert b"refusing to write" in result.stderr and b"not a regular file" in result.stderr
    assert snapshot(tmp_path) == before and snapshot(elsewhere) == before_elsewhere


def test_export_refuses_a_device_output(tmp_path: Path) -> None:
    # A device node of our own (the null device's numbers): a regression must not be able to
    # replace the machine's /dev/null, as the defect did when run as root.
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    source = write_history(tmp_path / "history_dev.json")
    result = conformance(["export", "--mode", "redacted", str(source), str(device)], tmp_path)
    assert result.returncode == 2
    assert b"a character device" in result.stderr
    assert device.is_char_device()


def test_export_of_a_fifo_input_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "history_fifo.json")
    argv = ["export", "--mode", "redacted", "history_fifo.json", "out.json"]
    result = conformance(argv, tmp_path)
    assert result.returncode == 2
    assert b"not a regular file (a FIFO)" in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_export_writes_over_a_regular_output_that_is_not_the_input(tmp_path: Path) -> None:
    source = write_history(tmp_path / "history_dev.json")
    out = tmp_path / "out.json"
    out.write_bytes(b"old export")
    assert main(["export", "--mode", "redacted", str(source), str(out)]) == 0
    assert json.loads(out.read_bytes())["reasoning_replay_export"]["mode"] == "redacted"


# --- scan: fails closed, never blocks (defects 7, 8) ---------------------------------------------

LEAK = json.dumps({"encrypted_content": "gAAAA-a-leaked-ciphertext-value"})


def test_scan_fails_closed_naming_a_subdirectory_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    logs = tmp_path / "logs"
    (logs / "private").mkdir(parents=True)
    (logs / "private" / "app.log").write_text(LEAK + "\n")
    (logs / "clean.log").write_text("nothing here\n")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        # Tests run as root, for whom chmod 000 hides nothing: refuse as the kernel would.
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["scan", str(logs)]) == 2
    err = capsys.readouterr().err
    assert f"{logs / 'private'}: error: cannot read directory: Permission denied" in err
    assert "incomplete: 1 path(s) could not be scanned" in err
    assert main(["scan", "--format", "json", str(logs)]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["errors"] == [
        {"file": str(logs / "private"), "error": "cannot read directory: Permission denied"}
    ]


def test_scan_of_a_named_fifo_is_an_error_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "trace.log")
    result = conformance(["scan", "trace.log"], tmp_path)
    assert result.returncode == 2
    assert b"trace.log: error: not a regular file (a FIFO): not scanned" in result.stderr


def test_scan_walk_skips_special_files_and_links_without_blocking_or_looping(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    os.mkfifo(logs / "pipe.log")
    (logs / "loop").symlink_to(logs)  # a link back up: never followed
    (logs / "dangling.log").symlink_to(tmp_path / "absent.log")
    (logs / "leak.log").write_text(LEAK + "\n")
    result = conformance(["scan", "--format", "json", "logs"], tmp_path)
    assert result.returncode == 1  # the finding in leak.log; the rest is skipped, not an error
    document = json.loads(result.stdout)
    assert [f["file"] for f in document["findings"]] == ["logs/leak.log"]
    assert {s["file"]: s["reason"] for s in document["skipped"]} == {
        "logs/dangling.log": "symbolic link to nothing",
        "logs/loop": "not a regular file (a directory): not scanned",
        "logs/pipe.log": "not a regular file (a FIFO): not scanned",
    }
    assert document["errors"] == []


def test_scan_names_a_non_utf8_file_faithfully_without_crashing(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.log")
    (tmp_path / name).write_text(LEAK + "\n")
    text = conformance(["scan", "."], tmp_path)
    assert text.returncode == 1
    assert text.stdout.startswith(b"caf\\xe9.log:1: replay_material_exposed")
    as_json = conformance(["scan", "--format", "json", "."], tmp_path)
    assert json.loads(as_json.stdout)["findings"][0]["file"] == "caf\\xe9.log"


# --- validate: no chmod through links, no hang, no harmful --output (defects 5, 6, 7, 10) -------


def validate_json(argv: list[str], capsys: Any) -> tuple[int, list[dict[str, Any]]]:
    status = main(["validate", "--no-progress", "--format", "json", *argv])
    document = json.loads(capsys.readouterr().out)
    assert schemas.errors(schemas.VALIDATE_REPORT, document) == ()
    return status, validate_report_records(document)


def test_fix_permissions_never_changes_a_mode_through_a_symbolic_link(
    tmp_path: Path, capsys: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    outside.chmod(0o755)
    victim = write_history(outside / "victim.json", 0o644)
    session = tmp_path / "sessions" / "s1"
    write_history(session / "history_dev.json", 0o600)
    (session / "history_link.json").symlink_to(victim)
    session.chmod(0o700)
    linked_session = tmp_path / "sessions" / "linked"
    linked_session.symlink_to(outside, target_is_directory=True)
    (outside / "history_other.json").symlink_to(victim)
    status, lines = validate_json(
        ["--fix-permissions", str(session), str(linked_session / "history_other.json")], capsys
    )
    assert victim.stat().st_mode & 0o777 == 0o644  # never changed through a link
    assert outside.stat().st_mode & 0o777 == 0o755
    assert status == 1  # the findings stay: not fixed
    unfixed = [ln for ln in lines if ln["type"] == "finding" and ln.get("fixed") is False]
    assert {(Path(ln["path"]).name, ln["code"]) for ln in unfixed} == {
        ("history_link.json", "file_mode_too_open"),
        ("history_other.json", "file_mode_too_open"),
        ("linked", "directory_mode_too_open"),
    }
    assert all("is a symbolic link, not followed" in ln["message"] for ln in unfixed)


def test_validate_reports_fifos_as_history_unreadable_without_blocking(tmp_path: Path) -> None:
    session = tmp_path / "s1"
    write_history(session / "history_dev.json")
    os.mkfifo(session / "history_fifo.json", 0o600)
    os.mkfifo(tmp_path / "named.json", 0o600)
    result = conformance(["validate", "--format", "json", "--", "s1", "named.json"], tmp_path)
    assert result.returncode == 1
    lines = validate_report_records(json.loads(result.stdout))
    unreadable = {
        ln["path"]: ln["message"] for ln in lines if ln.get("code") == "history_unreadable"
    }
    assert set(unreadable) == {"s1/history_fifo.json", "named.json"}
    assert all("not a regular file (a FIFO)" in message for message in unreadable.values())


def test_validate_output_never_overwrites_an_input_a_link_or_a_fifo(
    tmp_path: Path, capsys: Any
) -> None:
    history = write_history(tmp_path / "history_dev.json")
    other = write_history(tmp_path / "elsewhere.json")
    (tmp_path / "link.json").symlink_to(other)
    before = snapshot(tmp_path)
    for output in ("history_dev.json", "link.json"):
        argv = ["validate", "--no-progress", "--output", str(tmp_path / output), str(history)]
        assert main(argv) == 2
        assert "refusing to write" in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    os.mkfifo(tmp_path / "report.pipe")
    argv = ["validate", "--output", "report.pipe", "history_dev.json"]
    result = conformance(argv, tmp_path)
    assert result.returncode == 2 and b"a FIFO, not a regular file" in result.stderr


def test_an_abbreviated_option_is_not_taken_from_a_file_name(tmp_path: Path, capsys: Any) -> None:
    write_history(tmp_path / "--out=victim.json")
    victim = write_history(tmp_path / "victim.json")
    before = victim.read_bytes()
    with pytest.raises(SystemExit):
        main(["validate", "--no-progress", str(victim), "--out=victim.json"])
    capsys.readouterr()
    assert victim.read_bytes() == before


def test_validate_formats_name_non_utf8_files_faithfully(tmp_path: Path) -> None:
    write_history(tmp_path / os.fsdecode(b"caf\xe9.json"), 0o644)
    sarif = conformance(["validate", "--format", "sarif", "caf\udce9.json"], tmp_path)
    assert sarif.returncode == 1, sarif.stderr
    (result,) = json.loads(sarif.stdout)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "caf%E9.json", "uriBaseId": "SRCROOT"}
    lines = conformance(["validate", "--format", "json", "."], tmp_path)
    assert json.loads(lines.stdout)["files"][0]["path"] == "./caf\\xe9.json"
    text = conformance(["validate", "."], tmp_path)
    assert text.returncode == 1 and b"caf\\xe9.json" in text.stdout


# --- validate: --permissions and the provider from session.json (issue 14) -----------------------


def test_permissions_policy_lowers_or_drops_only_permission_findings(
    tmp_path: Path, capsys: Any
) -> None:
    session = tmp_path / "s1"
    write_history(session / "history_dev.json", 0o644)
    broken = session / "history_broken.json"
    broken.write_text(history_text("{not json"))
    broken.chmod(0o600)
    session.chmod(0o755)
    status, lines = validate_json(["--permissions", "warning", str(session)], capsys)
    findings = {
        (Path(ln["path"]).name, ln["code"], ln["severity"])
        for ln in lines
        if ln["type"] == "finding"
    }
    assert {f for f in findings if f[0] != "history_broken.json"} == {
        ("s1", "directory_mode_too_open", "warning"),
        ("history_dev.json", "file_mode_too_open", "warning"),
    }
    assert ("history_broken.json", "json_malformed", "error") in findings
    assert status == 1  # the replay finding still fails the run
    broken.unlink()
    assert validate_json(["--permissions", "warning", str(session)], capsys)[0] == 0
    status, lines = validate_json(["--permissions", "ignore", str(session)], capsys)
    assert status == 0 and [ln["type"] for ln in lines] == ["file", "summary"]
    assert main(["validate", "--permissions", "ignore", "--fix-permissions", str(session)]) == 2
    capsys.readouterr()


def test_the_provider_of_a_history_file_is_read_from_session_json(
    tmp_path: Path, capsys: Any
) -> None:
    session = tmp_path / "s1"
    for name in ("history_dev.json", "history_dev_previous.json", "history_b.json"):
        write_history(session / name)
    write_history(session / "compacted_1.json")
    agents = {
        "dev": {"history_file": "history_dev.json", "provider": "responses"},
        "b": {"provider": "codexresponses"},  # matched by the file name
    }
    (session / "session.json").write_text(json.dumps({"continuation": {"agents": agents}}))
    (session / "session.json").chmod(0o600)
    session.chmod(0o700)
    status, lines = validate_json(["--provider", "configured", str(session)], capsys)
    assert status == 0
    providers = {Path(ln["path"]).name: ln.get("provider") for ln in lines if ln["type"] == "file"}
    assert providers == {
        "compacted_1.json": "configured",  # no agent matches: the configured provider
        "history_b.json": "codexresponses",
        "history_dev.json": "responses",
        "history_dev_previous.json": "responses",
        "session.json": None,
    }
