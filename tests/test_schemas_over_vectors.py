"""Every schema of schema/ (SPEC S1) agrees with every vector whose verdict it can see.

A schema sees a JSON value, never a text rule (SPEC S2) nor the requested model (SPEC F6), so
each check below takes from the vectors only what the schema can judge: the envelope schema the
verdict of a read vector whose text is valid I-JSON, the cache-state schema the structure of each
record a plan or validate vector reads, and the item, update, telemetry and diagnostic-view
schemas the outputs that hold those values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

import pytest
from reasoning_replay.ordering.cache_state import ALLOWED_EFFORTS, CACHE_STATE_CHANNEL
from reasoning_replay.record.jsontext import TextRefused
from reasoning_replay.record.reader import parse_strict
from reasoning_replay.record.redaction import DIAGNOSTIC_VIEW_MEMBERS, is_sensitive_name
from reasoning_replay.resources import data_path
from reasoning_replay.schemas import (
    CACHE_STATE_RECORD_SCHEMA_ID,
    CONFIGURATION_UPDATE_SCHEMA_ID,
    DIAGNOSTIC_VIEW_SCHEMA_ID,
    ENVELOPE_SCHEMA_ID,
    ITEM_SCHEMA_ID,
    TELEMETRY_SCHEMA_ID,
    validator_for,
)
from reasoning_replay.suite.vectors import Case, load_suite

CASES: Final = load_suite([data_path("conformance", "vectors")]).cases
DEFAULT_REGISTRY: Final = ("gpt-6-astra",)


def _cases(operation: str) -> list[Case]:
    return [case for case in CASES if case.operation == operation]


def _valid(schema_id: str, value: object) -> bool:
    return bool(validator_for(schema_id).is_valid(value))


def test_envelope_schema_gives_every_visible_read_verdict() -> None:
    checked = 0
    for case in _cases("read"):
        text = case.input.get("text")
        if not isinstance(text, str) or "beyond-schema" in case.tags:
            continue
        value = parse_strict(text)
        if isinstance(value, TextRefused):  # a text rule decides: beyond any schema (S2)
            continue
        checked += 1
        assert _valid(ENVELOPE_SCHEMA_ID, value) == (case.expect.output is not None), case.id
    assert checked > 200


def test_item_schema_accepts_every_read_output() -> None:
    outputs = [case.expect.output for case in _cases("read") if case.expect.output is not None]
    assert outputs
    for output in outputs:
        assert _valid(ITEM_SCHEMA_ID, output["item"]), output


def _record_texts(messages: object) -> Iterator[tuple[int, str]]:
    """(message index, text) of each assistant record that is one text block of I-JSON."""
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        channels = message.get("channels")
        blocks = channels.get(CACHE_STATE_CHANNEL) if isinstance(channels, Mapping) else None
        if not isinstance(blocks, list) or len(blocks) != 1 or not isinstance(blocks[0], Mapping):
            continue
        text = blocks[0].get("text")
        if blocks[0].get("type") == "text" and isinstance(text, str):
            yield index, text


def _effort_allowed(record: Mapping[str, Any], model: str, registry: tuple[str, ...]) -> bool:
    """SPEC §9.1: what F6 checks beyond the structure, for a record of the requested model."""
    if record["model"] != model:
        return True  # another model's record is ignored, never malformed (F6)
    effort = record["effort"]
    return effort in ALLOWED_EFFORTS if model in registry else effort is None


def _check_records(
    case_id: str, messages: object, reported: set[int], model: str, registry: tuple[str, ...]
) -> int:
    checked = 0
    for index, text in _record_texts(messages):
        value = parse_strict(text)
        if isinstance(value, TextRefused):
            assert index in reported, case_id
            continue
        checked += 1
        well_formed = _valid(CACHE_STATE_RECORD_SCHEMA_ID, value)
        malformed = not well_formed or not _effort_allowed(value, model, registry)
        assert (index in reported) == malformed, (case_id, index, text)
    return checked


def test_cache_state_schema_is_the_structure_check_of_plan_vectors() -> None:
    checked = 0
    for case in _cases("plan"):
        output = case.expect.output
        if output is None or case.input["history"].get("form") == "items":
            continue  # an items-form history holds no record text, and its plan no record (CL3)
        reported = {
            d["message_index"] for d in output["diagnostics"] if d["code"] == "cache_state_invalid"
        }
        if output["record"] is None:  # SPEC F12: another target's plan reads and stores none
            assert not reported, case.id
            continue
        registry = tuple(case.input.get("update_capable_models", DEFAULT_REGISTRY))
        model = output["request"]["model"]
        messages = case.input["history"]["messages"]
        checked += _check_records(case.id, messages, reported, model, registry)
        assert _valid(CACHE_STATE_RECORD_SCHEMA_ID, output["record"]), case.id
    assert checked > 100


def test_cache_state_schema_is_the_structure_check_of_validate_vectors() -> None:
    checked = 0
    for case in _cases("validate"):
        text = case.input.get("history_text")
        output = case.expect.output
        if not isinstance(text, str) or output is None:
            continue
        try:
            history = json.loads(text)
        except ValueError:
            continue
        if not isinstance(history, Mapping):
            continue
        reported = {
            f["message_index"] for f in output["findings"] if f["code"] == "cache_state_invalid"
        }
        for index, record_text in _record_texts(history.get("messages")):
            value = parse_strict(record_text)
            if isinstance(value, TextRefused) or not isinstance(value, dict):
                continue
            checked += 1
            model = value.get("model")
            own_model = model if isinstance(model, str) else ""
            malformed = not _valid(CACHE_STATE_RECORD_SCHEMA_ID, value) or not _effort_allowed(
                value, own_model, DEFAULT_REGISTRY
            )
            assert (index in reported) == malformed, (case.id, index, record_text)
    assert checked > 0


def test_configuration_update_schema_accepts_every_planned_update() -> None:
    updates = [
        item
        for case in _cases("plan")
        if case.expect.output is not None
        for item in case.expect.output["request"]["input"]
        if isinstance(item, Mapping) and item.get("type") == "configuration_update"
    ]
    assert len(updates) > 50
    for update in updates:
        assert _valid(CONFIGURATION_UPDATE_SCHEMA_ID, update), update


@pytest.mark.parametrize("operation", ["replay", "telemetry"])
def test_telemetry_schema_accepts_every_counters_output(operation: str) -> None:
    outputs = [case.expect.output for case in _cases(operation) if case.expect.output is not None]
    assert outputs
    for output in outputs:
        assert _valid(TELEMETRY_SCHEMA_ID, output["counters"]), output["counters"]


def test_item_schema_accepts_every_replayed_item() -> None:
    checked = 0
    for case in _cases("replay"):
        output = case.expect.output
        if output is None:
            continue
        own = [
            item
            for message in case.input["history"]["messages"]
            for item in message.get("items", ())
        ]
        for item in output["input"]:
            if isinstance(item, Mapping) and item.get("type") == "reasoning" and item not in own:
                checked += 1
                assert _valid(ITEM_SCHEMA_ID, item), (case.id, item)
    assert checked > 50


def _views(source: object, redacted: object) -> Iterator[object]:
    """The diagnostic views that SPEC R2 step 1 made of ``source``'s reasoning objects."""
    if redacted == {"redacted": "nesting"}:  # SPEC R2 rule 4 precedes rule 1
        return
    if isinstance(source, Mapping) and isinstance(redacted, Mapping):
        if source.get("type") == "reasoning" and source.keys() != DIAGNOSTIC_VIEW_MEMBERS:
            yield redacted
            return
        for name, value in source.items():
            if not is_sensitive_name(name) and name in redacted:
                yield from _views(value, redacted[name])
    elif isinstance(source, list) and isinstance(redacted, list):
        for value, out in zip(source, redacted, strict=False):
            yield from _views(value, out)


def test_diagnostic_view_schema_accepts_every_redacted_reasoning_object() -> None:
    views = [
        view
        for case in _cases("redact")
        if case.expect.output is not None
        for view in _views(case.input["payload"], case.expect.output["payload"])
    ]
    assert len(views) >= 10
    for view in views:
        assert _valid(DIAGNOSTIC_VIEW_SCHEMA_ID, view), view
