"""Drive openai-agents' own agent loop (``Runner``); run with openai-agents' interpreter.

Usage: ``python openai_agents_driver.py PLAN.json``. The plan names the session store (a
``SQLiteSession`` file: a new process resumes from it), the session id, the providers' base
URLs, the ``prompt_cache_key`` and the steps: ``{"send": text, "effort": E, "provider": "openai"
| "xai", "model": name, "transport": "json" | "sse" | "websocket"}``. Every step is one run of
an ``Agent`` on ``OpenAIResponsesModel`` (``OpenAIProvider`` on a client for the provider's base
URL; ``use_responses_websocket`` for a WebSocket step) with the session, one function tool
(``lookup``) and the settings a user following SPEC P5 and K1 sets: ``store=False``,
``response_include=["reasoning.encrypted_content"]``, the key as ``extra_args``, and the step's
effort as ``reasoning`` (request-level: openai-agents has no other). ``json`` runs
``Runner.run``, ``sse`` ``Runner.run_streamed``. The last line of stdout is a JSON object: each
step's final output, and the session's items at the end.

This file runs in openai-agents' environment only; it imports nothing from this project.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from agents import Agent, ModelSettings, RunConfig, Runner, SQLiteSession, function_tool
from agents.models.openai_provider import OpenAIProvider
from openai import AsyncOpenAI
from openai.types.shared import Reasoning


@function_tool
def lookup(city: str) -> str:
    """Look up the weather in a city (a local function tool: no network)."""
    return f"{city}: sunny, 21 C"


async def step_run(plan: dict[str, Any], step: dict[str, Any], session: SQLiteSession) -> str:
    client = AsyncOpenAI(api_key="e2e", base_url=plan["base_urls"][step["provider"]], max_retries=0)
    provider = OpenAIProvider(
        openai_client=client,
        use_responses=True,
        use_responses_websocket=step["transport"] == "websocket",
    )
    settings = ModelSettings(
        reasoning=Reasoning(effort=step["effort"]),
        store=False,
        response_include=["reasoning.encrypted_content"],
        extra_args={"prompt_cache_key": plan["key"]},
    )
    agent = Agent(name="assistant", model=step["model"], model_settings=settings, tools=[lookup])
    config = RunConfig(model_provider=provider, tracing_disabled=True)
    try:
        if step["transport"] == "sse":
            streamed = Runner.run_streamed(agent, step["send"], session=session, run_config=config)
            async for _ in streamed.stream_events():
                pass
            return str(streamed.final_output)
        result = await Runner.run(agent, step["send"], session=session, run_config=config)
        return str(result.final_output)
    finally:
        await provider.aclose()


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    session = SQLiteSession(plan["session_id"], Path(plan["store"]))
    try:
        outputs = [await step_run(plan, step, session) for step in plan["steps"]]
        items = await session.get_items()
    finally:
        session.close()
    return {"outputs": outputs, "items": items}


def main() -> int:
    plan = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    print(json.dumps(asyncio.run(run(plan))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
