"""openai-agents' own agent loop against the loopback Responses server, judged by the reference.

``openai_agents_driver.py`` runs ``Runner`` with an ``Agent`` on ``OpenAIResponsesModel`` in
openai-agents' environment (``python tools/install_implementation.py openai-agents``; skipped
without it), with a ``SQLiteSession`` file: two turns (the second a tool loop, at another
effort), then a new process that resumes from that session store: a turn over a WebSocket, a
turn on xAI's Responses API (a provider switch: a second server) and a turn back on OpenAI. The
three transports of the server are used: JSON (``Runner.run``), SSE (``Runner.run_streamed``)
and WebSocket (``OpenAIProvider(use_responses_websocket=True)``). Every request the servers
received is compared with the reference's plan for the same history: openai-agents' session
before that request, in the items form (PROTOCOL.md#items-form), each assistant message with the
provider, model, effort and key it ran with (openai-agents stores none of them). Each difference
is classified by SPEC rule with ``tools/openai_agents_reasons.py::classify_plan``;
docs/openai-agents-e2e.md shows the result.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="aiohttp is not importable: pip install '.[test]'")

from reasoning_replay.operations import dispatch
from responses_server import (
    ResponsesServer,
    ScriptedTurns,
    Turn,
    function_call,
    message,
    reasoning,
)

REPO = Path(__file__).resolve().parents[2]
ENV_PYTHON = REPO / ".implementations" / "openai-agents" / "bin" / "python"
DRIVER = Path(__file__).with_name("openai_agents_driver.py")
sys.path.insert(0, str(REPO / "tools"))

import openai_agents_reasons  # noqa: E402

pytestmark = pytest.mark.skipif(
    not ENV_PYTHON.exists(),
    reason="openai-agents is not installed: python tools/install_implementation.py openai-agents",
)

KEY = "0123456789abcdef0123456789abcdef"
MODEL = "gpt-6-astra"
XAI_MODEL = "grok-4"
# (user text, effort, provider, model, transport) of each step; u2 is a tool loop (two requests)
FIRST_PROCESS = [
    ("u1 plan a trip", "low", "openai", MODEL, "json"),
    ("u2 weather", "high", "openai", MODEL, "sse"),
]
SECOND_PROCESS = [
    ("u3 and then", "low", "openai", MODEL, "websocket"),
    ("u4 on grok", "low", "xai", XAI_MODEL, "json"),
    ("u5 back", "medium", "openai", MODEL, "sse"),
]
STEPS = FIRST_PROCESS + SECOND_PROCESS
REQUEST_STEPS = [0, 1, 1, 2, 3, 4]  # the step of each request, in the order they are sent
OPENAI_SCRIPT = {
    "u1": [Turn([reasoning("rs_1", "first", encrypted_content="enc-1"), message("msg_1", "a1")])],
    "u2": [
        Turn(
            [
                reasoning("rs_2", "calls", encrypted_content="enc-2"),
                function_call("fc_1", "call_1", "lookup", '{"city":"Paris"}'),
            ]
        ),
        Turn([reasoning("rs_3", "answers", encrypted_content="enc-3"), message("msg_2", "a2")]),
    ],
    # the provider reuses rs_1's id with a new ciphertext, as xAI does (SPEC D3)
    "u3": [Turn([reasoning("rs_1", "again", encrypted_content="enc-1b"), message("msg_3", "a3")])],
    "u5": [Turn([reasoning("rs_5", "back", encrypted_content="enc-5"), message("msg_5", "a5")])],
}
XAI_SCRIPT = {
    "u4": [Turn([reasoning("rs_x", "grok", encrypted_content="enc-x"), message("msg_4", "a4")])]
}


def drive(plan: dict[str, Any], work: Path, name: str) -> dict[str, Any]:
    path = work / f"{name}.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    done = subprocess.run(
        [str(ENV_PYTHON), str(DRIVER), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def role_of(item: Mapping[str, Any]) -> str:
    """An item's message in the items form: the model's output is the assistant's; a user message
    and a tool result are the user's (a tool-result continuation, SPEC §9.1)."""
    if item.get("type") in ("reasoning", "function_call") or item.get("role") == "assistant":
        return "assistant"
    return "user"


