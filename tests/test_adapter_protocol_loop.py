"""The protocol loop the Python framework adapters share (``conformance/implementations/
_protocol_loop.py``), driven in process with a stand-in framework: the handshake, the dispatch
and every reply that is not an output (PROTOCOL.md). It is standard library only, so it is
imported here by path, as the adapters import it in their own environments."""

from __future__ import annotations

import importlib
import io
import json
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"
if str(IMPLEMENTATIONS) not in sys.path:
    sys.path.append(str(IMPLEMENTATIONS))
loop: ModuleType = importlib.import_module("_protocol_loop")


class Framework:
    """A stand-in for a framework's imported pieces."""

    loads = 0

    def __init__(self) -> None:
        Framework.loads += 1


def op_echo(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"echo": dict(data)}


def op_skip(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    raise loop.skipped("no such setting")


def op_reject(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    raise loop.reject("not_resumable", "no item")


def op_refuse(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    raise loop.Refused("ValueError: " + "x" * 50)


def op_crash(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    raise KeyError("input")


def op_surrogate(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"text": "\ud800"}


def op_nan(framework: Framework, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"value": float("nan")}


OPERATIONS = {
    "echo": op_echo,
    "skip": op_skip,
    "reject": op_reject,
    "refuse": op_refuse,
    "crash": op_crash,
    "surrogate": op_surrogate,
    "nan": op_nan,
}


def adapter(**changes: Any) -> Any:
    fields: dict[str, Any] = {
        "name": "stand-in",
        "distribution": "pytest",
        "load": Framework,
        "operations": OPERATIONS,
    }
    return loop.Adapter(**{**fields, **changes})


def session(lines: list[Any], *, oneshot: bool = False, **changes: Any) -> tuple[int, list[Any]]:
    """The exit status and the reply lines of one adapter process given ``lines``."""
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    stdin = io.BytesIO("".join(f"{line}\n" for line in text).encode())
    stdout = io.BytesIO()
    status = loop.serve(adapter(**changes), stdin, stdout, oneshot=oneshot)
    return status, [json.loads(line) for line in stdout.getvalue().splitlines()]


def run(operation: Any, seq: int = 1, data: Any = None) -> dict[str, Any]:
    return {"cmd": "run", "seq": seq, "operation": operation, "input": data or {}}


def test_the_handshake_names_the_distribution_and_its_operations_in_order() -> None:
    announce = {"history_formats": ["items"], "provenance": "none"}
    status, replies = session([{"cmd": "start", "protocol": 1}], announce=announce)
    assert status == 0
    implementation = replies[0]["implementation"]
    assert replies[0]["protocol"] == 1
    assert list(implementation) == [
        "name",
        "version",
        "language",
        "homepage",
        "operations",
        "history_formats",
        "provenance",
        "python",
    ]
    assert implementation["name"] == "stand-in"
    assert implementation["version"] == metadata.version("pytest")
    assert implementation["homepage"] == "https://pypi.org/project/pytest/"
    assert implementation["operations"] == list(OPERATIONS)
    assert implementation["python"] == sys.version.split()[0]


def test_the_framework_is_loaded_once_before_the_first_request() -> None:
    before = Framework.loads
    session([{"cmd": "start"}, run("echo"), run("echo", 2)])
    assert Framework.loads == before + 1


def test_an_output_is_the_operations_result_under_the_requests_seq() -> None:
    _, replies = session([run("echo", 7, {"a": "é"})])
    assert replies == [{"seq": 7, "output": {"echo": {"a": "é"}}}]


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        ("skip", {"skipped": {"reason": "no such setting"}}),
        ("reject", {"reject": {"code": "not_resumable", "message": "no item"}}),
        ("refuse", {"reject": {"code": "raised", "message": "ValueError: " + "x" * 50}}),
    ],
)
def test_an_early_answer_is_its_reply(operation: str, expected: dict[str, Any]) -> None:
    _, replies = session([run(operation, 3)])
    assert replies == [{"seq": 3, **expected}]


def test_a_refusal_is_cut_to_the_adapters_limit() -> None:
    _, replies = session([run("refuse")], refusal_limit=12)
    assert replies[0]["reject"] == {"code": "raised", "message": "ValueError: "}


def test_an_exception_is_an_error_reply_with_its_traceback() -> None:
    _, replies = session([run("crash", 4), run("echo", 5)])
    assert replies[0]["seq"] == 4
    assert replies[0]["error"]["message"] == "KeyError: 'input'"
    assert "Traceback" in replies[0]["error"]["traceback"]
    assert replies[1] == {"seq": 5, "output": {"echo": {}}}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON: Expecting value: line 1 column 1 (char 0)"),
        ([1], "request is not a JSON object"),
        (run("unknown", 0), "cannot run 'run' 'unknown'"),
        (run(["echo"], 0), "cannot run 'run' ['echo']"),
        ({"cmd": "go", "seq": 0}, "cannot run 'go' None"),
        ({"cmd": "run", "seq": 0, "operation": "echo", "input": []}, "cannot run 'run' 'echo'"),
    ],
)
def test_a_request_that_cannot_run_is_an_error_reply_and_the_loop_goes_on(
    line: Any, message: str
) -> None:
    _, replies = session([line, run("echo", 9)])
    assert replies == [
        {"seq": 0, "error": {"message": message}},
        {"seq": 9, "output": {"echo": {}}},
    ]


def test_a_negative_or_boolean_seq_is_answered_as_zero() -> None:
    _, replies = session([run("echo", -1), {**run("echo"), "seq": True}])
    assert [reply["seq"] for reply in replies] == [0, 0]


def test_stop_ends_the_session_without_a_reply() -> None:
    status, replies = session([run("echo"), {"cmd": "stop"}, run("echo", 2)])
    assert status == 0
    assert replies == [{"seq": 1, "output": {"echo": {}}}]


def test_oneshot_answers_one_request_and_exits() -> None:
    status, replies = session(["", run("echo"), run("echo", 2)], oneshot=True)
    assert status == 0
    assert replies == [{"seq": 1, "output": {"echo": {}}}]


def test_a_lone_surrogate_travels_as_its_escape() -> None:
    stdout = io.BytesIO()
    loop.serve(adapter(), io.BytesIO(json.dumps(run("surrogate")).encode()), stdout, oneshot=True)
    assert stdout.getvalue() == b'{"seq":1,"output":{"text":"\\ud800"}}\n'


def test_a_value_json_cannot_hold_is_an_error_reply() -> None:
    _, replies = session([run("nan", 6)])
    assert replies[0]["seq"] == 6
    assert replies[0]["error"]["message"].startswith("not JSON: ")


def test_a_framework_that_cannot_load_exits_1_with_no_reply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken() -> Framework:
        raise ImportError("no module named 'framework'")

    status, replies = session([{"cmd": "start"}], load=broken)
    assert (status, replies) == (1, [])
    assert "no module named 'framework'" in capsys.readouterr().err
