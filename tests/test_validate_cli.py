"""``conformance validate``: exit statuses, the three formats, jobs, fixes, progress, trees."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from reasoning_replay.cli.main import main
from reasoning_replay.diagnostics import Code
from reasoning_replay.history.permission_fixes import tighten
from reasoning_replay.history.report_formats import TextWriter as TextReport
from reasoning_replay.history.validate_jobs import worker_count
from reasoning_replay.history.validate_run import PROGRESS_MIN_FILES, run_validate
from reasoning_replay.history.validation import Severity, severity_of
from support import envelope_text, history_of_blocks, validate_report_records

REPO = Path(__file__).resolve().parent.parent
REPORT_SCHEMA = json.loads(
    (REPO / "conformance" / "schemas" / "validate-report.schema.json").read_text("utf-8")
)
REPLAY = "openai-reasoning-encrypted"
MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_old"}'


def envelope(item_id: str = "rs_a", cipher: str = "cipher-a") -> str:
    return envelope_text(item_id, cipher)


def history(*blocks: str) -> str:
    return history_of_blocks(*blocks)


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A session directory (0755) and a plain directory of histories."""
    session = tmp_path / "sessions" / "2611291000-abc"
    session.mkdir(parents=True)
    session.chmod(0o755)
    write(session / "session.json", '{"id": "x"}', 0o644)
    write(session / "history_dev.json", history(envelope(), envelope()), 0o600)
    write(session / "history_dev_previous.json", history(envelope()), 0o644)
    write(session / "compacted_1.json", history(MINIMAL), 0o600)
    other = tmp_path / "exports"
    other.mkdir()
    other.chmod(0o755)
    write(other / "compacted_broken.json", "{", 0o600)
    write(other / "notes.txt", "not validated", 0o644)
    write(other / "package.json", '{"name": "not-a-history"}', 0o644)
    return tmp_path


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    status = main(["validate", "--no-progress", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def json_lines(out: str) -> list[dict[str, Any]]:
    """The one JSON document, checked against its schema, as a flat list of records."""
    document = json.loads(out)
    Draft202012Validator(REPORT_SCHEMA).validate(document)
    return validate_report_records(document)


# --- exit statuses -----------------------------------------------------------------------------


def test_exit_0_for_a_clean_file_1_for_errors_2_for_usage(tmp_path: Path, capsys: Any) -> None:
    clean = write(tmp_path / "history_a.json", history(envelope()))
    legacy = write(tmp_path / "history_b.json", history(MINIMAL))
    broken = write(tmp_path / "history_c.json", "{")
    assert run([str(clean)], capsys)[0] == 0
    assert run([str(legacy)], capsys)[0] == 0  # a warning is not an error
    assert run([str(broken)], capsys)[0] == 1
    status, out, err = run([str(clean), str(tmp_path / "missing.json")], capsys)
    assert status == 2 and "missing.json" in err and out == ""
    assert run(["--jobs", "0", str(clean)], capsys)[0] == 2
    assert run(["--output", str(tmp_path / "no" / "dir" / "x"), str(clean)], capsys)[0] == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["validate"])
    assert exit_info.value.code == 2


def test_an_unreadable_path_is_a_finding_not_a_crash(tmp_path: Path, capsys: Any) -> None:
    dangling = tmp_path / "history_gone.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    status, out, _ = run(["--format", "json", str(dangling)], capsys)
    lines = json_lines(out)
    assert status == 1 and lines[0]["code"] == "history_unreadable"


def test_a_number_too_long_for_python_int_is_read_as_the_double_it_denotes(
    tmp_path: Path, capsys: Any
) -> None:
    # msgspec refuses it and plain json.loads raises ValueError past sys.get_int_max_str_digits();
    # like the envelope reader (jsontext.parse_json_int, RFC 7493 §2.2), the file is read.
    huge = write(tmp_path / "history_n.json", '{"messages": [], "n": ' + "7" * 5000 + "}")
    status, out, _ = run(["--format", "json", str(huge)], capsys)
    assert status == 0
    assert not [line for line in json_lines(out) if line.get("code") == "history_malformed"]


# --- text --------------------------------------------------------------------------------------


def test_text_has_per_file_lines_and_a_summary(tree: Path, capsys: Any) -> None:
    status, out, err = run([str(tree)], capsys)
    assert status == 1 and err == ""
    lines = out.splitlines()
    assert any(
        ln.startswith("FAIL")
        and ln.endswith(
            "compacted_broken.json  (resumable 0, legacy 0, redacted 0, malformed 0; "
            "does not replay as stored)"
        )
        for ln in lines
    )
    assert any(ln.startswith("FAIL") and "compacted_1.json" in ln for ln in lines)  # directory
    assert any("legacy_minimal_record" in ln and "message 1, block 0" in ln for ln in lines)
    assert any("session.json  (session metadata: permissions only)" in ln for ln in lines)
    assert any("dedupe_exact_duplicate" in ln and "message 2, block 0" in ln for ln in lines)
    assert "notes.txt" not in out and "package.json" not in out
    summary = out[out.index("\nsummary\n") :]
    assert "files    5  histories 4, session.json 1" in summary
    assert "histories that replay as stored 1" in summary  # session.json is never counted
    assert "blocks   4  resumable 3, legacy 1" in summary
    assert "findings 6  error 4, warning 2, note 0" in summary
    assert "skipped  1  JSON files that are not histories; -v lists them" in summary
    assert out.endswith("FAILED: error findings\n")


def test_a_finding_repeated_per_block_is_one_line_per_file_and_code(
    tmp_path: Path, capsys: Any
) -> None:
    legacy = [MINIMAL.replace("rs_old", f"rs_{n}") for n in range(40)]
    path = write(tmp_path / "history_legacy.json", history(*legacy))

    _, out, _ = run([str(path)], capsys)
    _, verbose, _ = run(["-v", str(path)], capsys)

    (line,) = [ln for ln in out.splitlines() if "legacy_minimal_record" in ln]
    assert "40 blocks (message 1, block 0; message 2, block 0; message 3, block 0; 37 more" in line
    assert len([ln for ln in verbose.splitlines() if "legacy_minimal_record" in ln]) == 40


# --- which files are histories ------------------------------------------------------------------


def test_a_walk_validates_histories_by_name_and_shape_and_skips_other_json(
    tmp_path: Path, capsys: Any
) -> None:
    write(tmp_path / "package.json", '{"name": "x", "version": "1.0.0"}')
    write(tmp_path / "corpus" / "generated.json", '[{"messages": "not a history"}]')
    write(tmp_path / "corpus" / "truncated.json", '{"a": ')
    write(tmp_path / "exports" / "shareable.json", history(envelope()))  # by shape
    write(tmp_path / "s1" / "history_dev.json", "{")  # by name: always a history

    status, out, _ = run(["--format", "json", str(tmp_path)], capsys)

    document = json.loads(out)
    assert [Path(f["path"]).name for f in document["files"]] == [
        "shareable.json",
        "history_dev.json",
    ]
    assert {Path(s["path"]).name: s["reason"] for s in document["skipped"]} == {
        "generated.json": "not a history: the top-level value is not an object",
        "truncated.json": "not a history: not JSON: Expecting value at line 1 column 7",
        "package.json": "not a history: no top-level member messages",
    }
    assert document["summary"]["skipped"] == 3 and status == 1  # history_dev.json is broken


def test_a_file_named_on_the_command_line_is_always_validated(tmp_path: Path, capsys: Any) -> None:
    package = write(tmp_path / "package.json", '{"name": "x"}')
    status, out, _ = run(["--format", "json", str(package)], capsys)
    (finding,) = json.loads(out)["files"][0]["findings"]
    assert status == 1 and finding["code"] == "history_malformed"


def test_exclude_leaves_out_files_and_whole_directories(tmp_path: Path, capsys: Any) -> None:
    write(tmp_path / "s1" / "history_a.json", history(envelope()))
    write(tmp_path / "s1" / "history_bad.json", "{")
    write(tmp_path / "fixtures" / "deep" / "history_broken.json", "{")
    write(tmp_path / "keep" / "fixtures.json", history(envelope("rs_k", "k")))
    argv = ["--format", "json", "--permissions", "ignore", "--exclude", "fixtures/"]
    argv += ["--exclude", "s1/*_bad.json"]

    status, out, _ = run([*argv, str(tmp_path)], capsys)

    document = json.loads(out)
    assert [Path(f["path"]).name for f in document["files"]] == ["fixtures.json", "history_a.json"]
    assert document["summary"]["excluded"] == 2 and status == 0
    explicit = str(tmp_path / "s1" / "history_bad.json")
    assert run([*argv, explicit], capsys)[0] == 1  # named: validated, whatever --exclude says


def test_an_invalid_exclude_pattern_is_a_usage_error(tmp_path: Path, capsys: Any) -> None:
    write(tmp_path / "history_a.json", history(envelope()))
    status, out, err = run(["--exclude", "!keep.json", str(tmp_path)], capsys)
    assert status == 2 and out == "" and "negation (!) is not supported" in err


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_nothing_to_validate_is_exit_2_with_one_line_and_no_report(
    tmp_path: Path, capsys: Any, fmt: str
) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path / "node" / "package.json", '{"name": "x"}')
    write(tmp_path / "all" / "history_a.json", history(envelope()))
    for argv in (["empty"], ["node"], ["--exclude", "*.json", "all"]):
        paths = [str(tmp_path / a) if not a.startswith("-") and "*" not in a else a for a in argv]
        status, out, err = run(["--format", fmt, *paths], capsys)
        assert status == 2 and out == "", argv
        (line,) = err.splitlines()
        assert line.startswith("conformance validate: error: nothing to validate"), line


