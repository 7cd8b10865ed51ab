"""A canary ciphertext through the whole reference, end to end (SPEC R1–R3, T2, H5–H8).

One unique ``encrypted_content`` is captured, persisted, reloaded, replayed over SSE and
WebSocket, logged, captured for debugging, counted by telemetry and exported both ways. It may
appear only where it must: the history file, the resumable export and the provider request
bodies. Both a plain substring search and the leak scanner (SPEC H8) must agree on that, for
every file written.
"""

from __future__ import annotations

import json
import logging
import secrets
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay import (
    REPLAY_CHANNEL,
    ReplayTarget,
    Transport,
    build_replay_input,
    canonicalize_completed_reasoning_output_item,
    replay_telemetry,
)
from reasoning_replay.history.debug_capture import UNSAFE_RAW_ENV, CaptureWriter
from reasoning_replay.history.export import ExportMode, export_history
from reasoning_replay.history.history_files import HistoryFile, parse_history_file
from reasoning_replay.history.log_redaction import (
    ReplayRedactingFilter,
    ReplayRedactingJsonFormatter,
)
from reasoning_replay.history.persistence import make_session_directory, write_private_atomic
from reasoning_replay.history.scan import scan_paths, sha256_prefix

# Unique per run, so nothing but this test's own flow can put it anywhere.
CANARY = f"gAAAAAB-CANARY-{secrets.token_hex(16)}+/=="
SUMMARY = f"canary summary {secrets.token_hex(4)}"


def provider_output_item() -> dict[str, Any]:
    """A completed reasoning item as the SDK returns it (SPEC §15)."""
    return {
        "id": "rs_canary",
        "type": "reasoning",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": SUMMARY, "annotations": []}],
        "encrypted_content": CANARY,
        "content": None,
    }


def history_value(envelope_text: str) -> dict[str, Any]:
    """A saved history of fast-agent's shape (SPEC H1) with the captured envelope stored."""
    return {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Add 2 and 2."}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "4"}],
                "channels": {
                    REPLAY_CHANNEL: [{"type": "text", "text": envelope_text}],
                    "reasoning": [{"type": "text", "text": SUMMARY}],
                },
                "stop_reason": "endTurn",
            },
            {"role": "user", "content": [{"type": "text", "text": "And 3?"}]},
        ]
    }


def _write(path: Path, value: object) -> Path:
    write_private_atomic(path, (json.dumps(value, indent=2) + "\n").encode("utf-8"))
    return path


def _logger(directory: Path) -> tuple[logging.Logger, list[logging.Handler]]:
    logger = logging.getLogger("canary.provider")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    plain = logging.FileHandler(directory / "debug.log", encoding="utf-8")
    plain.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    structured = logging.FileHandler(directory / "debug.jsonl", encoding="utf-8")
    structured.setFormatter(ReplayRedactingJsonFormatter())
    logger.addFilter(ReplayRedactingFilter())  # on the logger: before every handler
    for handler in (plain, structured):
        logger.addHandler(handler)
    return logger, [plain, structured]


def _log_carelessly(out: Path, request: dict[str, Any], ws_frame: object, **more: Any) -> None:
    """Step 5: debug logging through the filter, every way a careless caller might log."""
    logger, handlers = _logger(out)
    try:
        logger.debug("request %s", request)
        logger.debug("request body: " + json.dumps(request))
        logger.debug("ws frame", extra={"frame": ws_frame, "history": more["history"]})
        logger.debug("stored block %s", more["envelope_text"])
        logger.debug("history %s", more["history_text"])
        logger.debug("messages %s", more["messages"])  # dataclass reprs hold the envelope text
        logger.info("%(model)s request with %(input)s", request)
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.filters.clear()


