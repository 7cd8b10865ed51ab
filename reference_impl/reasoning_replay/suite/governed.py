"""What a vector governs where a rule leaves members to the implementation (SPEC §13).

Outputs are compared exactly, except ``request.reasoning`` of a ``plan`` output: SPEC F11 fixes
its ``effort`` and the members the caller passed in ``metadata.reasoning``, and lets an
implementation add members of its own (fast-agent adds ``summary: "auto"``). The runner therefore
narrows the actual output to what the rule governs before the exact comparison, so a conforming
output compares equal and any other still shows its first difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .protocol import Failure, OutputReply, Reply
from .vectors import Case

_SHOULD: Final = "SHOULD"


def governed_reasoning(
    expected: Mapping[str, Any], actual: Any, level: str
) -> dict[str, Any] | None:
    """``actual``'s plan output with ``request.reasoning`` narrowed as SPEC F11 governs it, or
    ``None`` when there is nothing to narrow (the shapes differ: the exact comparison says so)."""
    expected_request = expected.get("request")
    if not isinstance(actual, dict) or not isinstance(expected_request, Mapping):
        return None
    request = actual.get("request")
    if not isinstance(request, dict):
        return None
    wanted = expected_request.get("reasoning", {})
    reasoning = request.get("reasoning", {})
    if not isinstance(wanted, Mapping) or not isinstance(reasoning, dict):
        return None
    # F11: a reasoning with no member SHOULD be omitted; a SHOULD vector holds to that.
    empty_sent = not reasoning and "reasoning" in request
    if empty_sent and "reasoning" not in expected_request and level == _SHOULD:
        return None
    # F11: effort always counts; another member counts when the caller asked for it.
    kept = {name: value for name, value in reasoning.items() if name == "effort" or name in wanted}
    narrowed = {name: value for name, value in request.items() if name != "reasoning"}
    if kept or "reasoning" in expected_request:
        narrowed["reasoning"] = kept
    return {**actual, "request": narrowed}


def governed_reply(case: Case, reply: Reply | Failure) -> Reply | Failure:
    """The reply as the case's expectation governs it (SPEC §13): only plan outputs change."""
    expected = case.expect.output
    if case.operation != "plan" or expected is None or not isinstance(reply, OutputReply):
        return reply
    narrowed = governed_reasoning(expected, reply.output, case.level)
    return reply if narrowed is None else OutputReply(narrowed)