def test_nothing_to_validate_leaves_no_output_file_and_an_old_one_unchanged(
    tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "empty").mkdir()
    new, old = tmp_path / "new.sarif", tmp_path / "old.sarif"
    old.write_text("previous report")
    for output in (new, old):
        argv = ["--format", "sarif", "--output", str(output), str(tmp_path / "empty")]
        assert run(argv, capsys)[0] == 2
    assert not new.exists() and old.read_text() == "previous report"


def test_output_dash_is_stdout(tmp_path: Path, capsys: Any) -> None:
    path = write(tmp_path / "history_a.json", history(envelope()))
    status, out, _ = run(["--format", "json", "--output", "-", str(path)], capsys)
    assert status == 0 and json.loads(out)["summary"]["files"] == 1
    assert not (tmp_path / "-").exists() and not Path("-").exists()


# --- json --------------------------------------------------------------------------------------


def test_json_is_one_document_valid_against_its_schema(tree: Path, capsys: Any) -> None:
    status, out, _ = run(["--format", "json", str(tree)], capsys)
    Draft202012Validator.check_schema(REPORT_SCHEMA)
    document = json.loads(out)
    Draft202012Validator(REPORT_SCHEMA).validate(document)
    assert REPORT_SCHEMA["$id"] == "urn:reasoning-replay:conformance:validate-report"
    lines = json_lines(out)
    summary = lines[-1]
    assert summary["type"] == "summary" and summary["exit_status"] == status == 1
    assert [ln["type"] for ln in lines].count("file") == summary["files"] == 5
    assert (summary["histories"], summary["session_files"], summary["skipped"]) == (4, 1, 1)
    findings = [ln for ln in lines if ln["type"] == "finding"]
    assert {(Path(f["path"]).name, f["code"]) for f in findings} == {
        ("compacted_broken.json", "history_malformed"),
        ("session.json", "file_mode_too_open"),
        ("2611291000-abc", "directory_mode_too_open"),  # the path names the directory
        ("history_dev.json", "dedupe_exact_duplicate"),
        ("history_dev_previous.json", "file_mode_too_open"),
        ("compacted_1.json", "legacy_minimal_record"),
    }
    assert len(findings) == 6
    assert all("gAAAA" not in f["message"] for f in findings)  # never replay material
    (session,) = [f for f in document["files"] if f["kind"] == "session"]
    assert "replays_as_stored" not in session and "counts" not in session


