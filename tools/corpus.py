"""Generate a seeded corpus of reasoning-replay envelopes for benchmarks and agreement checks.

Usage::

    python tools/corpus.py --count 100000 --seed 20251129 --out PATH.jsonl [--invalid-fraction 0.1]

Writes ``PATH.jsonl`` (one record per line, UTF-8, ``\\n``-terminated) and the sidecar
``PATH.labels.jsonl``, whose line *i* labels record *i*::

    {"valid": true, "kind": "valid", "schema_visible": true}

``kind`` is ``"valid"`` or one of :data:`INVALID_KINDS`. ``schema_visible`` is ``false`` only
for ``duplicate_member``: a JSON Schema validator sees the parsed value, in which the last
duplicate wins, so it would call that record valid, while a strict reader must reject it.

Valid records are the canonical form writers emit: members in the order
``schema, version, item`` and ``type, id, summary, encrypted_content[, content]``, compact
separators, raw UTF-8 for non-ASCII. The shape follows the project's performance anchors:

- ``id``: ``"rs_"`` + 48 lowercase hex digits.
- ``encrypted_content``: base64 of random bytes; the byte length is lognormal with median
  4096 and sigma 0.6, clipped to [1024, 12288], so the base64 text is about 1.4-16.4 KB
  (median about 5.5 KB).
- ``summary``: 0-4 ``summary_text`` parts with weights 10/35/30/15/10 %, each 50-800
  characters of prose-like text with non-ASCII (curly quotes and apostrophes, em dashes, é,
  数据, ✓), ``\\n``, markdown bold and backticks; about one part in six also carries a
  ``"``, a backslash or a tab.
- ``content``: 1 valid record in 20 carries 1-2 ``reasoning_text`` parts of 200-3000
  characters.
- Invalid records: ``--invalid-fraction`` (default 0.1) of ``--count``, counted inside the
  total, at random positions, split as evenly as the count allows across
  :data:`INVALID_KINDS` (the first ``n % 12`` kinds get one extra).

The output depends only on the arguments: every draw comes from one ``random.Random(seed)``
(bytes from ``Random.randbytes``), with no OS entropy, clock or hash ordering involved, so a
seed reproduces the same bytes on any machine with the same CPython version (barring a libm
rounding difference in ``lognormvariate`` landing exactly on an integer boundary).
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, TypedDict

SCHEMA_NAME: Final = "fast-agent.openai-responses.reasoning-replay"

INVALID_KINDS: Final[tuple[str, ...]] = (
    "wrong_version",  # "version": 2
    "version_true",  # "version": true
    "extra_top_level_key",  # an unknown member next to schema/version/item
    "extra_item_key",  # an unknown member inside item
    "empty_id",  # item.id == ""
    "content_null",  # item.content == null
    "content_empty",  # item.content == []
    "status_present",  # item.status == "completed"
    "duplicate_member",  # a member written twice; the last value is valid (schema-invisible)
    "summary_part_extra_key",  # a summary part with a third member
    "legacy_minimal",  # a bare {"type","encrypted_content","id"} item, no envelope
    "raw_sdk_snapshot",  # an SDK model dump, no envelope, status and content null
)

# The code SPEC.md section 3 (E6, first failing check) gives each invalid kind. The labels do
# not carry it; tools/bench_reader.py reports how often the reader's code differs from it.
EXPECTED_CODES: Final[dict[str, str]] = {
    "wrong_version": "envelope_version_unsupported",
    "version_true": "envelope_version_invalid",
    "extra_top_level_key": "envelope_member_unknown",
    "extra_item_key": "item_member_unknown",
    "empty_id": "item_id_invalid",
    "content_null": "item_content_invalid",
    "content_empty": "item_content_invalid",
    "status_present": "item_member_unknown",
    "duplicate_member": "json_duplicate_member",
    "summary_part_extra_key": "item_summary_invalid",
    "legacy_minimal": "legacy_minimal_record",
    "raw_sdk_snapshot": "raw_sdk_snapshot",
}

SUMMARY_PART_WEIGHTS: Final = (10, 35, 30, 15, 10)  # for 0, 1, 2, 3, 4 parts
SUMMARY_TEXT_CHARS: Final = (50, 800)
CONTENT_EVERY: Final = 20  # one valid record in 20 carries content
CONTENT_PARTS: Final = (1, 2)
CONTENT_TEXT_CHARS: Final = (200, 3000)
CIPHERTEXT_MEDIAN_BYTES: Final = 4096
CIPHERTEXT_SIGMA: Final = 0.6
CIPHERTEXT_BYTES: Final = (1024, 12288)
ODD_CHAR_PROBABILITY: Final = 1 / 6  # a summary part gets one of ", \, tab
_FLUSH_BYTES: Final = 1 << 20  # written a MiB at a time: a system call per MiB, not per line

_POOL_WORDS: Final = 60_000  # words in the seeded prose pool that text is sliced from
_ODD_CHARS: Final = ('"', "\\", "\t")

_WORDS: Final = (
    "the", "the", "the", "a", "a", "of", "to", "and", "and", "in", "is", "is", "it", "that",
    "for", "on", "with", "as", "this", "we", "be", "by", "or", "not", "can", "should",
    "user", "request", "answer", "check", "consider", "first", "then", "next", "maybe",
    "function", "result", "value", "list", "error", "case", "step", "plan", "data",
    "response", "schema", "version", "record", "field", "reasoning", "summary", "tool",
    "call", "output", "input", "file", "path", "test", "config", "retry", "cache",
    "let\u2019s", "don\u2019t", "it\u2019s", "\u2014", "\u201cquoted\u201d", "café", "résumé",
    "naïve", "数据", "✓",
    "**important**", "**note**", "`parse()`", "`json.loads`", "`id`", "`None`",
    "done.", "okay,", "so", "because", "however,", "therefore", "e.g.", "i.e.", "(see", "above)",
)  # fmt: skip


class Label(TypedDict):
    """What the generator meant one line to be."""

    valid: bool
    kind: str
    schema_visible: bool


def labels_path_for(path: Path) -> Path:
    """The sidecar of ``out.jsonl`` is ``out.labels.jsonl``; other names get the suffix appended."""
    if path.name.endswith(".jsonl"):
        return path.with_name(path.name[: -len(".jsonl")] + ".labels.jsonl")
    return path.with_name(path.name + ".labels.jsonl")


def _dump(value: Any) -> str:
    """Canonical text: compact separators, raw UTF-8, member order as built."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Generator:
    """All draws for one corpus, from one seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        rng = self.rng
        pieces: list[str] = []
        for word in rng.choices(_WORDS, k=_POOL_WORDS):
            roll = rng.random()
            if roll < 0.06:
                pieces.append(word + ".\n")
            elif roll < 0.08:
                pieces.append(word + ".\n\n- ")
            else:
                pieces.append(word + " ")
        self.pool = "".join(pieces)

    def text(self, bounds: tuple[int, int], odd: bool) -> str:
        rng = self.rng
        length = rng.randint(*bounds)
        start = rng.randrange(len(self.pool) - length - 64)
        start = self.pool.index(" ", start) + 1  # begin at a word
        text = self.pool[start : start + length]
        if odd:
            at = rng.randrange(length)
            text = text[:at] + rng.choice(_ODD_CHARS) + text[at + 1 :]
        return text

    def summary(self, at_least_one: bool = False) -> list[dict[str, str]]:
        rng = self.rng
        count = rng.choices(range(len(SUMMARY_PART_WEIGHTS)), weights=SUMMARY_PART_WEIGHTS)[0]
        if at_least_one:
            count = max(count, 1)
        return [
            {
                "type": "summary_text",
                "text": self.text(SUMMARY_TEXT_CHARS, rng.random() < ODD_CHAR_PROBABILITY),
            }
            for _ in range(count)
        ]

    def content(self) -> list[dict[str, str]]:
        count = self.rng.randint(*CONTENT_PARTS)
        return [
            {"type": "reasoning_text", "text": self.text(CONTENT_TEXT_CHARS, False)}
            for _ in range(count)
        ]

    def item_id(self) -> str:
        return "rs_" + self.rng.randbytes(24).hex()

    def ciphertext(self) -> str:
        rng = self.rng
        size = int(rng.lognormvariate(math.log(CIPHERTEXT_MEDIAN_BYTES), CIPHERTEXT_SIGMA))
        size = min(max(size, CIPHERTEXT_BYTES[0]), CIPHERTEXT_BYTES[1])
        return base64.b64encode(rng.randbytes(size)).decode("ascii")

    def item(self, with_content: bool, at_least_one_part: bool = False) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": self.item_id(),
            "summary": self.summary(at_least_one_part),
            "encrypted_content": self.ciphertext(),
        }
        if with_content:
            item["content"] = self.content()
        return item

    def valid(self) -> str:
        with_content = self.rng.randrange(CONTENT_EVERY) == 0
        return _dump({"schema": SCHEMA_NAME, "version": 1, "item": self.item(with_content)})

    def invalid(self, kind: str) -> str:
        rng = self.rng
        envelope: dict[str, Any] = {"schema": SCHEMA_NAME, "version": 1}
        item = self.item(rng.randrange(CONTENT_EVERY) == 0, kind == "summary_part_extra_key")
        envelope["item"] = item
        match kind:
            case "wrong_version":
                envelope["version"] = 2
            case "version_true":
                envelope["version"] = True
            case "extra_top_level_key":
                key = rng.choice(("saved_at", "meta", "provider", "schema_version"))
                envelope[key] = rng.choice(("2025-11-29T12:00:00Z", {}, "openai", 1))
            case "extra_item_key":
                key = rng.choice(("provider_data", "signature", "model", "format"))
                item[key] = rng.choice(("openai-responses", None, "sig_abc", 0))
            case "empty_id":
                item["id"] = ""
            case "content_null":
                item["content"] = None
            case "content_empty":
                item["content"] = []
            case "status_present":
                item["status"] = "completed"
            case "duplicate_member":
                return self._duplicate(envelope)
            case "summary_part_extra_key":
                part = rng.choice(item["summary"])
                part[rng.choice(("annotations", "index", "format"))] = rng.choice(([], 0, "md"))
            case "legacy_minimal":
                return _dump(
                    {
                        "type": "reasoning",
                        "encrypted_content": item["encrypted_content"],
                        "id": item["id"],
                    }
                )
            case "raw_sdk_snapshot":
                return _dump(
                    {
                        "id": item["id"],
                        "summary": item["summary"],
                        "type": "reasoning",
                        "content": None,
                        "encrypted_content": item["encrypted_content"],
                        "status": None,
                    }
                )
            case _:
                raise ValueError(f"unknown invalid kind {kind!r}")
        return _dump(envelope)

    def _duplicate(self, envelope: dict[str, Any]) -> str:
        """A record whose last-wins parse is valid but which repeats one member textually.

        The first textual match is always the intended member: the envelope's members come
        before any string text, and a ``"`` inside a JSON string is always escaped.
        """
        text = _dump(envelope)
        item_id = envelope["item"]["id"]
        first, repeated = self.rng.choice(
            (
                ('"version":1,', '"version":2,"version":1,'),
                ('"version":1,', '"version":1,"version":1,'),
                (f'"id":"{item_id}"', f'"id":"","id":"{item_id}"'),
                ('"type":"reasoning",', '"type":"reasoning","type":"reasoning",'),
                (f'"schema":"{SCHEMA_NAME}"', f'"schema":"other","schema":"{SCHEMA_NAME}"'),
            )
        )
        return text.replace(first, repeated, 1)


# --- the same records as other writers lay them out ----------------------------------------------

LAYOUTS: Final[tuple[str, ...]] = ("canonical", "reordered", "spaced")
"""How :func:`relayout` writes a record: ``canonical`` as generated (SPEC C3); ``reordered``
compact, every object's members in a seeded random order (what a writer that builds objects in
its own order produces); ``spaced`` in the generated order as ``json.dumps`` writes by default
(``", "`` and ``": "`` separators, every non-ASCII character as a ``\\u`` escape)."""


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        members = [(name, _shuffled(member, rng)) for name, member in value.items()]
        rng.shuffle(members)
        return dict(members)
    if isinstance(value, list):
        return [_shuffled(element, rng) for element in value]
    return value


def relayout(line: str, layout: str, rng: random.Random) -> str:
    """``line`` with the same JSON value written in ``layout`` (:data:`LAYOUTS`).

    A line with a duplicate member is returned as it is (rewriting it would drop the duplicate),
    so every line keeps its label and the code SPEC E6 gives it, which depends on the value only.
    """
    if layout == "canonical":
        return line
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    pairs: list[list[tuple[str, Any]]] = []

    def keep(members: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs.append(members)
        return dict(members)

    value = json.loads(line, object_pairs_hook=keep)
    if any(len(dict(members)) != len(members) for members in pairs):
        return line
    if layout == "reordered":
        return _dump(_shuffled(value, rng))
    return json.dumps(value)


def invalid_plan(count: int, invalid_fraction: float, rng: random.Random) -> dict[int, str]:
    """Line index -> invalid kind: ``round(count * fraction)`` lines, kinds in equal shares."""
    if not 0.0 <= invalid_fraction <= 1.0:
        raise ValueError("invalid_fraction must be within [0, 1]")
    n_invalid = round(count * invalid_fraction)
    kinds = [INVALID_KINDS[i % len(INVALID_KINDS)] for i in range(n_invalid)]
    rng.shuffle(kinds)
    positions = rng.sample(range(count), n_invalid)
    return dict(zip(positions, kinds, strict=True))


def iter_records(
    count: int, seed: int, invalid_fraction: float = 0.1
) -> Iterator[tuple[str, Label]]:
    """Yield ``(line, label)`` for each of ``count`` records; ``line`` has no newline."""
    gen = _Generator(seed)
    plan = invalid_plan(count, invalid_fraction, gen.rng)
    for index in range(count):
        kind = plan.get(index)
        if kind is None:
            yield gen.valid(), {"valid": True, "kind": "valid", "schema_visible": True}
        else:
            label: Label = {
                "valid": False,
                "kind": kind,
                "schema_visible": kind != "duplicate_member",
            }
            yield gen.invalid(kind), label


def generate(count: int, seed: int, invalid_fraction: float = 0.1) -> tuple[list[str], list[Label]]:
    """The whole corpus in memory: the lines (no newlines) and their labels."""
    lines: list[str] = []
    labels: list[Label] = []
    for line, label in iter_records(count, seed, invalid_fraction):
        lines.append(line)
        labels.append(label)
    return lines, labels


def write_corpus(
    out: Path, count: int, seed: int, invalid_fraction: float = 0.1
) -> tuple[Path, int]:
    """Write ``out`` and its labels sidecar; return the sidecar path and the corpus byte size.

    Each file is replaced whole or not at all (SPEC H5's rule for every writer): a killed run
    leaves the old files, or none, never a cut one. The labels are put in place first, the
    corpus last."""
    # imported here: the rest of this module is the standard library's alone, for the tools
    # that import it before they find the reference (bench_reader.py, bench_abi3.py's workers)
    from reasoning_replay.atomic_files import Replacement  # noqa: PLC0415

    labels_out = labels_path_for(out)
    size = 0
    with Replacement(out) as lines_file, Replacement(labels_out) as labels_file:
        lines, labels = bytearray(), bytearray()
        for line, label in iter_records(count, seed, invalid_fraction):
            data = line.encode("utf-8") + b"\n"
            size += len(data)
            lines += data
            labels += _dump(label).encode("utf-8") + b"\n"
            if len(lines) >= _FLUSH_BYTES:
                lines_file.write(lines)
                labels_file.write(labels)
                lines.clear()
                labels.clear()
        lines_file.write(lines)
        labels_file.write(labels)
    return labels_out, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--count", type=int, default=100_000, help="records (default 100000)")
    parser.add_argument("--seed", type=int, default=20251129, help="seed (default 20251129)")
    parser.add_argument("--out", type=Path, required=True, help="output PATH.jsonl")
    parser.add_argument(
        "--invalid-fraction", type=float, default=0.1, help="share of invalid lines (default 0.1)"
    )
    args = parser.parse_args(argv)
    if args.count < 0:
        parser.error("--count must be >= 0")
    if not 0.0 <= args.invalid_fraction <= 1.0:
        parser.error("--invalid-fraction must be within [0, 1]")
    started = time.perf_counter()
    labels_out, size = write_corpus(args.out, args.count, args.seed, args.invalid_fraction)
    elapsed = time.perf_counter() - started
    print(
        f"wrote {args.count} records ({size / 1e6:.1f} MB) to {args.out} "
        f"and labels to {labels_out} in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
