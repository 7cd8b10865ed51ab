"""Drive pydantic-ai's own agent loop (``Agent.run``); run with pydantic-ai's interpreter.

Usage: ``python pydantic_ai_driver.py PLAN.json``. The plan names the message store (a file of
``ModelMessagesTypeAdapter`` JSON: read first when it exists, so a new process resumes from it,
and written after every step), the providers' base URLs, the ``openai_prompt_cache_key`` and
the steps: ``{"send": text, "effort": E, "provider": "openai" | "xai", "model": name}``. The
agent has one function tool, ``lookup``. Every step is one ``Agent.run`` with the history so far
and the settings a user following SPEC P5 sets (``openai_store=False``), the step's effort as
``thinking``. The last line of stdout is a JSON object: each step's output and the number of
messages stored after it.

This file runs in pydantic-ai's environment only; it imports nothing from this project.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider


def lookup(city: str) -> str:
    """Look up the weather in a city (a local function tool: no network)."""
    return f"{city}: sunny, 21 C"


def model_for(step: dict[str, Any], base_urls: dict[str, str]) -> OpenAIResponsesModel:
    """OpenAI's provider, or xAI's Responses API as pydantic-ai reaches a compatible service."""
    provider_name = step.get("provider", "openai")
    base_url = base_urls[provider_name]
    if provider_name == "openai":
        return OpenAIResponsesModel(
            step["model"], provider=OpenAIProvider(base_url=base_url, api_key="e2e")
        )
    provider = OpenAICompatibleProvider(provider_name, base_url=base_url, api_key="e2e")
    profile = OpenAIModelProfile(openai_supports_encrypted_reasoning_content=True)
    return OpenAIResponsesModel(step["model"], provider=provider, profile=profile)


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    store = Path(plan["store"])
    history = ModelMessagesTypeAdapter.validate_json(store.read_bytes()) if store.exists() else []
    outputs = []
    for step in plan["steps"]:
        agent = Agent(model_for(step, plan["base_urls"]), tools=[lookup])
        settings: dict[str, Any] = {
            "openai_store": False,
            "openai_prompt_cache_key": plan["key"],
            "thinking": step["effort"],
        }
        result = await agent.run(step["send"], message_history=history, model_settings=settings)
        history = result.all_messages()
        store.write_bytes(ModelMessagesTypeAdapter.dump_json(history))
        outputs.append({"output": str(result.output), "messages": len(history)})
    return {"steps": outputs}


def main() -> int:
    plan = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    print(json.dumps(asyncio.run(run(plan))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