def test_the_schema_refuses_wrong_severities_and_codes() -> None:
    validator = Draft202012Validator(REPORT_SCHEMA)
    good = {
        "path": "p",
        "code": "legacy_minimal_record",
        "severity": "warning",
        "message_index": 1,
        "block_index": 0,
        "message": "m",
    }
    finding = {"$ref": "#/$defs/finding", "$defs": REPORT_SCHEMA["$defs"]}
    check = Draft202012Validator(finding)
    assert check.is_valid(good)
    assert not check.is_valid({**good, "severity": "error"})
    assert not check.is_valid({**good, "code": "plan_model_invalid"})
    assert not check.is_valid({k: v for k, v in good.items() if k != "block_index"})
    assert not check.is_valid({**good, "fixed": True})
    assert not validator.is_valid({"tool": {}, "files": [], "skipped": [], "summary": {}})


@pytest.mark.parametrize("code", sorted(Code, key=lambda c: c.value))
def test_the_schema_gives_each_code_the_severity_of_h3(code: Code) -> None:
    """Every code a validator reports (SPEC H3) is allowed with its severity and no other; the
    permission codes may also be lowered to warnings."""
    validator = Draft202012Validator({"$ref": "#/$defs/finding", "$defs": REPORT_SCHEMA["$defs"]})
    finding: dict[str, object] = {"path": "p", "code": code.value, "message": "m"}
    if code not in _FILE_LEVEL:
        finding |= {"message_index": 1, "block_index": 0}
    allowed = {s for s in Severity if validator.is_valid({**finding, "severity": s.value})}
    reported = code not in _NEVER_FOUND_BY_A_VALIDATOR
    expected = {severity_of(code)} if reported else set()
    if code in (Code.FILE_MODE_TOO_OPEN, Code.DIRECTORY_MODE_TOO_OPEN):
        expected.add(Severity.WARNING)
    assert allowed == expected


