"""Facts about openai-agents that the suite's vectors cannot show, measured with its own code.

    .implementations/openai-agents/bin/python conformance/implementations/openai-agents/facts.py

Prints one JSON object, a member per fact (README.md, "Facts measured"); runs offline on the
adapter's recording transport (``adapter.py``) and imports nothing of ``reasoning_replay``.

- ``issuer_recorded``: what a session stores of a reasoning item ``OpenAIResponsesModel``
  received from an xAI base URL: the item alone, or with ``provider_data`` (SPEC P4).
- ``foreign_collision``: the request after a session holding a native reasoning item and, later,
  an item with the same id stored by a Chat Completions bridge (``provider_data``, as
  ``extensions/models/litellm_model.py`` stores one): which reasoning items are sent.
- ``keys``: the ``prompt_cache_key`` openai-agents generates with no key configured, without a
  session, with one (twice: two runs of one session), and for an xAI base URL (SPEC K1).
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from adapter import ADAPTER, RESPONSE, OpenAIAgents, Recorder, make_client

REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_x",
    "summary": [{"type": "summary_text", "text": "thought"}],
    "encrypted_content": "gAAAA-native",
}


class Answering(Recorder):
    """A recorder whose response carries ``output``."""

    def __init__(self, output: Sequence[Mapping[str, Any]]) -> None:
        super().__init__()
        self.output = list(output)

    def __call__(self, request: Any) -> Any:
        import httpx2  # noqa: PLC0415

        body = json.loads(request.content)
        self.bodies.append(body)
        return httpx2.Response(
            200, json={**RESPONSE, "output": [*self.output, *RESPONSE["output"]]}
        )


async def run(
    oa: OpenAIAgents,
    recorder: Recorder,
    target: str,
    text: str,
    session: Any = None,
) -> None:
    a = oa.agents
    provider = oa.OpenAIProvider(openai_client=make_client(oa, target, recorder))
    agent = a.Agent(name="assistant", model="gpt-6-astra")
    config = a.RunConfig(model_provider=provider, tracing_disabled=True)
    try:
        await a.Runner.run(agent, text, session=session, run_config=config)
    finally:
        await provider.aclose()


async def issuer_recorded(oa: OpenAIAgents) -> dict[str, Any]:
    session = oa.agents.SQLiteSession("issuer")
    await run(oa, Answering([REASONING]), "xai", "hello", session)
    stored = [item for item in await session.get_items() if item.get("type") == "reasoning"]
    session.close()
    return stored[0]


async def foreign_collision(oa: OpenAIAgents) -> list[dict[str, Any]]:
    session = oa.agents.SQLiteSession("collision")
    foreign = {**REASONING, "encrypted_content": "bridge", "provider_data": {"model": "litellm"}}
    await session.add_items(
        [
            {"role": "user", "content": "u1"},
            dict(REASONING),
            {"type": "message", "role": "assistant", "content": "a1"},
            {"role": "user", "content": "u2"},
            foreign,
            {"type": "message", "role": "assistant", "content": "a2"},
        ]
    )
    recorder = Recorder()
    await run(oa, recorder, "openai", "u3", session)
    session.close()
    return [item for item in recorder.bodies[0]["input"] if item.get("type") == "reasoning"]


async def keys(oa: OpenAIAgents) -> dict[str, Any]:
    found: dict[str, Any] = {}
    recorder = Recorder()
    await run(oa, recorder, "openai", "hello")
    found["no_session"] = recorder.bodies[0].get("prompt_cache_key")
    session = oa.agents.SQLiteSession("conversation-1")
    recorder = Recorder()
    await run(oa, recorder, "openai", "hello", session)
    await run(oa, recorder, "openai", "again", session)
    session.close()
    found["session"] = [body.get("prompt_cache_key") for body in recorder.bodies]
    recorder = Recorder()
    await run(oa, recorder, "xai", "hello")
    found["xai"] = recorder.bodies[0].get("prompt_cache_key")
    return found


async def measure(oa: OpenAIAgents) -> dict[str, Any]:
    return {
        "version": metadata.version(ADAPTER.distribution),
        "issuer_recorded": await issuer_recorded(oa),
        "foreign_collision": await foreign_collision(oa),
        "keys": await keys(oa),
    }


def main() -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print(json.dumps(asyncio.run(measure(OpenAIAgents()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
