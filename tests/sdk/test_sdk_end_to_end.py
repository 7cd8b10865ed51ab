"""The design note's mocked-transport integration test, end to end, through the real OpenAI SDK.

Without calling a model: a completed response with several reasoning items (distinct multipart
summaries and ciphertexts, one exact duplicate, one id reused with a new ciphertext, unknown SDK
fields, ``status``) is served to ``client.responses.create`` by a mock transport; each item is
captured (SPEC C1–C4) and stored in a fast-agent history file (SPEC H1, H5); the file is reloaded
and the next request is planned (SPEC §9) and sent by the SDK over SSE and over a WebSocket.
The wire carries exactly the allowlisted fields in history order, every summary with its own
item, the duplicate dropped and the reused id kept (SPEC D2, D3); the debug logs (the agent's
and the SDK's own) and the debug captures hold structure only, never a ciphertext or a summary
(SPEC H7).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay import REPLAY_CHANNEL, Code, Diagnostic, HistoryMessage, ReplayTarget
from reasoning_replay import build_replay_input as build_input
from reasoning_replay.history.debug_capture import UNSAFE_RAW_ENV, CaptureWriter
from reasoning_replay.history.history_files import HistoryFile, parse_history_file
from reasoning_replay.history.log_redaction import (
    ReplayRedactingFilter,
    ReplayRedactingJsonFormatter,
)
from reasoning_replay.history.persistence import make_session_directory, write_private_atomic
from reasoning_replay.history.scan import scan_paths
from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL
from reasoning_replay.ordering.planner import Plan, PlanSettings, PlanTransport, plan_request

pytest.importorskip(
    "openai", reason="openai is not importable: install the sdk extras, pip install '.[sdk]'"
)

from sdk_harness import (
    INCLUDE,
    INSTANCE_KEY,
    MODEL,
    LoopbackResponsesServer,
    MockResponses,
    envelope_block,
    expected_replay_item,
    output_item,
    response_json,
    send_over_websocket,
)

RUN = secrets.token_hex(6)  # unique per run: only this test's flow can put these anywhere


def cipher(name: str) -> str:
    return f"gAAAAB-{name}-{RUN}-{secrets.token_hex(12)}=="


def text(name: str) -> str:
    return f"{name} summary part {RUN}"


A = output_item("rs_A", cipher("A"), [text("A1"), text("A2")], content=[])
B = output_item("rs_B", cipher("B"), [text("B1"), text("B2"), text("B3")], content=None)
B_NEW = output_item("rs_B", cipher("B-new"), [text("B-new")])  # SPEC D3: same id, new state
C = output_item(
    "rs_C", cipher("C"), [text("C1")], content=[{"type": "reasoning_text", "text": text("C-raw")}]
)
D = output_item("rs_D", cipher("D"), [text("D1"), text("D2")])  # in the next turn's answer
TURN_1_REASONING = [A, B, dict(A), B_NEW, C]  # dict(A): the exact duplicate (SPEC D2)
SECRETS = [item["encrypted_content"] for item in (A, B, B_NEW, C, D)]
PRIVATE_TEXTS = [
    part["text"]
    for item in (A, B, B_NEW, C, D)
    for part in (*item["summary"], *(item.get("content") or []))
]


def message_item(response_id: str, reply: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{response_id}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": reply, "annotations": []}],
    }


def user_item(words: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": words}]}


ASSISTANT_REPLY = "It is 4."
EXPECTED_INPUT = [
    user_item("Add 2 and 2."),
    expected_replay_item(A),
    expected_replay_item(B),
    expected_replay_item(B_NEW),
    expected_replay_item(C),
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "It is 4."}],
    },
    {"type": "configuration_update", "reasoning": {"effort": "low"}},
    user_item("And 3?"),
]


# --- the agent's logging and captures -------------------------------------------------------


@dataclass(frozen=True)
class Artefacts:
    logs: Path
    captures: CaptureWriter
    logger: logging.Logger


@pytest.fixture
def artefacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Artefacts]:
    """Debug logging of the agent and of the SDK itself, redacted on the handlers (SPEC H7)."""
    monkeypatch.delenv(UNSAFE_RAW_ENV, raising=False)
    logs = tmp_path / "logs"
    logs.mkdir()
    handlers: list[logging.Handler] = [
        logging.FileHandler(logs / "agent.log", encoding="utf-8"),
        logging.FileHandler(logs / "agent.jsonl", encoding="utf-8"),
    ]
    handlers[1].setFormatter(ReplayRedactingJsonFormatter())
    loggers = [logging.getLogger(name) for name in ("sdk_e2e.agent", "openai")]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    for handler in handlers:
        handler.addFilter(ReplayRedactingFilter())
        for logger in loggers:
            logger.addHandler(handler)
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    yield Artefacts(logs, CaptureWriter(tmp_path / "captures"), loggers[0])
    for logger, (level, propagate) in zip(loggers, saved, strict=True):
        for handler in handlers:
            logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    for handler in handlers:
        handler.close()


# --- the steps ------------------------------------------------------------------------------


def first_turn(out: Artefacts) -> list[Any]:
    """Turn 1 through the SDK: a completed response with five reasoning items and a message."""
    output = [*TURN_1_REASONING, message_item("resp_1", ASSISTANT_REPLY)]
    mock = MockResponses(response_json("resp_1", output))
    fields: dict[str, Any] = {
        "model": MODEL,
        "input": [user_item("Add 2 and 2.")],
        "reasoning": {"effort": "high"},
        "store": False,
        "include": INCLUDE,
    }
    out.logger.debug("Responses request", extra={"data": fields})
    response = mock.client().responses.create(**fields)
    out.logger.debug("Responses response %s", response)
    out.captures.write_request("turn-1.response", response)
    return list(response.output)


def history_file_value(output: list[Any]) -> dict[str, Any]:
    """What the agent saves (SPEC H1): the replay channel in output order (ST1), the display
    channel, and the cache-state record of the request (SPEC §9.1)."""
    reasoning = [item for item in output if item.type == "reasoning"]
    blocks = [envelope_block(item, source="response.completed") for item in reasoning]
    display = "\n\n".join(part.text for item in reasoning for part in item.summary)
    record = {"model": MODEL, "key": INSTANCE_KEY, "effort": "high"}
    return {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Add 2 and 2."}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": ASSISTANT_REPLY}],
                "channels": {
                    REPLAY_CHANNEL: blocks,
                    "reasoning": [{"type": "text", "text": display}],
                    CACHE_STATE_CHANNEL: [{"type": "text", "text": json.dumps(record)}],
                },
                "stop_reason": "endTurn",
            },
        ]
    }


def save(session: Path, value: dict[str, Any]) -> Path:
    make_session_directory(session)
    path = session / "history_agent.json"
    write_private_atomic(path, (json.dumps(value, indent=2) + "\n").encode("utf-8"))
    return path


def own_items(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A saved message's own provider items (the agent's edge conversion of SPEC P2)."""
    kind = "input_text" if raw["role"] == "user" else "output_text"
    content = [{"type": kind, "text": block["text"]} for block in raw["content"]]
    return [{"type": "message", "role": raw["role"], "content": content}]


