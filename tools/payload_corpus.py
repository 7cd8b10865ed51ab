"""Generate synthetic fast-agent histories shaped like the design note's payload corpora.

Usage::

    python tools/payload_corpus.py --out DIR [--tasks 113] [--seed 20261129] [--form raw]
        [--turns-median 48] [--turns-sigma 0.6] [--turns-range 4,200]
        [--user-turn-weights 70,20,10] [--item-weights 5,55,30,8,2]
        [--summary-part-weights 10,35,30,15,10] [--summary-chars 50,800]
        [--ciphertext-median-bytes 4096] [--ciphertext-sigma 0.6]
        [--ciphertext-bytes 1024,12288] [--content-null-fraction 0.0]
        [--sdk-extra-fraction 0.0] [--tool-calls 1,3] [--tool-output-chars 100,4000]

The design note measured two corpora of 113 tasks run by fast-agent 0.10.11: long tool loops
whose assistant messages often carry several reasoning items. This writes ``--tasks`` such
tasks, one saved history file each, ``DIR/task-NNN/history_agent.json`` (SPEC H1: the top-level
object ``{"messages": [...]}``, pretty-printed with ``indent=2`` and raw UTF-8, mode 0600 in a
0700 directory), and ``DIR/payload_corpus.json``, a manifest with the command line and every
parameter (``tools/payload_report.py`` prints it and does not read it as a history).

A task is 1-3 user turns (``--user-turn-weights``, the weights of 1, 2, 3) sharing its
provider turns; each user turn starts a tool loop: assistant messages that call 1-3 tools
(``--tool-calls``), each followed by a user message carrying the tool results
(``--tool-output-chars`` of text each), and a last assistant message that answers without a
tool call. The number of assistant messages (provider turns) in a task is lognormal with median
``--turns-median`` and sigma ``--turns-sigma``, clipped to ``--turns-range``.

Each assistant message carries 0-4 reasoning items (``--item-weights``: weights of 0, 1, 2, 3,
4; two or more make a *multi-item message*), produced as the OpenAI SDK's
``ResponseReasoningItem.model_dump(mode="json")`` would give them, in its field order: ``id``
(``rs_`` + 48 hex digits, unique), ``summary`` (0-4 parts with ``--summary-part-weights``, each
``{"text", "type": "summary_text"}`` with ``--summary-chars`` characters of prose-like text with
curly quotes, em dashes, é, 数据, ✓, and sometimes a ``"``, backslash or tab), ``type``,
``content`` (``[]``, as in every item of the audited corpora; ``null`` for a
``--content-null-fraction`` of items, as the SDK's own test expects), ``encrypted_content``
(base64 of random bytes; the byte count lognormal with median ``--ciphertext-median-bytes`` and
sigma ``--ciphertext-sigma`` clipped to ``--ciphertext-bytes``: 1.4-16.4 KB of base64, median
about 5.5 KB, as ``tools/corpus.py``), ``status: "completed"``, and for a
``--sdk-extra-fraction`` of items one unknown SDK field (a future output field; the audited
corpora had none).

The message's channels hold what fast-agent stores for those items:

- ``reasoning`` (display, SPEC ST2): one text block per item whose summary has text, its
  stripped non-empty parts joined by a blank line, as fast-agent 0.10.4-0.10.11 wrote it;
- ``openai-reasoning-encrypted`` (replay, SPEC ST1): one text block per item, in the stored form
  chosen by ``--form``:

  ``raw``
      fast-agent 0.10.6-0.10.11: the SDK snapshot without ``status``, written by Python's
      ``json.dumps`` defaults (``", "`` and ``": "`` separators, non-ASCII as ``\\uXXXX``),
      which is how those releases wrote it. The default: it is what the seed's corpora held,
      and it carries everything the other two forms need.
  ``canonical``
      version 1 (SPEC C3), written by the reference's capture and writer.
  ``legacy``
      fast-agent up to 0.10.4: the minimal record ``{"type", "encrypted_content", "id"}``,
      ``json.dumps`` defaults. Per-item summaries survive only in the display channel.

So the corpus is written in one stored form; ``tools/payload_report.py`` derives the other two
from it (the raw form is the default because nothing has to be invented to derive the others).

Every draw comes from one ``random.Random(--seed)`` (bytes from ``Random.randbytes``; the prose
pool of ``tools/corpus.py``), so the files depend only on the arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import shlex
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

TOOLS_DIR: Final = Path(__file__).resolve().parent
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import corpus  # noqa: E402  (tools/corpus.py: the prose pool summaries are sliced from)
from reasoning_replay import (  # noqa: E402
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    canonicalize_completed_reasoning_output_item,
)
from reasoning_replay.atomic_files import replace_file  # noqa: E402

MANIFEST_NAME: Final = "payload_corpus.json"
HISTORY_NAME: Final = "history_agent.json"
GENERATOR: Final = "tools/payload_corpus.py"
SDK_EXTRA_FIELDS: Final = ("provider_data", "signature", "format", "annotations")
TOOL_NAMES: Final = ("execute", "read_text_file", "write_file", "search_files", "list_directory")


class StoredForm(StrEnum):
    """How a replay record is stored in the ``openai-reasoning-encrypted`` channel."""

    RAW = "raw"  # fast-agent 0.10.6-0.10.11: SDK snapshot minus status
    CANONICAL = "canonical"  # version 1 envelope (SPEC C3)
    LEGACY = "legacy"  # fast-agent <= 0.10.4: {type, encrypted_content, id}


@dataclass(frozen=True, slots=True)
class CorpusParams:
    """Every parameter of a corpus; the defaults are the corpus of docs/payload-report.md."""

    tasks: int = 113
    seed: int = 20261129
    form: StoredForm = StoredForm.RAW
    turns_median: float = 48.0
    turns_sigma: float = 0.6
    turns_range: tuple[int, int] = (4, 200)
    user_turn_weights: tuple[int, ...] = (70, 20, 10)
    item_weights: tuple[int, ...] = (5, 55, 30, 8, 2)
    summary_part_weights: tuple[int, ...] = (10, 35, 30, 15, 10)
    summary_chars: tuple[int, int] = (50, 800)
    ciphertext_median_bytes: int = 4096
    ciphertext_sigma: float = 0.6
    ciphertext_bytes: tuple[int, int] = (1024, 12288)
    content_null_fraction: float = 0.0
    sdk_extra_fraction: float = 0.0
    tool_calls: tuple[int, int] = (1, 3)
    tool_output_chars: tuple[int, int] = (100, 4000)

    def to_json(self) -> dict[str, Any]:
        """The parameters as JSON values (tuples as arrays, the form as its name)."""
        return {name: (list(v) if isinstance(v, tuple) else v) for name, v in asdict(self).items()}


# --- the stored forms of one reasoning item (pure functions, shared with payload_report) -------


def sdk_output_item(
    item_id: str,
    summary: Sequence[str],
    ciphertext: str,
    *,
    content: list[Any] | None = None,
    extras: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A completed reasoning output item as the SDK's ``model_dump(mode="json")`` gives it.

    Field order is the model's declaration order (id, summary, type, content,
    encrypted_content, status), parts as ``{text, type}``, unknown fields last
    (research/openai-sdk.md §6.3). ``content=None`` is the SDK's ``null``.
    """
    item: dict[str, Any] = {
        "id": item_id,
        "summary": [{"text": text, "type": "summary_text"} for text in summary],
        "type": "reasoning",
        "content": content,
        "encrypted_content": ciphertext,
        "status": "completed",
    }
    item.update(extras or {})
    return item