_FILE_LEVEL = frozenset(
    (
        Code.HISTORY_UNREADABLE,
        Code.HISTORY_MALFORMED,
        Code.FILE_MODE_TOO_OPEN,
        Code.DIRECTORY_MODE_TOO_OPEN,
    )
)
# Codes of other operations (capture, replay's issuer, scan, plan): no finding of validate.
_NEVER_FOUND_BY_A_VALIDATOR = frozenset(
    code
    for code in Code
    if code.value.startswith(("capture_", "plan_"))
    or code.value.startswith("scan_")
    or code in (Code.REPLAY_PROVIDER_MISMATCH, Code.REPLAY_MATERIAL_EXPOSED)
)


# --- sarif -------------------------------------------------------------------------------------


def test_sarif_2_1_0_structure(tree: Path, capsys: Any) -> None:
    out_file = tree / "report.sarif"
    status, out, _ = run(
        ["--format", "sarif", "--output", str(out_file), str(tree / "sessions")], capsys
    )
    assert status == 1 and out == ""
    log = json.loads(out_file.read_text("utf-8"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] and driver["version"]
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == [
        "legacy_minimal_record",
        "dedupe_exact_duplicate",
        "file_mode_too_open",
        "directory_mode_too_open",
    ]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["defaultConfiguration"]["level"]
    results = sarif_run["results"]
    assert {r["ruleId"] for r in results} == set(rule_ids)
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        (location,) = result["locations"]
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        about_directory = result["ruleId"] == "directory_mode_too_open"
        assert uri.startswith("file:///")
        assert uri.endswith("/2611291000-abc" if about_directory else ".json")
    dup = next(r for r in results if r["ruleId"] == "dedupe_exact_duplicate")
    assert dup["level"] == "warning"
    assert dup["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
        f"messages[2].channels.{REPLAY}[0]"
    )
    assert sarif_run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


def test_sarif_relative_paths_use_a_base_id(tree: Path, capsys: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(tree)
    _, out, _ = run(["--format", "sarif", "exports"], capsys)
    run_ = json.loads(out)["runs"][0]
    location = run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "exports/compacted_broken.json", "uriBaseId": "SRCROOT"}
    assert run_["originalUriBaseIds"]["SRCROOT"]["uri"] == tree.as_uri() + "/"


# --- jobs, fixes, progress ---------------------------------------------------------------------


def test_jobs_2_reports_what_1_job_reports_in_the_same_order(tmp_path: Path, capsys: Any) -> None:
    for n in range(30):
        blocks = [envelope(f"rs_{n}", f"c{n}")] * (1 + n % 3) + ([MINIMAL] if n % 4 == 0 else [])
        write(
            tmp_path / f"s{n % 5}" / f"history_{n:02d}.json",
            history(*blocks),
            0o600 | (n % 2) * 0o044,
        )
    write(tmp_path / "s1" / "history_bad.json", "{")
    one = run(["--format", "json", "--jobs", "1", str(tmp_path)], capsys)
    two = run(["--format", "json", "--jobs", "2", str(tmp_path)], capsys)
    assert one == two and one[0] == 1


# A wrapper that runs the command with an audit hook counting the processes it starts. The fork
# start method is forced: its pool starts every worker at once, the case the limit is about.
COUNT_PROCESSES = """
import multiprocessing, sys
multiprocessing.set_start_method("fork", force=True)
started = []
EVENTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.system"}
sys.addaudithook(lambda event, args: started.append(event) if event in EVENTS else None)
from reasoning_replay.cli.main import main
status = main(sys.argv[1:])
sys.stdout.flush()
print(f"processes started: {len(started)}", file=sys.stderr)
sys.exit(status)
"""


def processes_started(*argv: str) -> tuple[int, int, str]:
    """The exit status of ``conformance validate ARGV``, the processes it started, its stderr."""
    command = [sys.executable, "-c", COUNT_PROCESSES, "validate", "--no-progress", *argv]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    counted = re.search(r"processes started: (\d+)", done.stderr)
    assert counted is not None, done.stderr
    return done.returncode, int(counted.group(1)), done.stderr


def test_jobs_300_on_one_file_starts_no_worker_process(tmp_path: Path) -> None:
    """One file is one batch: it is validated by the command's own process, whatever N is."""
    target = write(tmp_path / "history_a.json", history(envelope()))
    assert processes_started("--jobs", "300", str(target))[:2] == (0, 0)
    assert processes_started("--jobs", str(10**30), str(target))[:2] == (0, 0)


def test_jobs_never_starts_more_workers_than_usable_cpus_or_batches(tmp_path: Path) -> None:
    for n in range(40):  # 40 small files: 5 batches of 8
        write(tmp_path / f"history_{n:02d}.json", history(envelope(f"rs_{n}", f"c{n}")))
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cpus = len(affinity) if affinity is not None else os.cpu_count() or 1
    expected = 0 if cpus == 1 else min(cpus, 5)  # one worker: the command's own process
    assert processes_started("--jobs", "300", str(tmp_path))[:2] == (0, expected)
    status, started, _ = processes_started("--jobs", "300", str(tmp_path / "history_00.json"))
    assert (status, started) == (0, 0)


@pytest.mark.parametrize(
    ("jobs", "batches", "cpus", "workers"),
    [(1, 5, 8, 1), (300, 1, 8, 1), (300, 5, 8, 5), (300, 50, 8, 8), (2, 50, 8, 2), (8, 0, 8, 1)],
)
def test_worker_count_is_the_least_of_jobs_cpus_and_batches(
    jobs: int, batches: int, cpus: int, workers: int
) -> None:
    assert worker_count(jobs, batches, cpus) == workers


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_1_is_a_usage_error(tmp_path: Path, capsys: Any, jobs: str) -> None:
    target = write(tmp_path / "history_a.json", history(envelope()))
    status, out, err = run(["--jobs", jobs, str(target)], capsys)
    assert (status, out) == (2, "")
    assert "--jobs must be at least 1" in err


def test_fix_permissions_only_tightens(tree: Path, capsys: Any) -> None:
    session = tree / "sessions" / "2611291000-abc"
    strict = write(session / "history_ro.json", history(envelope("rs_r", "r")), 0o400)
    odd = write(session / "history_odd.json", history(envelope("rs_o", "o")), 0o751)
    before = {p: stat.S_IMODE(p.stat().st_mode) for p in [session, *session.iterdir()]}
    status, out, _ = run(["--fix-permissions", "--format", "json", str(session)], capsys)
    after = {p: stat.S_IMODE(p.stat().st_mode) for p in before}
    for path, mode in before.items():
        assert after[path] == mode & ~0o077  # group and other bits removed, nothing added
    assert after[strict] == 0o400 and after[odd] == 0o700 and after[session] == 0o700
    fixed = [ln for ln in json_lines(out) if ln["type"] == "finding" and ln.get("fixed")]
    assert {Path(ln["path"]).name for ln in fixed} == {
        "session.json",
        "history_dev_previous.json",
        "history_odd.json",
        "2611291000-abc",  # the directory's finding names the directory
    }
    assert all("Fixed: 0" in ln["message"] for ln in fixed)
    assert status == 0  # only warnings left
    assert json_lines(out)[-1]["fixed"] == 4
    assert run(["--format", "json", str(session)], capsys)[0] == 0


def test_tighten_never_adds_a_permission(tmp_path: Path) -> None:
    path = write(tmp_path / "f.json", "{}", 0o000)
    assert tighten(str(path)) is None and stat.S_IMODE(path.stat().st_mode) == 0
    path.chmod(0o077)
    fix = tighten(str(path))
    assert fix is not None and (fix.old, fix.new) == (0o077, 0)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(tmp_path: Path, capsys: Any) -> None:
    for n in range(PROGRESS_MIN_FILES):
        write(tmp_path / f"history_{n}.json", history(envelope(f"rs_{n}", str(n))))
    status = main(["validate", str(tmp_path)])  # stderr is captured: not a terminal
    assert status == 0 and capsys.readouterr().err == ""
    terminal, out = FakeTerminal(), io.StringIO()
    run_validate([str(tmp_path)], writer=TextReport(out), progress_stream=terminal)
    drawn = terminal.getvalue()
    assert f"{PROGRESS_MIN_FILES}/{PROGRESS_MIN_FILES} files" in drawn and drawn.endswith("\r")
    assert "\r" not in out.getvalue()


# --- trees -------------------------------------------------------------------------------------


def test_a_session_directory_is_checked_once_and_others_never(tree: Path, capsys: Any) -> None:
    _, out, _ = run(["--format", "json", str(tree)], capsys)
    directory = [ln for ln in json_lines(out) if ln.get("code") == "directory_mode_too_open"]
    assert len(directory) == 1 and "2611291000-abc" in directory[0]["message"]
    files = [Path(ln["path"]).name for ln in json_lines(out) if ln["type"] == "file"]
    assert files == [
        "compacted_broken.json",
        "compacted_1.json",
        "history_dev.json",
        "history_dev_previous.json",
        "session.json",
    ]


def test_an_explicit_file_in_a_session_directory_gets_the_directory_check(
    tree: Path, capsys: Any
) -> None:
    path = tree / "sessions" / "2611291000-abc" / "compacted_1.json"
    _, out, _ = run(["--format", "json", str(path), str(path)], capsys)
    codes = [ln["code"] for ln in json_lines(out) if ln["type"] == "finding"]
    assert codes.count("directory_mode_too_open") == 1


def test_symlinked_directories_are_not_followed(tree: Path, capsys: Any) -> None:
    (tree / "exports" / "loop").symlink_to(tree / "sessions")
    _, out, _ = run(["--format", "json", str(tree / "exports")], capsys)
    assert json_lines(out)[-1]["files"] == 1


# --- blocks another provider issued (H3, P4) ---------------------------------------------------


def test_blocks_another_provider_issued_are_counted_per_file_in_every_format(
    tmp_path: Path, capsys: Any
) -> None:
    session = tmp_path / "2612011000-abc"
    session.mkdir(mode=0o700)
    agents = {"dev": {"provider": "xai", "history_file": "history_dev.json"}}
    write(session / "session.json", json.dumps({"continuation": {"agents": agents}}))
    messages = [
        {"role": "assistant", "content": [], "provider": provider, "channels": {REPLAY: blocks}}
        for provider, blocks in [
            ("openai", [{"type": "text", "text": envelope("rs_1")}]),
            (None, [{"type": "text", "text": envelope("rs_2")}]),  # records none: xai's
        ]
    ]
    path = write(session / "history_dev.json", json.dumps({"messages": messages}))

    _, out, _ = run(["--format", "json", str(path)], capsys)
    (record,) = [line for line in json_lines(out) if line["type"] == "file"]
    assert (record["provider"], record["provider_mismatch"]) == ("xai", 1)
    assert record["replays_as_stored"] is False

    _, text, _ = run([str(path)], capsys)
    assert "1 would not replay to xai" in text

    _, sarif, _ = run(["--format", "sarif", str(path)], capsys)
    (artifact,) = json.loads(sarif)["runs"][0]["artifacts"]
    assert artifact["properties"] == {"provider": "xai", "provider_mismatch": 1}


def test_a_file_whose_blocks_all_replay_to_its_provider_has_no_sarif_artifact(
    tmp_path: Path, capsys: Any
) -> None:
    path = write(tmp_path / "history.json", history(envelope()))

    _, sarif, _ = run(["--format", "sarif", "--provider", "xai", str(path)], capsys)
    _, out, _ = run(["--format", "json", "--provider", "xai", str(path)], capsys)

    assert "artifacts" not in json.loads(sarif)["runs"][0]
    assert json_lines(out)[0]["provider_mismatch"] == 0


def test_a_route_name_in_session_json_maps_to_its_issuer(tmp_path: Path, capsys: Any) -> None:
    """fast-agent records ``responses``; a message recording ``openai`` is the same issuer (P4)."""
    session = tmp_path / "2612011000-abc"
    session.mkdir(mode=0o700)
    agents = {"dev": {"provider": "responses", "history_file": "history_dev.json"}}
    write(session / "session.json", json.dumps({"continuation": {"agents": agents}}))
    messages = [
        {"role": "assistant", "content": [], "provider": "openai", "channels": {REPLAY: [block]}}
        for block in [{"type": "text", "text": envelope("rs_1")}]
    ]
    path = write(session / "history_dev.json", json.dumps({"messages": messages}))

    status, out, _ = run(["--format", "json", str(path)], capsys)

    (record,) = [line for line in json_lines(out) if line["type"] == "file"]
    assert status == 0
    assert (record["provider"], record["provider_mismatch"]) == ("responses", 0)


def test_provider_name_options_extend_the_registry(tmp_path: Path, capsys: Any) -> None:
    messages = [
        {"role": "assistant", "content": [], "provider": "gateway", "channels": {REPLAY: [b]}}
        for b in [{"type": "text", "text": envelope("rs_1")}]
    ]
    path = write(tmp_path / "history.json", json.dumps({"messages": messages}))
    mapped = ["--provider-name", "gateway=openai", "--provider-name", "other=xai"]

    _, plain, _ = run(["--format", "json", str(path)], capsys)
    _, extended, _ = run(["--format", "json", *mapped, str(path)], capsys)

    assert json_lines(plain)[0]["provider_mismatch"] == 1  # gateway is its own issuer
    assert json_lines(extended)[0]["provider_mismatch"] == 0


@pytest.mark.parametrize("word", ["gateway", "=openai", "gateway=", "a=b --provider-name a=c"])
def test_a_malformed_provider_name_is_a_usage_error(word: str, tmp_path: Path, capsys: Any) -> None:
    path = write(tmp_path / "history.json", history(envelope()))
    options = [
        part for pair in word.split(" --provider-name ") for part in ("--provider-name", pair)
    ]

    status, out, err = run([*options, str(path)], capsys)

    assert status == 2 and out == "" and "--provider-name" in err


def test_an_id_ciphertext_conflict_alone_exits_0(tmp_path: Path, capsys: Any) -> None:
    """SPEC H3: a conflict is a warning; D3 keeps the item and it replays (xAI reuses ids)."""
    path = write(tmp_path / "history.json", history(envelope(), envelope(cipher="cipher-a-2")))

    status, out, _ = run(["--format", "json", "--provider", "xai", str(path)], capsys)

    (finding,) = [line for line in json_lines(out) if line["type"] == "finding"]
    assert status == 0
    assert (finding["code"], finding["severity"]) == ("dedupe_id_ciphertext_conflict", "warning")
