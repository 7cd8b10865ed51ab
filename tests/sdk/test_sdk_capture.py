"""Capture from the real OpenAI SDK's objects (SPEC C1–C4): ``ResponseReasoningItem`` models,
validated and constructed, with unknown fields and every ``status``; and stream events the SDK
parsed from server-sent events served by a mock transport.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from reasoning_replay import Code, canonicalize_completed_reasoning_output_item

pytest.importorskip(
    "openai", reason="openai is not importable: install the sdk extras, pip install '.[sdk]'"
)

import pydantic
from openai.types.responses import ResponseReasoningItem
from sdk_harness import (
    MockResponses,
    events_of_type,
    output_item,
    response_json,
    summary_parts,
)

ENVELOPE = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":'
    '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"first"},'
    '{"type":"summary_text","text":"second"}],"encrypted_content":"gAAAA-one"}}'
)


def raw_item(status: str | None) -> dict[str, Any]:
    return output_item("rs_1", "gAAAA-one", ["first", "second"], status=status, content=None)


def validated(raw: dict[str, Any]) -> ResponseReasoningItem:
    return ResponseReasoningItem.model_validate(raw)


def constructed(raw: dict[str, Any]) -> ResponseReasoningItem:
    """How the SDK's client builds response objects: without validation."""
    return ResponseReasoningItem.construct(**raw)


BUILDERS: dict[str, Callable[[dict[str, Any]], ResponseReasoningItem]] = {
    "model_validate": validated,
    "construct": constructed,
}


# --- SDK models -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["completed", None])
@pytest.mark.parametrize("builder", BUILDERS)
def test_sdk_model_captures_only_allowlisted_members(builder: str, status: str | None) -> None:
    item = BUILDERS[builder](raw_item(status))
    dumped = item.model_dump(mode="json")  # what the SDK object carries, extras included
    assert dumped["future_item_field"] == {"nested": True}
    assert dumped["summary"][0]["future_part_field"] == 1
    assert dumped["status"] == status and dumped["content"] is None

    captured = canonicalize_completed_reasoning_output_item(item, source="response.completed")

    assert captured.code is None
    assert captured.envelope_text == ENVELOPE


@pytest.mark.parametrize("status", ["in_progress", "incomplete"])
@pytest.mark.parametrize("builder", BUILDERS)
def test_sdk_model_with_unfinished_status_is_not_captured(builder: str, status: str) -> None:
    item = BUILDERS[builder](raw_item(status))
    captured = canonicalize_completed_reasoning_output_item(item, source="response.completed")
    assert (captured.envelope_text, captured.code) == (None, Code.CAPTURE_NOT_COMPLETED)


def test_constructed_model_with_unknown_status_is_not_captured() -> None:
    with pytest.raises(pydantic.ValidationError):
        validated(raw_item("failed"))
    captured = canonicalize_completed_reasoning_output_item(
        constructed(raw_item("failed")), source="response.output_item.done"
    )
    assert captured.code is Code.CAPTURE_NOT_COMPLETED


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"summary": [{"type": "summary_image", "url": "u"}]}, Code.ITEM_SUMMARY_INVALID),
        ({"id": ""}, Code.ITEM_ID_INVALID),
        ({"encrypted_content": None}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"content": [{"type": "reasoning_text"}]}, Code.ITEM_CONTENT_INVALID),
    ],
)
def test_constructed_model_the_sdk_did_not_validate_is_checked_by_capture(
    change: dict[str, Any], code: Code
) -> None:
    captured = canonicalize_completed_reasoning_output_item(
        constructed({**raw_item("completed"), **change}), source="response.completed"
    )
    assert (captured.envelope_text, captured.code) == (None, code)


# --- stream events parsed by the SDK --------------------------------------------------------

PARTIAL = "gAAAA-partial"  # what an early response.output_item.added may carry (SPEC C1)


def added(index: int, item: dict[str, Any], status: str | None) -> dict[str, Any]:
    early = {**item, "status": status, "summary": []}
    if item["type"] == "reasoning":
        early["encrypted_content"] = PARTIAL
    return {"type": "response.output_item.added", "output_index": index, "item": early}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def message_item() -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "4", "annotations": []}],
    }


FIRST = output_item("rs_1", "gAAAA-full-1", ["one: a", "one: b"])
SECOND = output_item("rs_2", "gAAAA-full-2", ["two"])


