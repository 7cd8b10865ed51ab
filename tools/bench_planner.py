"""Benchmark the request planner (SPEC §9, F11: "linear in the length of the history").

Usage::

    python tools/bench_planner.py [--messages 10000] [--runs 5] [--scales 1,2,4]
                                  [--seed 20251129] [--gc live|frozen] [--json OUT]

For each scale ``k`` it builds a synthetic history of ``k * --messages`` messages, then times
``plan_request`` on every size in ``--runs`` interleaved rounds (one plan per size per round,
``tools/benchharness.py``). It prints each size's median, min and max, and the ratio of each
size's time to the previous size's, as the median and range of the ratios taken within a round.
With scales 1, 2, 4 a linear planner gives ratios near 2.0; a quadratic one near 4.0.

The history is what a long agent session stores (every choice from one ``random.Random(seed)``):

- genuine user turns; about one in eight changes the desired effort (low … max);
- after each turn, with probability 0.3, a tool loop of 1–3 rounds: an assistant message with a
  ``function_call`` and a tool result (a tool-result continuation); the desired effort may change
  during the loop (it surfaces at the next genuine turn, F4);
- every assistant message carries its cache-state record (``{model, key, effort}``, the effective
  effort as the planner would have recorded it) and a response id;
- about one assistant message in 40 carries a reasoning replay block, captured with
  ``canonicalize_completed_reasoning_output_item`` (so P2's reader and deduplication run), and
  about one in 500 carries a native compaction item;
- the history ends with a new genuine user turn, so the plan is a real next request.

Each history is built, planned once untimed (a warm-up that also checks the plan is not
rejected) and planned once under ``cProfile`` to count Python function calls (a
machine-independent measure of work: a linear planner doubles it exactly when the history
doubles). Each timed plan follows a ``gc.collect()``, which leaves the histories in the
collector's oldest generation, as a real process holds its history: a plan that left too many
objects behind would set off a full collection of the whole heap, history included, and show
it in the time. ``--gc frozen`` holds the histories with ``gc.freeze()`` instead (then a full
collection scans only what the plan made).
``--json OUT`` writes every figure (all runs, spreads, ratios of time and of function calls, the
history's composition, the plan's size, the machine's load).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import itertools
import json
import platform
import pstats
import random
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from reasoning_replay import (
    REPLAY_CHANNEL,
    HistoryMessage,
    canonicalize_completed_reasoning_output_item,
)
from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL, CacheStateRecord
from reasoning_replay.ordering.planner import Plan, PlanSettings, plan_request

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchharness import Rounds, Trial, frozen_gc, run_rounds, timed
from reasoning_replay.atomic_files import replace_file

MODEL: Final = "gpt-6-astra"
INSTANCE_KEY: Final = "0123456789abcdef" * 2
EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")
DEFAULT_MESSAGES: Final = 10_000
DEFAULT_RUNS: Final = 5
DEFAULT_SCALES: Final = (1, 2, 4)
DEFAULT_SEED: Final = 20251129
SETTINGS: Final = PlanSettings(MODEL, "medium", INSTANCE_KEY)

EFFORT_CHANGE_PER_TURN: Final = 1 / 8
TOOL_LOOP_PER_TURN: Final = 0.3
EFFORT_CHANGE_IN_LOOP: Final = 0.2
REPLAY_PER_ASSISTANT: Final = 1 / 40
COMPACTION_PER_ASSISTANT: Final = 1 / 500


@dataclass
class Composition:
    """What a synthetic history holds."""

    messages: int = 0
    genuine_turns: int = 0
    tool_results: int = 0
    assistant_messages: int = 0
    replay_blocks: int = 0
    compactions: int = 0
    effort_changes: int = 0


@dataclass
class HistoryBuilder:
    """Builds a history message by message, keeping the effort state a planner would."""

    rng: random.Random
    messages: list[HistoryMessage] = field(default_factory=list)
    effort_changes: int = 0
    desired: str = "medium"
    effective: str = "medium"

    def user_turn(self) -> None:
        if self.rng.random() < EFFORT_CHANGE_PER_TURN:
            self._change_desired()
        self.effective = self.desired  # a genuine turn brings the desired effort (F3)
        words = " ".join(
            self.rng.choice(("please", "check", "the", "build", "again")) for _ in range(12)
        )
        self._append(
            HistoryMessage("user", items=[{"type": "message", "role": "user", "content": words}])
        )

    def tool_round(self, call_id: str) -> None:
        self.assistant(call_id)
        if self.rng.random() < EFFORT_CHANGE_IN_LOOP:
            self._change_desired()  # waits for the next genuine turn (F4)
        output = {"type": "function_call_output", "call_id": call_id, "output": "ok " * 20}
        self._append(HistoryMessage("user", items=[output]))

    def assistant(self, call_id: str | None = None) -> None:
        index = len(self.messages)
        record = CacheStateRecord(MODEL, INSTANCE_KEY, self.effective)
        # Compact, as fast-agent writes it (pydantic model_dump_json).
        text = json.dumps(record.to_json(), separators=(",", ":"))
        channels: dict[str, list[object]] = {CACHE_STATE_CHANNEL: [{"type": "text", "text": text}]}
        items: list[dict[str, Any]] = []
        if self.rng.random() < REPLAY_PER_ASSISTANT:
            channels[REPLAY_CHANNEL] = [replay_block(f"rs_{index:08x}", self.rng)]
        if self.rng.random() < COMPACTION_PER_ASSISTANT:
            items.append({"type": "compaction", "encrypted_content": f"cmp_{index}"})
        if call_id is None:
            text = "done " * 30
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            )
        else:
            items.append(
                {"type": "function_call", "call_id": call_id, "name": "run", "arguments": "{}"}
            )
        self._append(HistoryMessage("assistant", "openai", channels, items, f"resp_{index}"))

    def _change_desired(self) -> None:
        self.desired = self.rng.choice([e for e in EFFORTS if e != self.desired])
        self.effort_changes += 1

    def _append(self, message: HistoryMessage) -> None:
        self.messages.append(message)


def replay_block(item_id: str, rng: random.Random) -> dict[str, Any]:
    """A reasoning replay block as capture writes it (SPEC §4)."""
    captured = canonicalize_completed_reasoning_output_item(
        {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": "Considering the build output. " * 4}],
            "encrypted_content": rng.randbytes(1536).hex(),
        }
    )
    if captured.envelope_text is None:
        raise RuntimeError(f"capture refused the synthetic item: {captured.code}")
    return {"type": "text", "text": captured.envelope_text}


def build_history(count: int, seed: int = DEFAULT_SEED) -> tuple[list[HistoryMessage], Composition]:
    """A history of exactly ``count`` messages (at least 1) ending with a genuine user turn."""
    builder = HistoryBuilder(random.Random(seed))
    while len(builder.messages) < count - 1:
        builder.user_turn()
        if builder.rng.random() < TOOL_LOOP_PER_TURN:
            for _ in range(builder.rng.randint(1, 3)):
                builder.tool_round(f"call_{len(builder.messages)}")
        builder.assistant()
    del builder.messages[count - 1 :]
    builder.user_turn()
    composition = recount(builder.messages, builder.effort_changes)
    return builder.messages, composition


def recount(messages: Sequence[HistoryMessage], effort_changes: int) -> Composition:
    """The composition of the (truncated) history."""
    composition = Composition(messages=len(messages), effort_changes=effort_changes)
    for message in messages:
        types = {item.get("type") for item in message.items}
        if message.role == "assistant":
            composition.assistant_messages += 1
            composition.replay_blocks += len(message.replay_blocks)
            composition.compactions += "compaction" in types
        elif "function_call_output" in types:
            composition.tool_results += 1
        else:
            composition.genuine_turns += 1
    return composition


@dataclass
class Measurement:
    messages: int
    runs_seconds: list[float]
    median_seconds: float
    min_seconds: float
    max_seconds: float
    microseconds_per_message: float
    input_items: int
    configuration_updates: int
    diagnostics: int
    function_calls: int
    composition: Composition


def count_calls(messages: Sequence[HistoryMessage], plan_settings: PlanSettings) -> int:
    """Python function calls made by one plan (cProfile): a machine-independent size of work."""
    profile = cProfile.Profile()
    profile.runcall(plan_request, messages, plan_settings)
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


@dataclass
class Prepared:
    """One size's history, its checked plan and its call count (all untimed)."""

    messages: list[HistoryMessage]
    composition: Composition
    plan: Plan
    function_calls: int


