"""Logging never emits replay material (SPEC H7): the filter and the JSON formatter."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from reasoning_replay import serialize_reasoning_replay_envelope
from reasoning_replay.history.log_redaction import (
    ReplayRedactingFilter,
    ReplayRedactingJsonFormatter,
    redact_text,
)
from reasoning_replay.history.scan import scan_text
from reasoning_replay.record.envelope import ReasoningReplayItem

CANARY = "gAAAAAB-LOG-CANARY-7f3a9c2e1d5b4a6f8e0c=="
SUMMARY = "PRIVATE-SUMMARY-CANARY"


def reasoning_item() -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": "rs_log",
        "summary": [{"type": "summary_text", "text": SUMMARY}],
        "encrypted_content": CANARY,
    }


def envelope_text() -> str:
    return serialize_reasoning_replay_envelope(
        ReasoningReplayItem(id="rs_log", summary=(SUMMARY,), encrypted_content=CANARY)
    )


class SdkLike:
    """A pydantic-style SDK object whose repr prints its ciphertext (as SDK models do)."""

    def model_dump(self, *, mode: str) -> dict[str, Any]:
        assert mode == "json"
        return reasoning_item()

    def __repr__(self) -> str:
        return f"ResponseReasoningItem(encrypted_content='{CANARY}')"


@dataclass
class Captured:
    logger: logging.Logger
    stream: io.StringIO

    def text(self) -> str:
        return self.stream.getvalue()


def _capture(formatter: logging.Formatter, name: str) -> Iterator[Captured]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ReplayRedactingFilter())
    handler.setFormatter(formatter)
    logger = logging.getLogger(name)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield Captured(logger, stream)
    finally:
        logger.removeHandler(handler)


@pytest.fixture
def plain() -> Iterator[Captured]:
    yield from _capture(logging.Formatter("%(levelname)s %(message)s %(data)s"), "test.plain")


@pytest.fixture
def as_json() -> Iterator[Captured]:
    yield from _capture(ReplayRedactingJsonFormatter(), "test.json")


def log_everything(logger: logging.Logger) -> None:
    body = {"model": "gpt-5", "input": [reasoning_item()], "api_key": "sk-secret"}
    history_message = {"channels": {"openai-reasoning-encrypted": [{"text": envelope_text()}]}}
    logger.debug("request %s", body, extra={"data": body})
    logger.debug("request %(model)s", body, extra={"data": [history_message]})
    logger.debug(json.dumps(body), extra={"data": None})
    logger.debug("body: " + json.dumps(body) + " sent", extra={"data": "x"})
    logger.debug("item %r", SdkLike(), extra={"data": SdkLike()})
    logger.debug("block %s", envelope_text(), extra={"data": json.dumps(history_message)})
    logger.debug(
        'pretty: "encrypted_content": "%s"', CANARY, extra={"data": {"nested": [[history_message]]}}
    )
    logger.debug("msg", extra={"data": {"raw": json.dumps(json.dumps(body))}})


def test_plain_formatter_output_holds_no_ciphertext(plain: Captured) -> None:
    log_everything(plain.logger)
    output = plain.text()
    assert output.count("\n") == 8
    assert CANARY not in output
    assert SUMMARY not in output  # reasoning items become their diagnostic view
    assert "sk-secret" not in output
    assert scan_text(output) == ()
    assert "encrypted_content_sha256" in output  # structure stays visible
    assert "request gpt-5" in output  # a mapping argument still formats


def test_json_formatter_one_object_per_record_without_ciphertext(as_json: Captured) -> None:
    log_everything(as_json.logger)
    lines = as_json.text().splitlines()
    assert len(lines) == 8
    records = [json.loads(line) for line in lines]
    assert all(r["level"] == "DEBUG" and r["logger"] == "test.json" for r in records)
    assert records[0]["data"]["input"][0]["encrypted_content_bytes"] == len(CANARY)
    assert records[0]["data"]["api_key"] == {"redacted": "api_key"}
    assert "args" in records[0]
    assert CANARY not in as_json.text() and SUMMARY not in as_json.text()
    assert scan_text(as_json.text()) == ()


def test_json_formatter_alone_redacts_without_the_filter() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ReplayRedactingJsonFormatter())
    logger = logging.getLogger("test.formatter_only")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        log_everything(logger)
        try:
            raise ValueError(json.dumps({"encrypted_content": CANARY}))
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert CANARY not in stream.getvalue()
    assert json.loads(stream.getvalue().splitlines()[-1])["exception"].startswith("Traceback")


def test_filter_on_logger_redacts_for_every_handler() -> None:
    streams = [io.StringIO(), io.StringIO()]
    logger = logging.getLogger("test.logger_filter")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addFilter(ReplayRedactingFilter())
    handlers = [logging.StreamHandler(s) for s in streams]
    for handler in handlers:
        logger.addHandler(handler)
    try:
        logger.info("%s", {"encrypted_content": CANARY})
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
    assert all(CANARY not in s.getvalue() and "sha256" in s.getvalue() for s in streams)


def test_redact_text_json_embedded_and_fragments() -> None:
    whole = json.dumps({"encrypted_content": CANARY})
    assert json.loads(redact_text(whole))["encrypted_content"]["redacted"] == "encrypted_content"
    nothing = '{"a": 1} plain text'
    assert redact_text(nothing) is nothing
    embedded = "x=" + whole + " y"
    assert redact_text(embedded).startswith("x={") and CANARY not in redact_text(embedded)
    fragment = f'"encrypted_content": "{CANARY}", "id": "rs_1"'
    redacted = redact_text(fragment)
    assert CANARY not in redacted and redacted.endswith('"}, "id": "rs_1"')
    replacement = json.loads("{" + redacted + "}")["encrypted_content"]
    assert replacement["bytes"] == len(CANARY)  # the R2 replacement object
    assert redact_text(redacted) == redacted  # idempotent
    truncated = f'"encrypted_content": "{CANARY[:30]}'
    assert CANARY[:30] not in redact_text(truncated)
    escaped = json.dumps(json.dumps({"encrypted_content": CANARY}))[:-3]
    assert CANARY not in redact_text(escaped)


def test_non_json_values_pass_through_unchanged() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("test.passthrough")
    logger.propagate = False
    handler = logging.StreamHandler(stream)
    handler.addFilter(ReplayRedactingFilter())
    logger.addHandler(handler)
    try:
        logger.warning("%d items, %s, %.1f%%", 3, "ok", 99.5)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "3 items, ok, 99.5%\n"


def test_tracebacks_and_broken_formats_are_redacted(plain: Captured) -> None:
    try:
        raise ValueError(json.dumps({"encrypted_content": CANARY}))
    except ValueError:
        plain.logger.exception("failed", extra={"data": 1})
    plain.logger.debug("one %s two %s", CANARY, extra={"data": 2})  # logging reports the error
    plain.logger.debug("stack", stack_info=True, extra={"data": 3})
    assert "Traceback" in plain.text() and CANARY not in plain.text()