def reload(path: Path) -> list[HistoryMessage]:
    data = path.read_bytes()
    loaded = parse_history_file(data)
    assert isinstance(loaded, HistoryFile), loaded
    saved = json.loads(data)["messages"]
    messages = [
        replace(message, items=own_items(raw))
        for message, raw in zip(loaded.messages, saved, strict=True)
    ]
    return [*messages, HistoryMessage("user", items=[user_item("And 3?")])]


def plan(messages: list[HistoryMessage], transport: PlanTransport) -> Plan:
    planned = plan_request(messages, PlanSettings(MODEL, "low", INSTANCE_KEY, transport=transport))
    assert isinstance(planned, Plan), planned
    return planned


def second_turn_events() -> list[dict[str, Any]]:
    """The answer to turn 2, streamed: it carries a reasoning item of its own (D)."""
    response = response_json("resp_2", [D, message_item("resp_2", "It is 7.")])
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "output": []}},
        {"type": "response.output_item.done", "output_index": 0, "item": D},
        {"type": "response.completed", "response": response},
    ]
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def send_sse(planned: Plan, out: Artefacts) -> dict[str, Any]:
    fields = {**planned.request, "store": False, "include": INCLUDE}
    mock = MockResponses(response_json("resp_2", []), second_turn_events())
    out.logger.debug("Responses request", extra={"data": fields})
    events = list(mock.client().responses.create(**fields, stream=True))
    out.captures.write_request("turn-2.sse.request", fields)
    out.captures.write_events("turn-2.sse", events)
    return mock.last_body