def prepare(count: int, seed: int) -> Prepared:
    messages, composition = build_history(count, seed)
    warm = plan_request(messages, SETTINGS)  # untimed: also checks the plan
    if not isinstance(warm, Plan):
        raise RuntimeError(f"the synthetic history was rejected: {warm}")
    return Prepared(messages, composition, warm, count_calls(messages, SETTINGS))


def measure(
    sizes: Sequence[int], runs: int, seed: int, freeze: bool = False
) -> tuple[list[Measurement], Rounds]:
    """Every size's plan timed in interleaved rounds (one plan per size per round)."""
    prepared = {count: prepare(count, seed) for count in sizes}

    def trial(messages: list[HistoryMessage]) -> Trial:
        return timed(lambda: plan_request(messages, SETTINGS))

    trials = {str(n): trial(p.messages) for n, p in prepared.items()}
    with frozen_gc() if freeze else contextlib.nullcontext():
        rounds = run_rounds(trials, runs)
    measurements = []
    for count, p in prepared.items():
        spread = rounds.spread(str(count))
        items = p.plan.request["input"]
        measurements.append(
            Measurement(
                messages=count,
                runs_seconds=list(rounds.times[str(count)]),
                median_seconds=spread.median,
                min_seconds=spread.min,
                max_seconds=spread.max,
                microseconds_per_message=spread.median / count * 1e6,
                input_items=len(items),
                configuration_updates=sum(
                    item.get("type") == "configuration_update" for item in items
                ),
                diagnostics=len(p.plan.diagnostics),
                function_calls=p.function_calls,
                composition=p.composition,
            )
        )
    return measurements, rounds


