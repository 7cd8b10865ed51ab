"""Drive fast-agent's own agent loop through its public API; run with fast-agent's interpreter.

Usage: ``python fast_agent_driver.py PLAN.json``. The plan names the working directory (which
holds ``fastagent.config.yaml``), the fast-agent home, the agent's name and model, whether the
agent has the ``lookup`` function tool, an optional session to resume, and the steps:
``{"send": text}`` (optionally with ``"effort"`` set first and request ``"metadata"``),
``{"clear": true}``, ``{"compact": keep_turns}`` and ``{"switch_model": spec}``. After each
step the session's history file is copied to ``snapshots/<step number>.json`` in the working
directory, so the test can plan each request from the history as it stood. The last line of
stdout is a JSON object: the session id and directory, and each step's snapshot and reply.

This file runs in fast-agent's environment only; it imports nothing from this project.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from fast_agent import FastAgent
from fast_agent.config import CompactionSettings
from fast_agent.history.compaction import compact_conversation
from fast_agent.llm.reasoning_effort import ReasoningEffortSetting
from fast_agent.types import RequestParams


def lookup(city: str) -> str:
    """Look up the weather in a city (a local function tool: no network)."""
    return f"{city}: sunny, 21 C"


def _session_dir(home: Path) -> Path | None:
    sessions = sorted((home / "sessions").glob("*/session.json"), key=lambda p: p.stat().st_mtime)
    return sessions[-1].parent if sessions else None


async def _run(plan: dict[str, Any]) -> dict[str, Any]:
    work = Path(plan["workdir"])
    home = Path(plan["home"])
    fast = FastAgent(
        "e2e",
        config_path=str(work / "fastagent.config.yaml"),
        parse_cli_args=False,
        quiet=True,
        home=home,
    )
    if plan.get("resume"):
        fast.args.resume_requested = True
        fast.args.resume_session_id = plan["resume"]
    tools = [lookup] if plan.get("tools") else None
    name = plan["agent"]

    @fast.agent(name=name, instruction="You are terse.", model=plan["model"], function_tools=tools)
    async def _agent() -> None:  # the decorator registers the agent; the body is not run
        return None

    snapshots = work / "snapshots"
    snapshots.mkdir(exist_ok=True)
    results: list[dict[str, Any]] = []
    async with fast.run() as app:
        agent = app[name]
        for number, step in enumerate(plan["steps"]):
            reply = None
            if "effort" in step:
                assert agent.llm is not None
                agent.llm.set_reasoning_effort(
                    ReasoningEffortSetting(kind="effort", value=step["effort"])
                )
            if "send" in step:
                params = RequestParams(metadata=step["metadata"]) if "metadata" in step else None
                try:
                    reply = await agent.send(step["send"], request_params=params)
                except Exception as error:  # a bad stream: recorded, the session goes on
                    reply = f"error: {type(error).__name__}: {error}"
            if step.get("clear"):
                agent.clear()
            if step.get("compact"):  # fast-agent's own summary compaction (a side request)
                settings = CompactionSettings(keep_turns=step["compact"], strategy="client")
                await compact_conversation(agent, settings=settings)
            if "switch_model" in step:
                await agent.set_model(step["switch_model"])  # type: ignore[attr-defined]
            directory = _session_dir(home)
            snapshot = None
            history = directory / f"history_{name}.json" if directory else None
            if history is not None and history.exists():
                snapshot = snapshots / f"{step.get('number', number)}.json"
                shutil.copy2(history, snapshot)  # its mode too (0600)
            results.append({"reply": reply, "snapshot": str(snapshot) if snapshot else None})
    directory = _session_dir(home)
    return {
        "session_dir": str(directory) if directory else None,
        "session_id": directory.name if directory else None,
        "steps": results,
    }


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    result = asyncio.run(_run(plan))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