def raw_snapshot_text(output_item: Mapping[str, Any]) -> str:
    """What fast-agent 0.10.6-0.10.11 stored: the snapshot minus ``status``, json.dumps defaults."""
    return json.dumps({name: value for name, value in output_item.items() if name != "status"})


def legacy_minimal_text(item_id: str | None, ciphertext: str) -> str:
    """What fast-agent up to 0.10.4 stored: type, ciphertext, and the id when there is one."""
    record: dict[str, Any] = {"type": "reasoning", "encrypted_content": ciphertext}
    if item_id:
        record["id"] = item_id
    return json.dumps(record)


def canonical_envelope_text(output_item: Mapping[str, Any]) -> str | None:
    """The version 1 envelope the reference's capture writes, or ``None`` when it refuses."""
    return canonicalize_completed_reasoning_output_item(
        dict(output_item), source="response.output_item.done"
    ).envelope_text


def display_text(summary: Sequence[str], content: Sequence[str] = ()) -> str | None:
    """One item's display block as fast-agent 0.10.4-0.10.11 derived it, or ``None`` if empty.

    The summary parts (else the reasoning_text content parts), each stripped, empty ones
    dropped, joined by a blank line. (fast-agent also drops an empty-placeholder part, which this
    generator never draws.)
    """
    parts = [text.strip() for text in summary if text.strip()]
    if not parts:
        parts = [text.strip() for text in content if text.strip()]
    return "\n\n".join(parts).strip() or None


