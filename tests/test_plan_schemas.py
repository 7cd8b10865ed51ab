"""What a plan produces validates against the schemas of SPEC §10 (S1) for §9's items."""

from __future__ import annotations

import json

from reasoning_replay.ordering.planner import PlanSettings, PlanTransport, plan_request
from reasoning_replay.record.history import HistoryMessage
from reasoning_replay.schemas import (
    CACHE_STATE_RECORD_SCHEMA_ID,
    CONFIGURATION_UPDATE_SCHEMA_ID,
    validator_for,
)

KEY = "0123456789abcdef0123456789abcdef"


def _user(text: str) -> HistoryMessage:
    return HistoryMessage("user", items=[{"type": "message", "role": "user", "content": text}])


def _assistant(effort: str) -> HistoryMessage:
    record = json.dumps({"model": "gpt-6-astra", "key": KEY, "effort": effort})
    return HistoryMessage(
        "assistant",
        channels={"fast-agent-responses-cache-state": [{"type": "text", "text": record}]},
        items=[{"type": "message", "role": "assistant", "content": "a"}],
    )


def test_planned_updates_and_record_validate_against_their_schemas() -> None:
    history = [_user("u1"), _assistant("low"), _user("u2"), _assistant("high"), _user("u3")]
    plan = plan_request(history, PlanSettings("gpt-6-astra", "max", KEY))
    assert not isinstance(plan, str)
    updates = [i for i in plan.request["input"] if i["type"] == "configuration_update"]
    assert [u["reasoning"]["effort"] for u in updates] == ["high", "max"]
    update_schema = validator_for(CONFIGURATION_UPDATE_SCHEMA_ID)
    assert all(update_schema.is_valid(update) for update in updates)
    assert validator_for(CACHE_STATE_RECORD_SCHEMA_ID).is_valid(plan.record.to_json())


def test_record_of_a_model_without_updates_validates_with_null_effort() -> None:
    plan = plan_request(
        [_user("u1")], PlanSettings("gpt-5.4", "high", KEY, transport=PlanTransport.SSE)
    )
    assert not isinstance(plan, str)
    assert plan.record.effort is None
    assert validator_for(CACHE_STATE_RECORD_SCHEMA_ID).is_valid(plan.record.to_json())


def test_update_schema_refuses_an_effort_an_update_capable_model_does_not_allow() -> None:
    update = {"type": "configuration_update", "reasoning": {"effort": "minimal"}}
    assert not validator_for(CONFIGURATION_UPDATE_SCHEMA_ID).is_valid(update)
