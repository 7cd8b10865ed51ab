"""Request and stream captures (SPEC H7, R3): redacted by default, raw only on opt-in, private."""

from __future__ import annotations

import json
import logging
import stat
import warnings
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay.history.debug_capture import (
    UNSAFE_RAW_ENV,
    CaptureWriter,
    UnsafeRawCaptureWarning,
    raw_capture_enabled,
    safe_label,
)
from reasoning_replay.history.scan import scan_file

CANARY = "gAAAAAB-CAPTURE-CANARY-c0ffee1234567890=="


def request_body() -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "store": False,
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": CANARY},
        ],
    }


def stream_events() -> list[object]:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": CANARY}
    return [
        {"type": "response.output_item.added", "item": {**item, "encrypted_content": None}},
        {"type": "response.output_item.done", "item": item},
        "data: " + json.dumps({"type": "response.completed", "response": {"output": [item]}}),
    ]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def _no_raw_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNSAFE_RAW_ENV, raising=False)


def test_default_capture_is_redacted_and_private(tmp_path: Path) -> None:
    directory = tmp_path / "captures" / "session"
    writer = CaptureWriter(directory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        request = writer.write_request("turn 1/../x", request_body())
        events = writer.write_events("turn-1", stream_events())
    assert mode(directory) == 0o700
    assert [mode(p) for p in (request, events)] == [0o600, 0o600]
    assert request.parent == directory and events.parent == directory
    assert request.name == "0001-turn_1_.._x.request.json"
    assert events.name == "0002-turn-1.events.jsonl"
    for path in (request, events):
        text = path.read_text()
        assert CANARY not in text
        assert scan_file(path).findings == ()
    document = json.loads(request.read_text())
    assert document["raw"] is False and document["capture"] == "request"
    assert document["payload"]["input"][1]["encrypted_content_bytes"] == len(CANARY)
    header, *lines = (json.loads(line) for line in events.read_text().splitlines())
    assert header == {"capture": "events", "label": "turn-1", "raw": False}
    assert len(lines) == 3
    assert lines[1]["item"]["encrypted_content_sha256"]  # the diagnostic view (R1)


def test_raw_needs_the_opt_in_and_is_marked_private_and_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.warns(UnsafeRawCaptureWarning):
        writer = CaptureWriter(tmp_path / "raw", unsafe_raw=True)
    with caplog.at_level(logging.WARNING, logger="reasoning_replay.history.debug_capture"):
        request = writer.write_request("turn", request_body())
        events = writer.write_events("turn", stream_events())
    assert "raw capture written" in caplog.text and CANARY not in caplog.text
    assert mode(tmp_path / "raw") == 0o700
    assert [mode(p) for p in (request, events)] == [0o600, 0o600]
    document = json.loads(request.read_text())
    assert document["raw"] is True and "bearer-capable" in document["warning"]
    assert document["payload"] == request_body()
    header = json.loads(events.read_text().splitlines()[0])
    assert header["raw"] is True
    assert CANARY in events.read_text()


@pytest.mark.parametrize(
    ("value", "explicit", "raw"),
    [
        ("1", None, True),
        ("true", None, False),
        ("yes", None, False),
        (" 1", None, False),
        ("0", None, False),
        (None, None, False),
        ("1", False, False),  # an explicit False wins over the variable
        (None, True, True),
    ],
)
def test_opt_in_resolution(value: str | None, explicit: bool | None, raw: bool) -> None:
    environ = {} if value is None else {UNSAFE_RAW_ENV: value}
    assert raw_capture_enabled(explicit, environ) is raw


def test_environment_variable_enables_raw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNSAFE_RAW_ENV, "1")
    with pytest.warns(UnsafeRawCaptureWarning):
        writer = CaptureWriter(tmp_path / "c")
    assert writer.raw
    assert CANARY in writer.write_request("r", request_body()).read_text()


def test_sdk_objects_and_foreign_objects_are_redacted(tmp_path: Path) -> None:
    class Sdk:
        def model_dump(self, *, mode: str) -> dict[str, Any]:
            return request_body()

    class Foreign:
        def __repr__(self) -> str:
            return json.dumps({"encrypted_content": CANARY})

    writer = CaptureWriter(tmp_path / "c")
    path = writer.write_events("sdk", [Sdk(), {"obj": Foreign()}])
    assert CANARY not in path.read_text()


def test_safe_label() -> None:
    assert safe_label("..") == "capture"
    assert safe_label("a/b\\c d") == "a_b_c_d"
    assert "/" not in safe_label("../../etc/passwd")