def stored_text(output_item: Mapping[str, Any], form: StoredForm) -> str:
    """The replay-channel text of ``output_item`` in ``form``."""
    if form is StoredForm.RAW:
        return raw_snapshot_text(output_item)
    if form is StoredForm.LEGACY:
        return legacy_minimal_text(output_item["id"], output_item["encrypted_content"])
    text = canonical_envelope_text(output_item)
    if text is None:
        raise ValueError(f"the reference refuses to capture {output_item['id']}")
    return text


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


# --- drawing a corpus ------------------------------------------------------------------------


def _clipped(value: float, bounds: tuple[int, int]) -> int:
    return min(max(int(value), bounds[0]), bounds[1])


class _Draws:
    """Every random choice of one corpus, from one seeded ``random.Random``."""

    def __init__(self, params: CorpusParams) -> None:
        self.params = params
        self.prose = corpus._Generator(params.seed)  # owns the rng and the prose pool
        self.rng = self.prose.rng

    def weighted(self, weights: Sequence[int]) -> int:
        return self.rng.choices(range(len(weights)), weights=weights)[0]

    def text(self, bounds: tuple[int, int]) -> str:
        return self.prose.text(bounds, self.rng.random() < corpus.ODD_CHAR_PROBABILITY)

    def ciphertext(self) -> str:
        p = self.params
        size = self.rng.lognormvariate(math.log(p.ciphertext_median_bytes), p.ciphertext_sigma)
        return base64.b64encode(self.rng.randbytes(_clipped(size, p.ciphertext_bytes))).decode()

    def output_item(self) -> dict[str, Any]:
        p, rng = self.params, self.rng
        item_id = "rs_" + rng.randbytes(24).hex()
        summary = [self.text(p.summary_chars) for _ in range(self.weighted(p.summary_part_weights))]
        ciphertext = self.ciphertext()
        content: list[Any] | None = None if rng.random() < p.content_null_fraction else []
        extras: dict[str, Any] = {}
        if rng.random() < p.sdk_extra_fraction:
            extras[rng.choice(SDK_EXTRA_FIELDS)] = rng.choice((None, "openai", {"v": 1}, []))
        return sdk_output_item(item_id, summary, ciphertext, content=content, extras=extras)

    def assistant(self, calls_tools: bool) -> tuple[dict[str, Any], list[str]]:
        """An assistant message and the ids of the tools it calls."""
        p, rng = self.params, self.rng
        items = [self.output_item() for _ in range(self.weighted(p.item_weights))]
        channels: dict[str, list[dict[str, str]]] = {}
        displays = [display_text([part["text"] for part in item["summary"]]) for item in items]
        if any(displays):
            channels[DISPLAY_CHANNEL] = [text_block(text) for text in displays if text]
        if items:
            channels[REPLAY_CHANNEL] = [text_block(stored_text(i, p.form)) for i in items]
        message: dict[str, Any] = {"role": "assistant", "content": []}
        call_ids: list[str] = []
        if calls_tools:
            if rng.random() < 0.5:
                message["content"] = [text_block(self.text((20, 300)))]
            calls = {}
            for _ in range(rng.randint(*p.tool_calls)):
                call_id = "call_" + rng.randbytes(12).hex()
                call_ids.append(call_id)
                calls[call_id] = {
                    "method": "tools/call",
                    "params": {
                        "name": rng.choice(TOOL_NAMES),
                        "arguments": {"input": self.text((10, 200))},
                    },
                }
            message["tool_calls"] = calls
            message["stop_reason"] = "toolUse"
        else:
            message["content"] = [text_block(self.text((200, 2500)))]
            message["stop_reason"] = "endTurn"
        if channels:
            message["channels"] = channels
        return message, call_ids

    def tool_results(self, call_ids: Sequence[str]) -> dict[str, Any]:
        results = {
            call_id: {
                "content": [text_block(self.text(self.params.tool_output_chars))],
                "isError": self.rng.random() < 0.05,
            }
            for call_id in call_ids
        }
        return {"role": "user", "content": [], "tool_results": results}

    def loop_lengths(self) -> list[int]:
        """Assistant messages per user turn: the task's turns split among its user turns."""
        p, rng = self.params, self.rng
        turns = _clipped(rng.lognormvariate(math.log(p.turns_median), p.turns_sigma), p.turns_range)
        users = min(1 + self.weighted(p.user_turn_weights), turns)
        cuts = sorted(rng.sample(range(1, turns), users - 1))
        bounds = [0, *cuts, turns]
        return [bounds[i + 1] - bounds[i] for i in range(users)]

    def task(self) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        for loop in self.loop_lengths():
            messages.append({"role": "user", "content": [text_block(self.text((50, 1500)))]})
            for index in range(loop):
                message, call_ids = self.assistant(calls_tools=index < loop - 1)
                messages.append(message)
                if call_ids:
                    messages.append(self.tool_results(call_ids))
        return {"messages": messages}