def messages_of(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The session's flat items as messages: each run of items of one role is one message."""
    messages: list[dict[str, Any]] = []
    for item in items:
        role = role_of(item)
        if messages and messages[-1]["role"] == role:
            messages[-1]["items"].append(dict(item))
        else:
            messages.append({"role": role, "items": [dict(item)]})
    return messages


def history_before(
    messages: Sequence[Mapping[str, Any]], number: int, responses: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The items form of the session as it stood before request ``number`` (0-based): every
    message before the request's own response, each assistant message with what its response
    ran with (``responses``: provider, response id, model, effort, key)."""
    out: list[dict[str, Any]] = []
    answered = 0
    for message_ in messages:
        if message_["role"] == "assistant":
            if answered == number:
                break
            out.append({**message_, **responses[answered]})
            answered += 1
        else:
            out.append(dict(message_))
    return {"form": "items", "messages": out}


def test_openai_agents_requests_against_the_reference_plan(tmp_path: Path) -> None:
    with (
        ResponsesServer(ScriptedTurns(OPENAI_SCRIPT)) as openai,
        ResponsesServer(ScriptedTurns(XAI_SCRIPT)) as xai,
    ):
        base_urls = {"openai": openai.base_url, "xai": xai.base_url}
        store = tmp_path / "session.sqlite"

        def plan(steps: list[tuple[str, str, str, str, str]]) -> dict[str, Any]:
            return {
                "store": str(store),
                "session_id": "e2e",
                "key": KEY,
                "base_urls": base_urls,
                "steps": [
                    {"send": s, "effort": e, "provider": p, "model": m, "transport": t}
                    for s, e, p, m, t in steps
                ],
            }

        drive(plan(FIRST_PROCESS), tmp_path, "first")
        # a new process, resumed from the session store openai-agents wrote
        stored = drive(plan(SECOND_PROCESS), tmp_path, "second")["items"]
        from_openai, from_xai = list(openai.received), list(xai.received)
    received = [*from_openai[:4], *from_xai, *from_openai[4:]]
    assert len(received) == len(REQUEST_STEPS), [r.body.get("input") for r in received]
    assert [r.transport for r in received] == ["json", "sse", "sse", "websocket", "json", "sse"]
    responses = [
        {
            "provider": STEPS[step][2],
            "response_id": request.response_id,
            "model": STEPS[step][3],
            "effort": STEPS[step][1],
            "prompt_cache_key": KEY,
        }
        for step, request in zip(REQUEST_STEPS, received, strict=True)
    ]
    messages = messages_of(stored)
    findings: list[dict[str, Any]] = []
    for number, request in enumerate(received):
        text, effort, provider, model, transport = STEPS[REQUEST_STEPS[number]]
        plan_input = {
            "history": history_before(messages, number, responses),
            "model": model,
            "desired_effort": effort,
            "instance_key": KEY,
            "target_provider": provider,
        }
        reference = dispatch("plan", plan_input)
        assert reference.output is not None, reference.code
        expected = reference.output["request"]
        classes = openai_agents_reasons.classify_plan(expected, request.body, plan_input)
        findings.append(
            {
                "request": number + 1,
                "step": text,
                "transport": transport,
                "differences": sorted(classes),
            }
        )
    (tmp_path / "findings.json").write_text(json.dumps(findings, indent=1), encoding="utf-8")
    print(json.dumps(findings))
    by_request = {f["request"]: set(f["differences"]) for f in findings}
    # docs/openai-agents-e2e.md: the first request is the reference's, field for field
    assert by_request[1] == set()
    # an effort change is request-level only: no configuration_update (F2), and the request's
    # effort is the turn's, not the first record's (F1)
    assert by_request[2] == by_request[3] == {"no-updates", "baseline"}
    # resumed in a new process, over a WebSocket: the same input as the reference's but for the
    # updates (the session holds every item; the effort is back at the baseline)
    assert by_request[4] == {"no-updates"}
    # to xAI: OpenAI's reasoning is sent (P4: no issuer recorded), assistant message ids too
    # (D7); no updates or key policy differ for xAI (F12: the reference plans none either)
    assert by_request[5] == {"foreign-sent", "xai-message-id"}
    # back to OpenAI: xAI's reasoning is sent (P4), rs_1's new ciphertext replaced the first one
    # in its place (D3), the effort is request-level (F1, F2)
    assert by_request[6] == {"foreign-sent", "same-id-replaced", "no-updates", "baseline"}
