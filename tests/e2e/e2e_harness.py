"""Run a scripted conversation through fast-agent's real agent loop, and plan what it sent.

A :class:`Conversation` is a script for the server and one step list per fast-agent process;
every process after the first resumes the session the first one created. :func:`run` starts
the server, runs the processes with ``fast_agent_driver.py`` in fast-agent's environment, and
returns what the server received next to the history snapshots the driver took.
:func:`plan_requests` then gives each request the history as it stood when it was sent (the
last snapshot of its segment, cut after the user message that triggered it) and the reference's
plan for that history, for :func:`fast_agent_history.compare`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fast_agent_history import Comparison, compare, history_messages
from reasoning_replay.ordering.planner import Plan, PlanSettings, PlanTransport, plan_request
from reasoning_replay.record.history import HistoryMessage
from responses_server import Received, ResponsesServer, ScriptedTurns, Turn

REPO = Path(__file__).resolve().parents[2]
FAST_AGENT_PYTHON = REPO / ".fast-agent-env" / "bin" / "python"
DRIVER = Path(__file__).with_name("fast_agent_driver.py")
UNKNOWN_INSTANCE_KEY = "0" * 32  # K1 shape; a plan that falls back to it differs visibly
PROCESS_TIMEOUT = 120


@dataclass(frozen=True)
class Conversation:
    name: str
    model: str  # fast-agent's model spec, e.g. responses.gpt-6-astra?reasoning=low
    effort: str | None  # the effort the spec configures (None: the model's own default)
    transport: str | None  # "sse", or None for fast-agent's default (auto: WebSocket first)
    turns: Mapping[str, Sequence[Turn]]
    runs: Sequence[Sequence[Mapping[str, Any]]]
    tools: bool = True
    extra_config: str = ""


@dataclass
class Outcome:
    conversation: Conversation
    workdir: Path
    received: list[Received]
    results: list[dict[str, Any]] = field(default_factory=list)  # one per process
    # requests whose turn failed (a broken stream): fast-agent keeps no message of them
    failed: list[Received] = field(default_factory=list)
    side: list[Received] = field(default_factory=list)  # compaction's summary requests

    @property
    def session_dir(self) -> Path:
        return Path(self.results[-1]["session_dir"])


def config_text(conversation: Conversation, base_url: str) -> str:
    transport = f"  transport: {conversation.transport}\n" if conversation.transport else ""
    return (
        "llm_retries: 0\n"
        "responses:\n"
        "  api_key: e2e-dummy-key\n"
        f"  base_url: {base_url}\n"
        f"{transport}"
        "logger:\n"
        "  level: error\n"
        "  progress_display: false\n"
        "  show_chat: false\n"
        "  show_tools: false\n" + conversation.extra_config.replace("{base_url}", base_url)
    )


def run_process(workdir: Path, plan: Mapping[str, Any], number: int) -> dict[str, Any]:
    plan_file = workdir / f"plan-{number}.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    done = subprocess.run(
        [str(FAST_AGENT_PYTHON), str(DRIVER), str(plan_file)],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        cwd=workdir,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"fast-agent driver failed:\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(conversation: Conversation, workdir: Path, resume_from: Path | None = None) -> Outcome:
    """Run every process of ``conversation``; ``resume_from`` seeds the first with a session."""
    workdir.mkdir(parents=True, exist_ok=True)
    with ResponsesServer(ScriptedTurns(conversation.turns)) as server:
        (workdir / "fastagent.config.yaml").write_text(
            config_text(conversation, server.base_url), encoding="utf-8"
        )
        outcome = Outcome(conversation, workdir, server.received)
        session = None
        if resume_from is not None:
            target = workdir / "home" / "sessions" / resume_from.name
            target.parent.mkdir(parents=True)
            subprocess.run(["cp", "-rp", str(resume_from), str(target)], check=True)
            session = resume_from.name
        for number, steps in enumerate(conversation.runs):
            plan = {
                "workdir": str(workdir),
                "home": str(workdir / "home"),
                "agent": "agent",
                "model": conversation.model,
                "tools": conversation.tools,
                "resume": session,
                "steps": [dict(step, number=f"{number}-{i}") for i, step in enumerate(steps)],
            }
            result = run_process(workdir, plan, number)
            outcome.results.append(result)
            session = result["session_id"]
    return outcome


@dataclass(frozen=True)
class PlannedRequest:
    received: Received
    plan: Plan
    comparison: Comparison


def _load(path: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return value


def _settings_of(plan: Plan) -> dict[str, Any]:
    """A plan's request fields other than its input and chain."""
    return {
        name: value
        for name, value in plan.request.items()
        if name not in ("input", "previous_response_id")
    }


def _plan(
    received: Received,
    messages: Sequence[HistoryMessage],
    *,
    step: Mapping[str, Any],
    state: _State,
) -> Plan:
    """The reference's plan of one request; over a WebSocket, a continuation when it may be."""
    websocket = received.transport == "websocket"
    # fast-agent's xAI WebSocket requests are stateless full replays: the caller's choice (F9)
    continuation = websocket and state.provider != "xai"
    settings = PlanSettings(
        model=received.body["model"],
        desired_effort=state.effort,
        instance_key=state.instance_key,
        metadata=step.get("metadata", {}),
        transport=(
            PlanTransport.WEBSOCKET_CONTINUATION
            if continuation
            else PlanTransport.WEBSOCKET
            if websocket
            else PlanTransport.SSE
        ),
        target_provider=state.provider,
    )
    plan = plan_request(messages, settings)
    assert isinstance(plan, Plan), plan
    chain = state.chained_settings.get(received.connection)
    if continuation and chain is not None and chain != _settings_of(plan):
        # The caller's choice (F9 allows, never requires, a continuation): fast-agent continues
        # a chain only under the settings it started with (reported to the lead: F9 is silent).
        plan = plan_request(messages, replace(settings, transport=PlanTransport.WEBSOCKET))
        assert isinstance(plan, Plan), plan
    state.chained_settings[received.connection] = _settings_of(plan)
    return plan