def ratio_pairs(measurements: Sequence[Measurement]) -> dict[str, tuple[str, str]]:
    """``t(b)/t(a)`` for each pair of consecutive sizes, as harness ratios."""
    return {
        f"t({b.messages})/t({a.messages})": (str(b.messages), str(a.messages))
        for a, b in itertools.pairwise(measurements)
    }


def ratios(measurements: Sequence[Measurement], rounds: Rounds) -> list[dict[str, Any]]:
    """Each consecutive pair's size ratio, time ratio (median and range of the per-round
    ratios) and function-call ratio."""
    found = []
    for a, b in itertools.pairwise(measurements):
        spread = rounds.ratio(str(b.messages), str(a.messages))
        found.append(
            {
                "from": a.messages,
                "to": b.messages,
                "size_ratio": b.messages / a.messages,
                "time_ratio": spread.median,
                "time_ratio_min": spread.min,
                "time_ratio_max": spread.max,
                "calls_ratio": b.function_calls / a.function_calls,
            }
        )
    return found


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES, help="N (default 10000)")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per size")
    parser.add_argument(
        "--scales",
        default=",".join(map(str, DEFAULT_SCALES)),
        help="comma-separated multiples of N (default 1,2,4)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--gc",
        choices=("live", "frozen"),
        default="live",
        help="live: the histories stay in the collector's oldest generation, as in a real"
        " process (default); frozen: gc.freeze() holds them out of its scans",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure as JSON")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.runs < 1:
        parser.error("--messages and --runs must be at least 1")
    try:
        args.scales = sorted({int(s) for s in args.scales.split(",") if s.strip()})
    except ValueError:
        parser.error("--scales takes integers, e.g. 1,2,4")
    if not args.scales or args.scales[0] < 1:
        parser.error("--scales must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [args.messages * k for k in args.scales]
    measurements, rounds = measure(sizes, args.runs, args.seed, freeze=args.gc == "frozen")
    print(
        f"plan_request, {args.runs} interleaved rounds (one plan per size per round), gc {args.gc}"
    )
    print(
        f"{'messages':>9} {'median ms':>10} {'min ms':>9} {'max ms':>9} {'µs/message':>11}"
        f" {'items':>8} {'updates':>8} {'calls':>9}"
    )
    for m in measurements:
        print(
            f"{m.messages:>9} {m.median_seconds * 1e3:>10.2f} {m.min_seconds * 1e3:>9.2f}"
            f" {m.max_seconds * 1e3:>9.2f} {m.microseconds_per_message:>11.2f}"
            f" {m.input_items:>8} {m.configuration_updates:>8} {m.function_calls:>9}"
        )
    found = ratios(measurements, rounds)
    for r in found:
        print(
            f"t({r['to']})/t({r['from']}) = {r['time_ratio']:.2f}"
            f" ({r['time_ratio_min']:.2f}–{r['time_ratio_max']:.2f} over the rounds;"
            f" size ×{r['size_ratio']:g}, function calls ×{r['calls_ratio']:.3f})"
        )
    c = measurements[0].composition
    print(
        f"history of {c.messages}: {c.genuine_turns} genuine turns, {c.tool_results} tool results,"
        f" {c.assistant_messages} assistant messages, {c.replay_blocks} replay blocks,"
        f" {c.compactions} compactions, {c.effort_changes} effort changes"
    )
    print(rounds.machine.describe())
    if args.json is not None:
        report = {
            "tool": "tools/bench_planner.py",
            "argv": list(argv) if argv is not None else sys.argv[1:],
            "runs": args.runs,
            "seed": args.seed,
            "gc": args.gc,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "measurements": [asdict(m) for m in measurements],
            "ratios": found,
            "harness": rounds.to_json(ratio_pairs(measurements)),
        }
        replace_file(args.json, (json.dumps(report, indent=2) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
