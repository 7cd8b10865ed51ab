"""The reference adapter program speaks the protocol (checked with a fake dispatch, and as a
real subprocess once the reference's operations exist)."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys

import pytest
from fakes.fake_dispatch import fake_dispatch
from reasoning_replay import adapter
from reasoning_replay.suite import jsontext, protocol, schemas


def test_handshake_reply_is_schema_valid() -> None:
    reply = adapter.handle(protocol.START_LINE, fake_dispatch, ("echo",))
    assert reply is not None and schemas.errors(schemas.START_RESPONSE, reply) == ()
    assert reply["implementation"]["operations"] == ["echo"]


def test_run_replies_are_schema_valid() -> None:
    def ask(input: dict[str, object], operation: str = "echo") -> dict[str, object]:
        line = jsontext.dumps(
            {"cmd": "run", "seq": 4, "id": "x", "operation": operation, "input": input}
        )
        reply = adapter.handle(line, fake_dispatch, ("echo",))
        assert reply is not None and schemas.errors(schemas.RUN_RESPONSE, reply) == ()
        return reply

    assert ask({"value": 1}) == {"seq": 4, "output": {"value": 1}}
    assert ask({"reject": "bad_value"}) == {"seq": 4, "reject": {"code": "bad_value"}}
    assert "skipped" in ask({}, operation="plan")
    assert "error" in ask({"value": "raise"})


def test_stop_ends_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "reference_dispatch", lambda: (fake_dispatch, ("echo",)))
    stdin = io.BytesIO(b'{"cmd":"start","protocol":1}\n{"cmd":"stop"}\n{"cmd":"start"}\n')
    stdout = io.BytesIO()
    assert adapter.serve(stdin, stdout, oneshot=False) == 0
    assert len(stdout.getvalue().splitlines()) == 1


@pytest.mark.skipif(
    importlib.util.find_spec("reasoning_replay.operations") is None,
    reason="the reference operations are not written yet",
)
def test_reference_adapter_subprocess_handshake() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reasoning_replay.adapter", "--oneshot"],
        input=protocol.START_LINE,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    info = protocol.parse_start_response(proc.stdout.strip())
    assert isinstance(info, protocol.ImplementationInfo)
