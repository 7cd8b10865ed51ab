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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fast_agent_history import Comparison, compare, history_messages
from openai.types.responses import ResponseFunctionToolCall
from reasoning_replay.history import HistoryMessage
from reasoning_replay.planner import Plan, PlanSettings, PlanTransport, plan_request
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


def call_item_ids(turns: Mapping[str, Sequence[Turn]]) -> dict[str, str]:
    """call id → output item id of every function call the script answers with."""
    return {
        item.call_id: item.id
        for answers in turns.values()
        for turn in answers
        for item in turn.output
        if isinstance(item, ResponseFunctionToolCall) and item.id is not None
    }


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
    effort: str | None,
    instance_key: str,
    step: Mapping[str, Any],
    chained_settings: dict[int, dict[str, Any]],
) -> Plan:
    """The reference's plan of one request; over a WebSocket, a continuation when it may be."""
    websocket = received.transport == "websocket"
    settings = PlanSettings(
        model=received.body["model"],
        desired_effort=effort,
        instance_key=instance_key,
        metadata=step.get("metadata", {}),
        transport=PlanTransport.WEBSOCKET_CONTINUATION if websocket else PlanTransport.SSE,
    )
    plan = plan_request(messages, settings)
    assert isinstance(plan, Plan), plan
    chain = chained_settings.get(received.connection)
    if websocket and chain is not None and chain != _settings_of(plan):
        # The caller's choice (F9 allows, never requires, a continuation): fast-agent continues
        # a chain only under the settings it started with (reported to the lead: F9 is silent).
        plan = plan_request(messages, replace(settings, transport=PlanTransport.WEBSOCKET))
        assert isinstance(plan, Plan), plan
    chained_settings[received.connection] = _settings_of(plan)
    return plan


def _failed(result: Mapping[str, Any], step_index: int) -> bool:
    reply = result["steps"][step_index]["reply"]
    return isinstance(reply, str) and reply.startswith("error:")


def _segments(steps: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """A process's step indexes, split at each ``clear``."""
    segments: list[list[int]] = [[]]
    for index, step in enumerate(steps):
        if step.get("clear"):
            segments.append([])
        else:
            segments[-1].append(index)
    return segments


def plan_requests(outcome: Outcome) -> list[PlannedRequest]:
    """Each request the server received, with the reference's plan from the same history.

    Segments: a process, split at each ``clear``. A segment's requests are those of the user
    messages it added to the history, in order: one per user message (a new turn or a tool
    result). The desired effort and metadata are the step's; the instance key is the key of a
    segment's first request when the history was empty (K1 keys are random), else unknown.
    """
    conversation = outcome.conversation
    item_ids = call_item_ids(conversation.turns)
    requests = iter(outcome.received)
    planned: list[PlannedRequest] = []
    effort = conversation.effort
    previous_length = 0
    for process, (steps, result) in enumerate(zip(conversation.runs, outcome.results, strict=True)):
        segments = _segments(steps)
        start = previous_length if process > 0 else 0
        instance_key = UNKNOWN_INSTANCE_KEY
        connection_of: dict[int, int] = {}
        chained_settings: dict[int, dict[str, Any]] = {}
        for segment in segments:
            if not segment:
                start = 0
                continue
            last = result["steps"][segment[-1]]["snapshot"]
            if last is None:
                continue
            saved = _load(last)
            raw_messages = saved["messages"]
            response_ids: dict[int, str] = {}
            step_iter = iter(segment)
            step: Mapping[str, Any] = {}
            for index in range(start, len(raw_messages)):
                raw = raw_messages[index]
                if raw["role"] != "user":
                    continue
                if not raw.get("tool_results"):
                    step_index = next(step_iter)
                    while "send" not in steps[step_index] or _failed(result, step_index):
                        effort = steps[step_index].get("effort", effort)
                        if "send" in steps[step_index]:
                            outcome.failed.append(next(requests))
                        step_index = next(step_iter)
                    step = steps[step_index]
                    effort = step.get("effort", effort)
                received = next(requests)
                websocket = received.transport == "websocket"
                if index == 0:
                    instance_key = received.body.get("prompt_cache_key", instance_key)
                # a response id is known only to the connection that received it (F9)
                ids = {
                    i: rid
                    for i, rid in response_ids.items()
                    if websocket and connection_of.get(i) == received.connection
                }
                messages = history_messages({"messages": raw_messages[: index + 1]}, item_ids, ids)
                plan = _plan(
                    received,
                    messages,
                    effort=effort,
                    instance_key=instance_key,
                    step=step,
                    chained_settings=chained_settings,
                )
                label = f"{conversation.name}#{len(planned) + 1}"
                planned.append(PlannedRequest(received, plan, compare(label, plan, received.body)))
                if index + 1 < len(raw_messages):
                    response_ids[index + 1] = received.response_id
                    connection_of[index + 1] = received.connection
            start = 0
            previous_length = len(raw_messages)
    leftover = list(requests)
    assert not leftover, f"requests without a history message: {leftover}"
    return planned
