"""The runner compares a plan's ``request.reasoning`` and ``request.include`` as SPEC F11 and P5
govern them (SPEC §13)."""

from __future__ import annotations

from typing import Any

import pytest
from reasoning_replay.suite.governed import governed_reply
from reasoning_replay.suite.outcomes import Outcome, judge
from reasoning_replay.suite.protocol import OutputReply, RejectReply
from reasoning_replay.suite.vectors import Case, Expect


def _plan_case(reasoning: dict[str, Any] | None, level: str = "MUST", op: str = "plan") -> Case:
    request: dict[str, Any] = {"model": "m", "prompt_cache_key": "k", "input": []}
    if reasoning is not None:
        request["reasoning"] = reasoning
    output = {"request": request, "record": {"model": "m", "key": "k", "effort": None}}
    return Case("plan/x", "d", "F11", op, level, (), {}, Expect(output=output), "f.yaml")


def _outcome(case: Case, reasoning: Any, *, absent: bool = False) -> Outcome:
    request: dict[str, Any] = {"model": "m", "prompt_cache_key": "k", "input": []}
    if not absent:
        request["reasoning"] = reasoning
    output = {"request": request, "record": {"model": "m", "key": "k", "effort": None}}
    return judge(case.expect, governed_reply(case, OutputReply(output))).outcome


def test_an_implementation_member_other_than_effort_passes() -> None:
    case = _plan_case({"effort": "low"})
    assert _outcome(case, {"effort": "low", "summary": "auto"}) is Outcome.PASS


def test_a_wrong_effort_fails() -> None:
    assert _outcome(_plan_case({"effort": "low"}), {"effort": "high"}) is Outcome.FAIL


def test_a_missing_effort_fails() -> None:
    assert _outcome(_plan_case({"effort": "low"}), {"summary": "auto"}) is Outcome.FAIL


def test_an_effort_where_none_is_expected_fails() -> None:
    assert _outcome(_plan_case(None), {"effort": "low"}) is Outcome.FAIL


def test_a_caller_member_must_keep_its_value() -> None:
    case = _plan_case({"effort": "low", "summary": "concise"})
    assert _outcome(case, {"effort": "low", "summary": "auto"}) is Outcome.FAIL
    assert _outcome(case, {"effort": "low"}) is Outcome.FAIL
    assert _outcome(case, {"effort": "low", "summary": "concise", "x": 1}) is Outcome.PASS


@pytest.mark.parametrize(("reasoning", "absent"), [({}, False), (None, True), ({"x": 1}, False)])
def test_no_reasoning_expected_accepts_absent_empty_or_own_members(
    reasoning: Any, absent: bool
) -> None:
    assert _outcome(_plan_case(None), reasoning, absent=absent) is Outcome.PASS


def test_a_should_vector_fails_an_empty_reasoning_but_not_own_members() -> None:
    case = _plan_case(None, level="SHOULD")
    assert _outcome(case, {}) is Outcome.FAIL
    assert _outcome(case, {"summary": "auto"}) is Outcome.PASS
    assert _outcome(case, None, absent=True) is Outcome.PASS


def test_a_reasoning_that_is_not_an_object_still_fails() -> None:
    assert _outcome(_plan_case({"effort": "low"}), "low") is Outcome.FAIL


def test_other_operations_compare_exactly() -> None:
    case = _plan_case({"effort": "low"}, op="replay")
    assert _outcome(case, {"effort": "low", "summary": "auto"}) is Outcome.FAIL


def test_rejections_pass_through_unchanged() -> None:
    reply = RejectReply("plan_effort_invalid")
    assert governed_reply(_plan_case({"effort": "low"}), reply) is reply


def _include_outcome(include: Any, *, store: Any = False) -> Outcome:
    """SPEC P5 and §13: ``include`` must contain the expected entry; ``store`` is exact."""
    expected = {"model": "m", "store": False, "include": ["reasoning.encrypted_content"]}
    output = {"request": expected, "record": None}
    case = Case("plan/x", "d", "P5", "plan", "MUST", (), {}, Expect(output=output), "f.yaml")
    actual = {"request": {"model": "m", "store": store, "include": include}, "record": None}
    return judge(case.expect, governed_reply(case, OutputReply(actual))).outcome


def test_include_with_implementation_entries_besides_the_expected_one_passes() -> None:
    include = ["web_search_call.action.sources", "reasoning.encrypted_content"]
    assert _include_outcome(include) is Outcome.PASS


@pytest.mark.parametrize("include", [[], ["web_search_call.action.sources"], None, "x"])
def test_include_without_the_expected_entry_fails(include: Any) -> None:
    assert _include_outcome(include) is Outcome.FAIL


@pytest.mark.parametrize("store", [True, None, "false"])
def test_store_is_compared_exactly(store: Any) -> None:
    assert _include_outcome(["reasoning.encrypted_content"], store=store) is Outcome.FAIL


@pytest.mark.parametrize(
    "include", [["reasoning.encrypted_content"], [], ["web_search_call.action.sources"]]
)
def test_an_include_where_the_plan_expects_none_fails(include: Any) -> None:
    """SPEC P5, §13: a plan for a model without reasoning, or for the compact endpoint, holds no
    ``include``; any ``include`` then fails, whatever its entries."""
    expected = {"model": "m", "store": False}
    case = Case("plan/x", "d", "P5", "plan", "MUST", (), {}, Expect({"request": expected}), "f")
    actual = {"request": {"model": "m", "store": False, "include": include}}
    absent = {"request": {"model": "m", "store": False}}

    assert judge(case.expect, governed_reply(case, OutputReply(actual))).outcome is Outcome.FAIL
    assert judge(case.expect, governed_reply(case, OutputReply(absent))).outcome is Outcome.PASS


def _defaults_outcome(request: dict[str, Any]) -> Outcome:
    expected = {"request": {"store": False, "include": ["reasoning.encrypted_content"]}}
    case = Case("defaults/x", "d", "P5", "defaults", "MUST", (), {}, Expect(output=expected), "f")
    return judge(case.expect, governed_reply(case, OutputReply({"request": request}))).outcome


def test_a_defaults_output_is_judged_on_store_and_include_only() -> None:
    sent = {
        "model": "m",
        "store": False,
        "include": ["file_search_call.results", "reasoning.encrypted_content"],
        "prompt_cache_key": "not a key",
        "reasoning": {"effort": "high"},
    }
    assert _defaults_outcome(sent) is Outcome.PASS
    assert _defaults_outcome({**sent, "store": True}) is Outcome.FAIL
    assert _defaults_outcome({k: v for k, v in sent.items() if k != "store"}) is Outcome.FAIL
    assert _defaults_outcome({**sent, "include": ["file_search_call.results"]}) is Outcome.FAIL
    assert _defaults_outcome({k: v for k, v in sent.items() if k != "include"}) is Outcome.FAIL
