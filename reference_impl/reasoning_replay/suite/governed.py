"""What a vector governs where a rule leaves members to the implementation (SPEC.md#profiles).

Outputs are compared exactly, except ``request.reasoning`` and ``request.include`` of a ``plan``
output: SPEC F11 fixes ``reasoning``'s ``effort`` and the members the caller passed in
``metadata.reasoning``, and lets an implementation add members of its own (fast-agent adds
``summary: "auto"``); SPEC P5 fixes the entries ``include`` must contain and lets an
implementation add others (``store`` is compared exactly). A ``defaults`` output is compared on
``request.store`` and ``request.include`` only (P5). And the members a case leaves unjudged for
what the implementation announces (``Case.unjudged``: a plan's ``record`` in the items form,
replay ``counters`` without telemetry) are dropped. The runner therefore narrows the actual
output to what the rule governs before the exact comparison, so a conforming output compares
equal and any other still shows its first difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .protocol import Failure, OutputReply, Reply
from .vectors import Case

_SHOULD: Final = "SHOULD"
_DEFAULTS: Final = "defaults"


def governed_reasoning(
    expected: Mapping[str, Any], actual: Any, level: str
) -> dict[str, Any] | None:
    """``actual``'s plan output with ``request.reasoning`` narrowed as SPEC F11 governs it and
    ``request.include`` as SPEC P5 does, or
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
    narrowed_include = _governed_include(expected_request.get("include"), request.get("include"))
    if narrowed_include is not None:
        narrowed["include"] = narrowed_include
    return {**actual, "request": narrowed}


def _governed_include(wanted: object, include: object) -> list[Any] | None:
    """SPEC P5: ``include`` passes when it contains every expected entry; its other entries are
    the implementation's. ``None`` leaves it to the exact comparison, which is also how an
    ``include`` is judged where the expected plan holds none (F11: it must then be absent)."""
    if not isinstance(wanted, list) or not isinstance(include, list):
        return None
    if not all(entry in include for entry in wanted):
        return None
    return list(wanted)


def governed_defaults(expected: Mapping[str, Any], actual: Any) -> dict[str, Any] | None:
    """``actual``'s defaults output narrowed to what SPEC P5 governs: ``request.store`` (exactly,
    and absent when not sent) and ``request.include`` (its expected entries); ``None`` when the
    shapes differ (the exact comparison says so)."""
    expected_request = expected.get("request")
    if not isinstance(actual, dict) or not isinstance(expected_request, Mapping):
        return None
    request = actual.get("request")
    if not isinstance(request, dict):
        return None
    narrowed = {name: request[name] for name in ("store", "include") if name in request}
    include = _governed_include(expected_request.get("include"), request.get("include"))
    if include is not None:
        narrowed["include"] = include
    return {**actual, "request": narrowed}


def governed_reply(case: Case, reply: Reply | Failure) -> Reply | Failure:
    """The reply as the case's expectation governs it (SPEC §13, CL2): unjudged members left
    out, and a plan's or a defaults' request narrowed to what its rules govern."""
    expected = case.expect.output
    if expected is None or not isinstance(reply, OutputReply):
        return reply
    output: Mapping[str, Any] = reply.output
    if case.unjudged:
        output = {name: value for name, value in output.items() if name not in case.unjudged}
    narrowed: dict[str, Any] | None = None
    if case.operation == "plan":
        narrowed = governed_reasoning(expected, output, case.level)
    elif case.operation == _DEFAULTS:
        narrowed = governed_defaults(expected, output)
    if narrowed is not None:
        return OutputReply(narrowed)
    return reply if output is reply.output else OutputReply(output)
