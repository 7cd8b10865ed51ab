"""The reference beside fast-agent: history-to-input builder and effort planner, one history.

Usage (in the environment made by ``python tools/install_fast_agent.py --with-reference``)::

    .fast-agent-env/bin/python tools/bench_vs_fast_agent.py [--messages 10000] [--runs 5]
                                                            [--seed 20251129] [--json OUT]

One synthetic history of ``--messages`` messages (``tools/bench_planner.build_history``: genuine
user turns with effort changes, tool loops, cache-state records on every assistant message, a
replay block on about 1 in 40, a native compaction item on about 1 in 500; compaction items get
an ``id`` here, which fast-agent's compaction envelope requires) is given to both sides in their
own input forms:

- the reference: ``HistoryMessage`` objects (own items in provider form);
- fast-agent (``fast-agent-mcp`` 0.10.48): ``PromptMessageExtended`` objects as fast-agent keeps
  them (user text as ``TextContent``, tool calls and tool results as MCP requests and results,
  the replay, cache-state and compaction channels as text blocks).

Converting one form into the other is not timed. Then the four methods run in ``--runs``
interleaved rounds (``tools/benchharness.py``: ``gc.collect()`` before each run, the
long-lived histories frozen with ``gc.freeze()``):

1. the history-to-input builder: ``build_replay_input`` (reference) vs
   ``ResponsesLLM._convert_extended_messages_to_provider`` (fast-agent: per-message conversion,
   then its dedupe);
2. the effort planner: ``plan_request`` (reference) vs ``responses_cache.prepare_cached_request``
   followed by ``ResponsesLLM._dedupe_input_items`` (fast-agent, as its request builder calls
   them).

It prints each method's min / median / max, the ratio fast-agent / reference taken within each
round (above 1: the reference is faster) with its min / median / max, the machine's load, and
an untimed agreement check: both sides' numbers of input items, reasoning items, compaction items
and configuration updates, and the positions of the updates relative to the user messages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Final, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    from bench_planner import DEFAULT_SEED, INSTANCE_KEY, MODEL, build_history
    from benchharness import format_rounds, frozen_gc, run_rounds, timed
    from fast_agent.constants import OPENAI_COMPACTION_ITEMS
    from fast_agent.llm.provider.openai.compaction_replay import capture_compaction_replay
    from fast_agent.llm.provider.openai.responses import ResponsesLLM
    from fast_agent.llm.provider.openai.responses_cache import prepare_cached_request
    from fast_agent.llm.request_params import RequestParams
    from fast_agent.mcp.prompt_message_extended import PromptMessageExtended
    from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult, TextContent
    from reasoning_replay import HistoryMessage, ReplayTarget, build_replay_input
    from reasoning_replay.atomic_files import replace_file
    from reasoning_replay.ordering.planner import Plan, PlanSettings, plan_request
except ImportError as error:  # pragma: no cover - depends on the environment
    sys.exit(
        f"bench_vs_fast_agent: {error}. Run it with the fast-agent environment's Python after "
        "python tools/install_fast_agent.py --with-reference"
    )

DEFAULT_MESSAGES: Final = 10_000
DEFAULT_RUNS: Final = 5
DESIRED: Final = "medium"


def _texts(blocks: object) -> list[str]:
    """The texts of a channel's blocks: a list of text blocks, as build_history makes them."""
    if not isinstance(blocks, list):
        raise RuntimeError(f"a channel holds {type(blocks).__name__}, not a list of blocks")
    return [block["text"] for block in blocks]


def _role(role: str) -> Literal["user", "assistant"]:
    """A message's role as fast-agent types it (MCP's roles: build_history makes no other)."""
    if role == "user":
        return "user"
    if role == "assistant":
        return "assistant"
    raise RuntimeError(f"no fast-agent role for {role!r}")


def to_fast_agent(messages: Sequence[HistoryMessage]) -> list[PromptMessageExtended]:
    """The same history as fast-agent keeps it (untimed)."""
    converted: list[PromptMessageExtended] = []
    for message in messages:
        content: list[Any] = []
        tool_calls: dict[str, CallToolRequest] = {}
        tool_results: dict[str, CallToolResult] = {}
        channels: dict[str, list[Any]] = {
            name: [TextContent(type="text", text=text) for text in _texts(blocks)]
            for name, blocks in message.channels.items()
        }
        for item in message.items:
            kind = item.get("type")
            if kind == "message":
                text = item["content"]
                if not isinstance(text, str):
                    text = "".join(part["text"] for part in text)
                content.append(TextContent(type="text", text=text))
            elif kind == "function_call":
                params = CallToolRequestParams(
                    name=item["name"], arguments=json.loads(item["arguments"])
                )
                tool_calls[item["call_id"]] = CallToolRequest(method="tools/call", params=params)
            elif kind == "function_call_output":
                tool_results[item["call_id"]] = CallToolResult(
                    content=[TextContent(type="text", text=item["output"])]
                )
            elif kind == "compaction":
                envelope = capture_compaction_replay(dict(item), origin="openai")
                if envelope is None:
                    raise RuntimeError(f"fast-agent refuses the compaction item {item}")
                channels.setdefault(OPENAI_COMPACTION_ITEMS, []).append(
                    TextContent(type="text", text=json.dumps(envelope, separators=(",", ":")))
                )
            else:
                raise RuntimeError(f"no fast-agent form for {kind!r}")
        converted.append(
            PromptMessageExtended(
                role=_role(message.role),
                content=content,
                tool_calls=tool_calls or None,
                tool_results=tool_results or None,
                channels=channels or None,
            )
        )
    return converted


