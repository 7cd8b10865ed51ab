"""The ``conformance`` command line: subcommands, exit statuses and files written."""

from __future__ import annotations

import hashlib
import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_dispatch import fake_dispatch
from fakes.suite_fixture import case, fake_cmd, kill_logged, logged_pids, running, write_suite
from reasoning_replay.cli.main import main
from reasoning_replay.suite import inprocess, schemas


@pytest.fixture(autouse=True)
def fake_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process default runs the fake dispatch, not the real reference."""
    monkeypatch.setattr(inprocess, "reference_dispatch", lambda: (fake_dispatch, ("echo",)))


def vectors(tmp_path: Path, *cases: dict[str, Any]) -> str:
    conf = write_suite(tmp_path, {"a.yaml": list(cases) or [case("c/a"), case("c/b", value=2)]})
    return str(conf / "vectors")


def test_run_in_process_passes_with_exit_0(tmp_path: Path, capsys: Any) -> None:
    assert main(["run", "--vectors", vectors(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (
        "PASSED: verdict: 2 passed" in out
        and "diagnostics: 2 passed" in out
        and "reasoning-replay-reference" in out
    )


def test_run_with_failures_exits_1_and_writes_reports(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/ok"), case("c/bad", value="wrong"))
    reports = [f"{fmt}:{tmp_path / ('r.' + fmt)}" for fmt in ("json", "junit", "tap", "markdown")]
    argv = ["run", "--vectors", v]
    for r in reports:
        argv += ["--report", r]
    assert main(argv) == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    assert schemas.errors(schemas.REPORT, doc) == () and doc["unexpected"] == 1
    for fmt in ("junit", "tap", "markdown"):
        assert (tmp_path / f"r.{fmt}").stat().st_size > 0
    assert "FAIL c/bad" in capsys.readouterr().out


def test_run_selection_and_usage_errors(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/ok"), case("c/bad", value="wrong"))
    assert main(["run", "--vectors", v, "-k", "c/ok"]) == 0
    assert main(["run", "--vectors", v, "-k", "nothing-matches"]) == 2
    assert main(["run", "--vectors", v, "--report", "pdf:x"]) == 2
    assert main(["run", "--vectors", v, "--oneshot"]) == 2
    assert "no case matches" in capsys.readouterr().err


def test_run_refuses_an_invalid_suite(tmp_path: Path, capsys: Any) -> None:
    bad = case("c/x")
    del bad["description"]
    assert main(["run", "--vectors", vectors(tmp_path, bad)]) == 2
    assert "conformance check" in capsys.readouterr().err


def test_run_refuses_a_billion_laughs_vector_file_naming_it(tmp_path: Path, capsys: Any) -> None:
    v = Path(vectors(tmp_path))
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    (v / "laughs.yaml").write_text("\n".join([*lines, "cases: [*l8]", ""]))
    assert main(["run", "--vectors", str(v), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "vectors/laughs.yaml: yaml: YAML aliases expand the document" in err


def test_update_expectations_then_rerun_is_green(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/ok"), case("c/bad", value="wrong"))
    exp = tmp_path / "exp.yaml"
    assert (
        main(
            [
                "run",
                "--vectors",
                v,
                "--update-expectations",
                str(exp),
                "--reason",
                "tracked in issue 7",
            ]
        )
        == 1
    )
    text = exp.read_text()
    assert "c/bad" in text and "tracked in issue 7" in text
    assert main(["run", "--vectors", v, "--expectations", str(exp)]) == 0
    assert "1 xfail" in capsys.readouterr().out


def test_stale_expectation_fails_the_run(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path)
    exp = tmp_path / "exp.yaml"
    exp.write_text("entries:\n  - {id: c/renamed-away, state: xfail, reason: r}\n")
    assert main(["run", "--vectors", v, "--expectations", str(exp)]) == 1
    assert "matches no case" in capsys.readouterr().out


def test_run_external_adapter(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/ok"), case("c/crash"), case("c/next"))
    assert main(["run", "--vectors", v, "--impl", fake_cmd()]) == 1
    out = capsys.readouterr().out
    assert "CRASH c/crash" in out and "2 passed" in out
    assert f"conformance run --impl '{fake_cmd()}'" in out


def test_list_prints_ids_with_operation_level_rule_form_and_tags(
    tmp_path: Path, capsys: Any
) -> None:
    v = vectors(tmp_path, case("c/a", tags=["t"]), case("c/b", level="SHOULD", tags=["t"]))
    assert main(["list", "--vectors", v, "--level", "SHOULD"]) == 0
    assert capsys.readouterr().out == "c/b\techo\tSHOULD\tX1\tstorage\tt,form:storage\n"


def test_request_prints_the_exact_line_and_resolves_aliases(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/new", aliases=["c/old"], value="v"))
    assert main(["request", "c/old", "--vectors", v]) == 0
    line = capsys.readouterr().out
    assert line.endswith("\n") and json.loads(line) == {
        "cmd": "run",
        "seq": 1,
        "id": "c/new",
        "operation": "echo",
        "input": {"value": "v"},
    }
    assert main(["request", "c/nwe", "--vectors", v]) == 2
    assert "did you mean c/new" in capsys.readouterr().err


def test_bundle_then_check(tmp_path: Path, capsys: Any) -> None:
    conf = write_suite(
        tmp_path,
        {
            "a.yaml": [
                case("x/a", spec="X1"),
                case("x/b", reject="bad_value", spec="X2"),
                case("x/c", reject="other_code", spec="X2"),
            ]
        },
    )
    assert main(["check", "--suite", str(conf)]) == 1
    assert "bundle_missing" in capsys.readouterr().out
    assert main(["bundle", "--suite", str(conf)]) == 0
    assert (conf / "vectors.bundle.json").is_file()
    assert main(["check", "--suite", str(conf)]) == 0
    assert "ok: 3 cases" in capsys.readouterr().out


def test_smoke_good_adapter(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/a"), case("c/p", operation="plan"))
    assert main(["smoke", "--vectors", v, "--impl", fake_cmd()]) == 0
    out = capsys.readouterr().out
    assert "handshake: fake 1.0" in out and "not supported" in out and "plan" in out


def test_smoke_explains_a_crashing_adapter(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path)
    assert main(["smoke", "--vectors", v, "--impl", fake_cmd("--crash-on-start")]) == 1
    out = capsys.readouterr().out
    assert "BAD  handshake" in out and "missing configuration file" in out


def test_smoke_explains_stdout_noise(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/chatty"))
    assert main(["smoke", "--vectors", v, "--impl", fake_cmd()]) == 1
    assert "send logs and debug output to stderr" in capsys.readouterr().out


def test_forced_progress_bar_draws_on_stderr(tmp_path: Path, capsys: Any) -> None:
    assert main(["run", "--vectors", vectors(tmp_path), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "[" in err and "2/2" in err


def test_quiet_prints_only_the_verdict(tmp_path: Path, capsys: Any) -> None:
    assert main(["run", "--vectors", vectors(tmp_path), "-q"]) == 0
    assert capsys.readouterr().out.startswith("PASSED: verdict: 2 passed")


def test_quiet_does_not_override_an_explicit_progress(tmp_path: Path, capsys: Any) -> None:
    assert main(["run", "--vectors", vectors(tmp_path), "-q", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "2/2" in captured.err and captured.out.startswith("PASSED")


def test_progress_and_no_progress_together_are_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--vectors", vectors(tmp_path), "--progress", "--no-progress"])
    assert exit_info.value.code == 2


def test_a_report_to_stdout_is_all_that_stdout_carries(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/ok"), case("c/bad", value="wrong"))
    assert main(["run", "--vectors", v, "--report", "json:-"]) == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # one JSON document, nothing before or after it
    assert schemas.errors(schemas.REPORT, doc) == () and doc["unexpected"] == 1
    assert "FAIL c/bad" in captured.err
    assert captured.err.rstrip().splitlines()[-1].startswith("FAILED:")  # the summary: stderr


def test_two_reports_to_stdout_are_a_usage_error(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path)
    assert main(["run", "--vectors", v, "--report", "json:-", "--report", "tap:-"]) == 2
    assert "only one report can go to stdout" in capsys.readouterr().err


def test_run_report_json_to_stdout_pipes_into_a_json_reader(tmp_path: Path) -> None:
    """The issue's own check: `conformance run --report json:- -q | python -m json.tool`."""
    argv = ["run", "-k", "read/version/*", "--report", "json:-", "-q"]
    run = subprocess.run(
        [sys.executable, "-m", "reasoning_replay.cli.main", *argv],
        capture_output=True,
        check=False,
        timeout=120,
    )
    tool = subprocess.run(
        [sys.executable, "-m", "json.tool"], input=run.stdout, capture_output=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert tool.returncode == 0, tool.stderr
    assert json.loads(run.stdout)["totals"]["pass"] > 0
    assert run.stderr.decode().startswith("PASSED")


@pytest.mark.parametrize(
    ("impl", "cause"),
    [
        ("no-such-adapter-program", "No such file or directory"),
        (fake_cmd("--crash-on-start"), "missing configuration file"),
        (fake_cmd("--bad-handshake"), "handshake"),
        (f"{shlex.quote(sys.executable)} -c 'print(42)'", "not an object"),
    ],
    ids=["cannot-start", "exits-at-once", "invalid-handshake", "not-the-protocol"],
)
def test_an_adapter_that_does_not_start_ends_the_run_with_one_line_and_exit_2(
    tmp_path: Path, capsys: Any, impl: str, cause: str
) -> None:
    v = vectors(tmp_path, *(case(f"c/{i}") for i in range(50)))
    for extra in ([], ["--oneshot"]):
        assert main(["run", "--vectors", v, "--impl", impl, *extra]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        (line,) = captured.err.splitlines()
        assert line.startswith("conformance run: error: the adapter did not start")
        assert cause in line and "command: " in line and "conformance smoke --impl" in line
        assert "restarted" not in line and "CRASH" not in captured.err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("oneshot", "signum"),
    [(False, signal.SIGTERM), (True, signal.SIGTERM), (False, signal.SIGINT)],
    ids=["persistent-sigterm", "oneshot-sigterm", "persistent-sigint"],
)
def test_sigterm_stops_the_run_and_every_adapter_process_as_ctrl_c_does(
    tmp_path: Path, oneshot: bool, signum: signal.Signals
) -> None:
    log = tmp_path / "pids.log"
    v = vectors(tmp_path, case("c/ok"), case("c/hang"))
    flags = ("--grandchild", str(log), *(("--oneshot",) if oneshot else ()))
    argv = [sys.executable, "-m", "reasoning_replay.cli.main", "run", "--vectors", v]
    argv += ["--impl", fake_cmd(*flags), "--timeout", "600", "--no-progress"]
    argv += ["--oneshot"] if oneshot else []
    runner = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # wait until the adapter handling c/hang has started (one-shot: the probe, c/ok, c/hang)
        want = 3 if oneshot else 1
        for _ in range(600):
            if len(logged_pids(log)) >= 2 * want:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # let the hanging request reach it
        runner.send_signal(signum)
        _, err = runner.communicate(timeout=30)
    finally:
        runner.kill()
        survivors = [p for p in logged_pids(log) if running(p)]
        kill_logged(log)
    assert runner.returncode == 128 + signum
    assert f"interrupted by {signum.name}".encode() in err
    assert len(logged_pids(log)) == 2 * want
    assert survivors == []


CANARY = "gAAAAB-canary-ciphertext-8f14e45fceea167a5a36dedd4bea2543"


def leaky_vectors(tmp_path: Path) -> str:
    """Cases whose request, reply, compared values and messages all carry the canary: as an
    object member, inside a JSON text, only in the adapter's reply, and in a Python repr that a
    schema error quotes."""
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": CANARY}
    envelope = json.dumps({"schema": "s", "version": 1, "item": item})
    reply_only = case("leak/reply-only", value={"encrypted_content": CANARY})
    reply_only["expect"] = {"output": {"value": {"encrypted_content": "gAAAAB-other"}}}
    return vectors(
        tmp_path,
        case("leak/object-wrongval", value={"item": item}),
        case("leak/text-wrongval", value=envelope),
        case("leak/garbage", value=envelope),
        reply_only,
        case("leak/pyrepr", value={"api_key": CANARY}),
    )


def reports_of(tmp_path: Path, *flags: str, capsys: Any) -> dict[str, str]:
    argv = ["run", "--vectors", leaky_vectors(tmp_path), "--impl", fake_cmd(), "-v", *flags]
    for fmt in ("json", "junit", "tap", "markdown"):
        argv += ["--report", f"{fmt}:{tmp_path / ('r.' + fmt)}"]
    assert main(argv) == 1
    texts = {f: (tmp_path / f"r.{f}").read_text() for f in ("json", "junit", "tap", "markdown")}
    return texts | {"terminal": capsys.readouterr().out}


def test_redact_reports_keeps_the_canary_out_of_every_report(tmp_path: Path, capsys: Any) -> None:
    texts = reports_of(tmp_path, "--redact-reports", capsys=capsys)
    assert {f: CANARY in t for f, t in texts.items()} == dict.fromkeys(texts, False)
    doc = json.loads(texts["json"])
    assert schemas.errors(schemas.REPORT, doc) == ()
    outcomes = [c["outcome"] for c in doc["cases"]]
    assert outcomes == ["fail", "fail", "adapter_error", "fail", "adapter_error"]
    assert "is not of type 'object'" in doc["cases"][4]["detail"]["message"]
    digest = hashlib.sha256(CANARY.encode()).hexdigest()
    assert digest in doc["cases"][0]["detail"]["request"]  # the R1 view: structure stays
    assert '"redacted":"encrypted_content"' in doc["cases"][3]["detail"]["response"]
    assert all("request" in c["detail"] for c in doc["cases"])


def test_without_redact_reports_the_vectors_values_are_shown(tmp_path: Path, capsys: Any) -> None:
    texts = reports_of(tmp_path, capsys=capsys)
    assert {f: CANARY in t for f, t in texts.items()} == dict.fromkeys(texts, True)


def test_restarts_are_printed_and_reported_with_their_cause(tmp_path: Path, capsys: Any) -> None:
    v = vectors(tmp_path, case("c/a"), case("c/crash"), case("c/b"))
    report = tmp_path / "r.json"
    assert main(["run", "--vectors", v, "--impl", fake_cmd(), "--report", f"json:{report}"]) == 1
    out = capsys.readouterr().out
    cause = "a crash (the adapter exited with status 3)"
    assert f"the adapter was restarted 1 time(s): 1 after {cause}" in out
    doc = json.loads(report.read_text())
    assert schemas.errors(schemas.REPORT, doc) == ()
    assert doc["restarts"] == 1 and doc["restart_causes"] == {cause: 1}