def send_websocket(planned: Plan, out: Artefacts) -> dict[str, Any]:
    fields = {**planned.request, "store": False, "include": INCLUDE}
    with LoopbackResponsesServer(second_turn_events()) as server:
        events = send_over_websocket(server, fields)
    (frame,) = server.frames
    out.logger.debug("ws frame: %s", frame)  # the frame text, as a careless agent logs it
    out.captures.write_events("turn-2.ws", [frame, *events])
    return json.loads(frame)  # type: ignore[no-any-return]


# --- the test -------------------------------------------------------------------------------


def test_captured_stored_reloaded_history_replays_exactly_over_sse_and_websocket(
    tmp_path: Path, artefacts: Artefacts
) -> None:
    output = first_turn(artefacts)
    history_path = save(tmp_path / "session", history_file_value(output))
    messages = reload(history_path)

    sse = send_sse(plan(messages, PlanTransport.SSE), artefacts)
    websocket = send_websocket(plan(messages, PlanTransport.WEBSOCKET), artefacts)

    assert sse["input"] == EXPECTED_INPUT
    assert websocket["input"] == EXPECTED_INPUT
    assert sse["reasoning"] == websocket["reasoning"] == {"effort": "high"}  # SPEC F1
    assert sse["stream"] is True and websocket["type"] == "response.create"

    # the history file holds all five envelopes, the duplicate included, privately (SPEC H4)
    stored = history_path.read_text(encoding="utf-8")
    assert stored.count('\\"schema\\":') == 5
    assert stat.S_IMODE(history_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(history_path.parent.stat().st_mode) == 0o700


def test_reloaded_history_drops_the_exact_duplicate_and_keeps_the_reused_id(
    tmp_path: Path, artefacts: Artefacts
) -> None:
    messages = reload(save(tmp_path / "session", history_file_value(first_turn(artefacts))))
    built = build_input(messages, ReplayTarget("openai"))
    assert (built.deduplicated_exact, built.id_ciphertext_conflicts) == (1, 1)
    assert plan(messages, PlanTransport.SSE).diagnostics == (
        Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, 1, 2),
        Diagnostic(Code.DEDUPE_ID_CIPHERTEXT_CONFLICT, 1, 3),
    )
    kept = [(item["id"], item["encrypted_content"]) for item in built.input if "id" in item]
    assert kept == [(i["id"], i["encrypted_content"]) for i in (A, B, B_NEW, C)]
    telemetry = built.telemetry().to_json()
    assert telemetry["replay_deduplicated_exact_count"] == 1
    assert telemetry["replay_id_ciphertext_conflict_count"] == 1
    assert telemetry["reasoning_replay_summary_parts"] == 7


def test_logs_and_captures_hold_structure_but_no_ciphertext_or_summary(
    tmp_path: Path, artefacts: Artefacts
) -> None:
    messages = reload(save(tmp_path / "session", history_file_value(first_turn(artefacts))))
    send_sse(plan(messages, PlanTransport.SSE), artefacts)
    send_websocket(plan(messages, PlanTransport.WEBSOCKET), artefacts)

    written = sorted(p for p in (tmp_path / "logs", tmp_path / "captures") if p.is_dir())
    files = sorted(f for directory in written for f in directory.rglob("*") if f.is_file())
    assert [f.name for f in files] == [
        "0001-turn-1.response.request.json",
        "0002-turn-2.sse.request.request.json",
        "0003-turn-2.sse.events.jsonl",
        "0004-turn-2.ws.events.jsonl",
        "agent.jsonl",
        "agent.log",
    ]
    everything = "\n".join(f.read_text(encoding="utf-8") for f in files)
    assert not [s for s in SECRETS if s in everything]
    assert not [t for t in PRIVATE_TEXTS if t in everything]
    # ... but the structure is there: digests of every ciphertext that went through
    for secret in SECRETS:
        assert hashlib.sha256(secret.encode()).hexdigest() in everything
    assert any('"logger":"openai' in line for line in everything.splitlines())
    assert all(not scan.findings for scan in scan_paths(written))
    captures = tmp_path / "captures"
    assert stat.S_IMODE(captures.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in captures.iterdir())