def shape(items: Sequence[Any]) -> dict[str, Any]:
    """What both sides must agree on, whatever the items' own forms."""
    updates: list[tuple[int, str]] = []
    users = 0
    for item in items:
        if item.get("type") == "configuration_update":
            updates.append((users, item["reasoning"]["effort"]))
        elif item.get("type") == "message" and item.get("role") == "user":
            users += 1
    return {
        "input_items": len(items),
        "reasoning_items": sum(item.get("type") == "reasoning" for item in items),
        "compaction_items": sum(item.get("type") == "compaction" for item in items),
        "configuration_updates": len(updates),
        "update_positions_sha256": hashlib.sha256(json.dumps(updates).encode()).hexdigest()[:16],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args(argv)

    reference_history, composition = build_history(args.messages, args.seed)
    for index, message in enumerate(reference_history):
        for item in message.items:
            if item.get("type") == "compaction":
                item["id"] = f"cmp_{index:08x}"  # type: ignore[index]  # fast-agent needs one
    fast_history = to_fast_agent(reference_history)
    llm = ResponsesLLM(model=MODEL)
    settings = PlanSettings(MODEL, DESIRED, INSTANCE_KEY)
    params = RequestParams(model=MODEL)
    target = ReplayTarget(provider="openai")

    def reference_build() -> list[Any]:
        return list(build_replay_input(reference_history, target).input)

    def fast_agent_build() -> list[Any]:
        items: list[Any] = llm._convert_extended_messages_to_provider(fast_history)
        return items

    def reference_plan() -> list[Any]:
        plan = plan_request(reference_history, settings)
        if not isinstance(plan, Plan):
            raise RuntimeError(f"the reference rejects the history: {plan}")
        return list(plan.request["input"])

    def fast_agent_plan() -> list[Any]:
        items, _, _ = prepare_cached_request(
            fast_history,
            params,
            key=INSTANCE_KEY,
            default_effort=DESIRED,
            convert=llm._convert_message_to_items,
        )
        deduplicated: list[Any] = llm._dedupe_input_items(items)
        return deduplicated

    pairs = {
        "build_input": (reference_build, fast_agent_build),
        "plan": (reference_plan, fast_agent_plan),
    }
    agreement = {
        name: {"reference": shape(ref()), "fast_agent": shape(fa())}  # also the warm-up
        for name, (ref, fa) in pairs.items()
    }
    trials = {
        f"{name} {side}": timed(run)
        for name, (ref, fa) in pairs.items()
        for side, run in (("reference", ref), ("fast_agent", fa))
    }
    ratio_pairs = {
        f"{name} fast_agent/reference": (f"{name} fast_agent", f"{name} reference")
        for name in pairs
    }
    with frozen_gc():  # the long-lived histories stay out of the collector's scans
        rounds = run_rounds(trials, args.runs)
    results: dict[str, Any] = {}
    for name in pairs:
        ref_spread = rounds.spread(f"{name} reference").scaled(1e3)
        fa_spread = rounds.spread(f"{name} fast_agent").scaled(1e3)
        ratio = rounds.ratio(f"{name} fast_agent", f"{name} reference")
        results[name] = {
            "reference_ms": ref_spread.median,
            "fast_agent_ms": fa_spread.median,
            "ratio_fast_agent_over_reference": ratio.median,
            "ratio_min": ratio.min,
            "ratio_max": ratio.max,
            "reference_runs_ms": [t * 1e3 for t in rounds.times[f"{name} reference"]],
            "fast_agent_runs_ms": [t * 1e3 for t in rounds.times[f"{name} fast_agent"]],
        }

    print(f"history: {args.messages} messages, seed {args.seed}: {composition}")
    print(
        f"fast-agent-mcp {metadata.version('fast-agent-mcp')}, reasoning-replay "
        f"{metadata.version('reasoning-replay')}, Python {platform.python_version()}, "
        f"{args.runs} interleaved rounds; conversion between the two forms not timed"
    )
    for line in format_rounds(rounds, ratio_pairs):
        print(line)
    for name, sides in agreement.items():
        same = {k for k in sides["reference"] if sides["reference"][k] == sides["fast_agent"][k]}
        differs = sorted(set(sides["reference"]) - same)
        print(
            f"{name:12} agreement: "
            + (
                "same " + ", ".join(sorted(same))
                if not differs
                else f"DIFFERENT {differs}: {sides}"
            )
        )
    if args.json is not None:
        document = {
            "messages": args.messages,
            "seed": args.seed,
            "runs": args.runs,
            "composition": vars(composition),
            "results": results,
            "agreement": agreement,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "tool": "tools/bench_vs_fast_agent.py",
            "argv": list(argv) if argv is not None else sys.argv[1:],
            "harness": rounds.to_json(ratio_pairs),
        }
        replace_file(args.json, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