def stream(
    final_output: list[dict[str, Any]],
    kind: str = "response.completed",
    added_status: str | None = "in_progress",
) -> list[Any]:
    """Serve a reasoning stream through the SDK; the events it parsed."""
    items = [FIRST, SECOND, message_item()]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response_json("resp_1", [])}
    ]
    for index, item in enumerate(items):
        events += [added(index, item, added_status), done(index, item)]
    final = {**response_json("resp_1", final_output), "status": kind.rpartition(".")[2]}
    events.append({"type": kind, "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    mock = MockResponses(final, events)
    client = mock.client()
    return list(client.responses.create(model="gpt-5", input="Add 2 and 2.", stream=True))


def item_sources(event: Any) -> Iterator[tuple[Any, str]]:
    """The items an event carries, each with the capture source the event's type names."""
    if event.type in ("response.output_item.added", "response.output_item.done"):
        yield event.item, event.type
    elif event.type in ("response.completed", "response.incomplete"):
        yield from ((item, event.type) for item in event.response.output)


def capture_items(
    pairs: Iterable[tuple[Any, str]],
) -> tuple[dict[str, str], list[tuple[str, Code]]]:
    """Capture as an agent would: each reasoning item with its source; the first completed
    capture of an id wins. The envelopes by item id, in capture order, and each refusal."""
    envelopes: dict[str, str] = {}
    refused: list[tuple[str, Code]] = []
    for item, source in pairs:
        if item.type != "reasoning" or item.id in envelopes:
            continue
        captured = canonicalize_completed_reasoning_output_item(item, source=source)
        if captured.envelope_text is None:
            assert captured.code is not None
            refused.append((source, captured.code))
        else:
            envelopes[item.id] = captured.envelope_text
    return envelopes, refused


def capture_all(events: Iterable[Any]) -> tuple[dict[str, str], list[tuple[str, Code]]]:
    return capture_items(pair for event in events for pair in item_sources(event))


def test_sdk_parses_output_item_done_into_reasoning_models_with_final_ciphertext() -> None:
    events = stream([])
    done_items = [event.item for event in events_of_type(events, "response.output_item.done")]
    reasoning = [item for item in done_items if item.type == "reasoning"]
    assert all(isinstance(item, ResponseReasoningItem) for item in reasoning)
    assert [item.encrypted_content for item in reasoning] == ["gAAAA-full-1", "gAAAA-full-2"]


@pytest.mark.parametrize("added_status", ["in_progress", "completed", None])
def test_only_output_item_done_captures_and_added_is_refused(added_status: str | None) -> None:
    envelopes, refused = capture_all(stream([], added_status=added_status))
    assert list(envelopes) == ["rs_1", "rs_2"]
    assert refused == [("response.output_item.added", Code.CAPTURE_NOT_COMPLETED)] * 2
    assert not any(PARTIAL in text for text in envelopes.values())
    assert all('"status"' not in text for text in envelopes.values())


def test_completed_with_empty_output_loses_nothing_captured_from_done() -> None:
    events = stream([])
    (completed,) = events_of_type(events, "response.completed")
    assert completed.response.output == []  # the SDK does not fill it in
    envelopes, _ = capture_all(events)
    with_output, _ = capture_all(stream([FIRST, SECOND, message_item()]))
    assert envelopes == with_output
    assert '"text":"one: a"},{"type":"summary_text","text":"one: b"}' in envelopes["rs_1"]


def test_completed_output_alone_captures_every_reasoning_item_in_order() -> None:
    events = [e for e in stream([SECOND, FIRST]) if e.type != "response.output_item.done"]
    envelopes, _ = capture_all(events)
    assert list(envelopes) == ["rs_2", "rs_1"]


def test_incomplete_response_captures_its_completed_items_only() -> None:
    unfinished = output_item("rs_3", "gAAAA-cut", ["cut"], status="incomplete")
    events = stream([FIRST, unfinished], kind="response.incomplete")
    final_only = [e for e in events if e.type == "response.incomplete"]
    envelopes, refused = capture_all(final_only)
    assert list(envelopes) == ["rs_1"]
    assert refused == [("response.incomplete", Code.CAPTURE_NOT_COMPLETED)]


def test_non_streamed_response_output_is_captured_from_sdk_objects() -> None:
    first = {**FIRST, "summary": summary_parts("x", "y"), "content": []}
    mock = MockResponses(response_json("resp_2", [message_item(), first, SECOND]))
    response = mock.client().responses.create(model="gpt-5", input="Add 2 and 2.")
    envelopes, refused = capture_items((item, "response.completed") for item in response.output)
    assert refused == []
    assert list(envelopes) == ["rs_1", "rs_2"]
    assert '"content"' not in envelopes["rs_1"]