def _failed(result: Mapping[str, Any], step_index: int) -> bool:
    reply = result["steps"][step_index]["reply"]
    return isinstance(reply, str) and reply.startswith("error:")


def _segments(steps: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """A process's step indexes, split at each ``clear`` and each compaction."""
    segments: list[list[int]] = [[]]
    for index, step in enumerate(steps):
        if step.get("clear") or step.get("compact"):
            segments.append([index])
        else:
            segments[-1].append(index)
    return segments


def _is_turn(raw: Mapping[str, Any]) -> bool:
    return raw["role"] == "user" and not raw.get("tool_results")


def _first_added(raw_messages: Sequence[Mapping[str, Any]], turns: int) -> int:
    """The index of the first of the last ``turns`` user turns: where a segment's own begin."""
    indexes = [i for i, raw in enumerate(raw_messages) if _is_turn(raw)]
    return indexes[-turns] if turns else len(raw_messages)


@dataclass
class _State:
    """What a client knows across the requests of one process."""

    effort: str | None
    instance_key: str = UNKNOWN_INSTANCE_KEY
    provider: str = "responses"  # a route name, as fast-agent writes it
    new_instance: bool = False
    chained_settings: dict[int, dict[str, Any]] = field(default_factory=dict)


def route_of(model_spec: str) -> str:
    """The route of a fast-agent model spec (``responses.gpt-6-astra`` → ``responses``): the
    name fast-agent records as the provider in ``session.json``. The planner maps it to its
    issuer by the provider-name registry (SPEC P4, §18.2); the harness never translates it."""
    return model_spec.split(".", 1)[0]


def plan_requests(outcome: Outcome) -> list[PlannedRequest]:
    """Each request the server received, with the reference's plan from the same history.

    Segments: a process, split at each ``clear`` and compaction. A segment's requests are one
    per user message it added to the history (a new turn or a tool result), in order, one per
    failed turn (fast-agent keeps no message of those), and a compaction's summary request. The
    desired effort and metadata are the step's. The instance key (K1: random) is the key of an
    instance's first request with an empty history or for a new model, else unknown.
    """
    conversation = outcome.conversation
    requests = iter(outcome.received)
    planned: list[PlannedRequest] = []
    state = _State(conversation.effort, provider=route_of(conversation.model))
    for steps, result in zip(conversation.runs, outcome.results, strict=True):
        state.instance_key = UNKNOWN_INSTANCE_KEY
        state.chained_settings = {}
        for segment in _segments(steps):
            if steps[segment[0]].get("compact"):
                outcome.side.append(next(requests))  # the summary request
            planned.extend(
                _plan_segment(
                    outcome,
                    steps=steps,
                    result=result,
                    segment=segment,
                    requests=requests,
                    state=state,
                )
            )
    leftover = list(requests)
    assert not leftover, f"requests without a history message: {leftover}"
    return planned


def _plan_segment(
    outcome: Outcome,
    *,
    steps: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any],
    segment: Sequence[int],
    requests: Iterator[Received],
    state: _State,
) -> list[PlannedRequest]:
    """The plans of one segment's requests; a failed turn's request goes to ``outcome.failed``."""
    sends = [i for i in segment if "send" in steps[i]]
    if not sends:
        for index in segment:
            state.effort = steps[index].get("effort", state.effort)
        return []
    raw_messages = _load(result["steps"][segment[-1]]["snapshot"])["messages"]
    ok = [i for i in sends if not _failed(result, i)]
    position = _first_added(raw_messages, len(ok))
    # assistant message index → (response id, WebSocket connection) of the response it came from
    responses: dict[int, tuple[str, int]] = {}
    planned = []
    for index in segment:
        step = steps[index]
        state.effort = step.get("effort", state.effort)
        if "switch_model" in step:  # a new LLM instance, with its own key (K1)
            state.new_instance = True
            state.provider = route_of(step["switch_model"])
        if "send" not in step:
            continue
        if _failed(result, index):
            outcome.failed.append(next(requests))
            continue
        first = True
        while position < len(raw_messages) and (first or not _is_turn(raw_messages[position])):
            if raw_messages[position]["role"] == "user":
                received = next(requests)
                if position == 0 or state.new_instance:
                    state.instance_key = received.body.get("prompt_cache_key", state.instance_key)
                    state.new_instance = False
                websocket = received.transport == "websocket"
                # a response id is known only to the connection that received it (F9)
                ids = {
                    i: response_id
                    for i, (response_id, connection) in responses.items()
                    if websocket and connection == received.connection
                }
                messages = history_messages({"messages": raw_messages[: position + 1]}, ids)
                plan = _plan(received, messages, step=step, state=state)
                label = f"{outcome.conversation.name}#{outcome.received.index(received) + 1}"
                planned.append(PlannedRequest(received, plan, compare(label, plan, received.body)))
                responses[position + 1] = (received.response_id, received.connection)
            first = False
            position += 1
    return planned