def iter_tasks(params: CorpusParams) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(task name, history)`` for each task, in order."""
    draws = _Draws(params)
    width = max(3, len(str(params.tasks)))
    for index in range(1, params.tasks + 1):
        yield f"task-{index:0{width}d}", draws.task()


def history_bytes(history: Mapping[str, Any]) -> bytes:
    """A history file's bytes: indent 2 and raw UTF-8, as fast-agent saves histories."""
    return (json.dumps(history, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@dataclass(frozen=True, slots=True)
class CorpusFacts:
    """What a written corpus holds."""

    tasks: int
    messages: int
    assistant_messages: int
    reasoning_items: int
    multi_item_messages: int
    file_bytes: int


def _facts_of(history: Mapping[str, Any], file_bytes: int) -> CorpusFacts:
    messages = history["messages"]
    counts = [
        len(m.get("channels", {}).get(REPLAY_CHANNEL, ()))
        for m in messages
        if m["role"] == "assistant"
    ]
    return CorpusFacts(
        tasks=1,
        messages=len(messages),
        assistant_messages=len(counts),
        reasoning_items=sum(counts),
        multi_item_messages=sum(1 for n in counts if n >= 2),
        file_bytes=file_bytes,
    )


def _plus(a: CorpusFacts, b: CorpusFacts) -> CorpusFacts:
    return CorpusFacts(*(getattr(a, f.name) + getattr(b, f.name) for f in fields(CorpusFacts)))


def write_corpus(out: Path, params: CorpusParams, command: str) -> CorpusFacts:
    """Write the task histories and the manifest under ``out``; return what was written."""
    out.mkdir(parents=True, exist_ok=True)
    total = CorpusFacts(0, 0, 0, 0, 0, 0)
    for name, history in iter_tasks(params):
        directory = out / name
        directory.mkdir(mode=0o700, exist_ok=True)
        data = history_bytes(history)
        # 0600 from the first byte, and whole or not at all: a history holds bearer secrets
        # (SPEC §16), and a killed run leaves no cut file (SPEC H5)
        replace_file(directory / HISTORY_NAME, data, mode=0o600)
        total = _plus(total, _facts_of(history, len(data)))
    manifest = {
        "generator": GENERATOR,
        "command": command,
        "parameters": params.to_json(),
        "facts": asdict(total),
    }
    replace_file(out / MANIFEST_NAME, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    return total


# --- command line ----------------------------------------------------------------------------


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas: {text!r}"
        ) from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"negative value in {text!r}")
    return values


def _int_pair(text: str) -> tuple[int, int]:
    values = _int_list(text)
    if len(values) != 2 or values[0] > values[1]:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH with LOW <= HIGH: {text!r}")
    return values[0], values[1]


def _csv(values: Sequence[int]) -> str:
    return ",".join(map(str, values))


def build_parser() -> argparse.ArgumentParser:
    d = CorpusParams()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0],
        epilog="See the module docstring (or tools/README.md) for what each draw models.",
    )
    add = parser.add_argument
    add("--out", type=Path, required=True, help="directory to write (created if absent)")
    add("--tasks", type=int, default=d.tasks, help=f"history files (default {d.tasks})")
    add("--seed", type=int, default=d.seed, help=f"seed of every draw (default {d.seed})")
    add(
        "--form",
        type=StoredForm,
        choices=list(StoredForm),
        default=d.form,
        help="stored form of replay records: raw (0.10.11 snapshot), canonical (v1) or legacy"
        f" (0.10.4 minimal record) (default {d.form})",
    )
    add(
        "--turns-median",
        type=float,
        default=d.turns_median,
        help=f"median assistant messages (provider turns) per task (default {d.turns_median:g})",
    )
    add(
        "--turns-sigma",
        type=float,
        default=d.turns_sigma,
        help=f"lognormal sigma of turns per task (default {d.turns_sigma:g})",
    )
    add(
        "--turns-range",
        type=_int_pair,
        default=d.turns_range,
        help=f"clip of turns per task, LOW,HIGH (default {_csv(d.turns_range)})",
    )
    add(
        "--user-turn-weights",
        type=_int_list,
        default=d.user_turn_weights,
        help=f"weights of 1, 2, 3, ... user turns per task (default {_csv(d.user_turn_weights)})",
    )
    add(
        "--item-weights",
        type=_int_list,
        default=d.item_weights,
        help="weights of 0, 1, 2, ... reasoning items per assistant message"
        f" (default {_csv(d.item_weights)})",
    )
    add(
        "--summary-part-weights",
        type=_int_list,
        default=d.summary_part_weights,
        help="weights of 0, 1, 2, ... summary parts per item"
        f" (default {_csv(d.summary_part_weights)})",
    )
    add(
        "--summary-chars",
        type=_int_pair,
        default=d.summary_chars,
        help=f"characters per summary part, LOW,HIGH (default {_csv(d.summary_chars)})",
    )
    add(
        "--ciphertext-median-bytes",
        type=int,
        default=d.ciphertext_median_bytes,
        help=f"median ciphertext bytes before base64 (default {d.ciphertext_median_bytes})",
    )
    add(
        "--ciphertext-sigma",
        type=float,
        default=d.ciphertext_sigma,
        help=f"lognormal sigma of ciphertext bytes (default {d.ciphertext_sigma:g})",
    )
    add(
        "--ciphertext-bytes",
        type=_int_pair,
        default=d.ciphertext_bytes,
        help="clip of ciphertext bytes before base64, LOW,HIGH"
        f" (default {_csv(d.ciphertext_bytes)})",
    )
    add(
        "--content-null-fraction",
        type=float,
        default=d.content_null_fraction,
        help="share of items whose SDK dump has content null instead of [] (default 0)",
    )
    add(
        "--sdk-extra-fraction",
        type=float,
        default=d.sdk_extra_fraction,
        help="share of items with one unknown SDK field (default 0, as audited)",
    )
    add(
        "--tool-calls",
        type=_int_pair,
        default=d.tool_calls,
        help=f"tools called per tool-loop message, LOW,HIGH (default {_csv(d.tool_calls)})",
    )
    add(
        "--tool-output-chars",
        type=_int_pair,
        default=d.tool_output_chars,
        help=f"characters per tool result, LOW,HIGH (default {_csv(d.tool_output_chars)})",
    )
    return parser