def _capture_for_debugging(out: Path, request: dict[str, Any], ws_frame: object) -> None:
    """Step 6: debug capture in the default mode (SPEC H7, R3)."""
    completed = {"type": "response.completed", "output": [provider_output_item()]}
    captures = CaptureWriter(out / "captures")
    captures.write_request("sse", request)
    captures.write_events(
        "ws",
        [
            ws_frame,
            {"type": "response.output_item.done", "item": provider_output_item()},
            "data: " + json.dumps(completed),
        ],
    )


def test_canary_appears_only_where_it_must(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNSAFE_RAW_ENV, raising=False)
    session = tmp_path / "session"
    make_session_directory(session)
    out = tmp_path / "artefacts"
    out.mkdir()

    # 1. capture (SPEC C1–C3)
    captured = canonicalize_completed_reasoning_output_item(
        provider_output_item(), source="response.output_item.done"
    )
    assert captured.envelope_text is not None and CANARY in captured.envelope_text

    # 2. persist (SPEC H5) and 3. reload (SPEC H1)
    history_file = _write(session / "history_agent.json", history_value(captured.envelope_text))
    loaded = parse_history_file(history_file.read_bytes())
    assert isinstance(loaded, HistoryFile)

    # 4. request build, both transports (SPEC P1–P3)
    bodies = {}
    for transport in (Transport.SSE, Transport.WEBSOCKET):
        built = build_replay_input(loaded.messages, ReplayTarget("openai", transport))
        assert built.diagnostics == ()
        bodies[transport] = {"model": "gpt-5", "store": False, "input": list(built.input)}
    request = bodies[Transport.SSE]
    assert request["input"] == bodies[Transport.WEBSOCKET]["input"]
    assert request["input"][0]["encrypted_content"] == CANARY
    sse_body = _write(out / "provider_request.sse.json", request)
    ws_frame = {"type": "response.create", **bodies[Transport.WEBSOCKET]}
    ws_body = _write(out / "provider_request.websocket.json", ws_frame)

    # 5. logging and 6. debug capture
    _log_carelessly(
        out,
        request,
        ws_frame,
        history=history_value(captured.envelope_text),
        envelope_text=captured.envelope_text,
        history_text=history_file.read_text(),
        messages=loaded.messages,
    )
    _capture_for_debugging(out, request, ws_frame)

    # 7. telemetry (SPEC T1, T2)
    telemetry = replay_telemetry(request["input"]).to_json()
    assert telemetry["reasoning_replay_encrypted_bytes"] == len(CANARY)
    _write(out / "telemetry.json", telemetry)

    # 8. exports (SPEC H6): resumable (holds the canary by design) and redacted
    stored = json.loads(history_file.read_text())
    resumable = export_history(stored, ExportMode.RESUMABLE)
    redacted = export_history(stored, ExportMode.REDACTED)
    assert isinstance(resumable, dict) and isinstance(redacted, dict)
    resumable_file = _write(out / "export.resumable.json", resumable)
    _write(out / "export.redacted.json", redacted)

    # Where the canary is, by substring and by scanner: exactly the expected files.
    allowed = {history_file, resumable_file, sse_body, ws_body}
    every_file = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert len(every_file) == 10  # 4 allowed, 2 logs, 2 captures, telemetry, redacted export
    assert {p for p in every_file if CANARY in p.read_text(encoding="utf-8")} == allowed
    results = list(scan_paths([tmp_path]))
    assert {r.path for r in results} == set(every_file)
    assert all(r.error is None and r.skipped is None for r in results)
    assert {r.path for r in results if r.findings} == allowed
    # ... and the scanner reports only digests: of the ciphertext, or of the envelope text.
    expected = {sha256_prefix(CANARY), sha256_prefix(captured.envelope_text)}
    assert {f.sha256_prefix for r in results for f in r.findings} <= expected

    # The logs still show the structure (they are useful), never the value.
    log_text = (out / "debug.log").read_text()
    assert log_text.count("\n") >= 7 and "encrypted_content_sha256" in log_text
    assert all(json.loads(line) for line in (out / "debug.jsonl").read_text().splitlines())