def params_from_args(args: argparse.Namespace) -> CorpusParams:
    return CorpusParams(**{f.name: getattr(args, f.name) for f in fields(CorpusParams)})


def check_params(params: CorpusParams) -> str | None:
    """Why ``params`` cannot make a corpus, or ``None``."""
    if params.tasks < 0:
        return "--tasks must be >= 0"
    if params.turns_range[0] < 1 or params.turns_median <= 0 or params.turns_sigma < 0:
        return "turns must be positive and the sigma >= 0"
    for name in ("user_turn_weights", "item_weights", "summary_part_weights"):
        if not sum(getattr(params, name)):
            return f"--{name.replace('_', '-')} needs a positive weight"
    if params.ciphertext_bytes[0] < 1 or params.summary_chars[0] < 1 or params.tool_calls[0] < 1:
        return "ciphertext bytes, summary characters and tool calls must be >= 1"
    for name in ("content_null_fraction", "sdk_extra_fraction"):
        if not 0.0 <= getattr(params, name) <= 1.0:
            return f"--{name.replace('_', '-')} must be within [0, 1]"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    params = params_from_args(args)
    problem = check_params(params)
    if problem:
        parser.error(problem)
    command = shlex.join(["python", GENERATOR, *arguments])
    started = time.perf_counter()
    facts = write_corpus(args.out, params, command)
    print(
        f"wrote {facts.tasks} histories ({facts.file_bytes / 1e6:.1f} MB, {facts.messages}"
        f" messages, {facts.assistant_messages} assistant, {facts.reasoning_items} reasoning items,"
        f" {facts.multi_item_messages} multi-item messages) to {args.out}"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
