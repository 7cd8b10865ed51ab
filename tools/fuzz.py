"""Differential fuzzer of every reader path and every history tool (issue 12, "Keep it so").

```sh
python tools/fuzz.py [--seconds 60] [--iterations N] [--seed 20261201] [--corpus DIR] \
    [--report FILE] [--no-js] [--js "node conformance/adapters/js/bin/adapter.js"] \
    [--engine own|atheris]
```

``--engine atheris`` hands the in-process checks to libFuzzer instead (:func:`run_atheris`).

Three kinds of input, drawn in turn from one ``random.Random(seed)`` (so input *i* depends only on
the seed and *i*, and a run is reproducible; ``--seconds`` only says when to stop):

* **read**: block texts, as characters and as bytes, mutated from the ``read`` vectors, the
  envelopes the ``capture`` vectors write, generated envelopes and the files of ``--corpus``.
  Every reader path must give one verdict (SPEC E6): the fast reader (``record._fast``) with both
  C accelerators, with either, with neither (msgspec and Python), the statement
  (``record.read.read_block``, what ``REASONING_REPLAY_PURE_PYTHON=1`` runs), the text as
  characters and as its UTF-8 bytes, and the JavaScript implementation through its adapter
  (conformance/PROTOCOL.md, persistent, many requests per batch). Each accelerator is also
  compared with its Python counterpart directly (``_canonical`` with
  ``_fast.canonical.read_canonical``, ``_strict`` with ``jsontext.parse_strict_statement``).
* **capture**: SDK output items mutated from the ``capture`` vectors. The reference and the
  JavaScript implementation must write the same envelope text or refuse with the same code, and
  every written text must read back resumable, with the item captured.
* **history**: generated histories (SPEC H1), with a canary ciphertext in each of the text
  forms of issue 12 (a JSON array, a duplicate member, nesting over 32, a lone-surrogate escape,
  trailing data, a byte-order mark, JSON inside a JSON string, an envelope in a message's
  ``content``, and plain forms), and their texts mutated. The C reading of history files
  (``_history``) must give, wherever it reads a file (as characters and as bytes), the messages
  Python's json gives (``history_files.read_message_channels_exhaustively``), the replay texts it
  keeps as bytes being the same texts. ``validate`` (on the characters and the
  bytes), ``scan``, and ``export`` in both modes run in-process: none may raise; a resumable
  export is the history as stored (SPEC H6); a redacted export holds no canary, in any escape, and
  nothing ``scan`` flags (SPEC H6, H8); ``scan`` flags the history itself. The JavaScript
  implementation's redacted export must be the reference's, and hold no canary either.

A path that raises, two verdicts for one input, or a leak is a finding. Each finding is reduced
(chunks removed while it still fails the same way) and printed as a reproducer; the exit status is
then 1. ``--report FILE`` writes the figures and the findings as JSON; ``--corpus DIR`` adds its
files (one block text each, as bytes) to the seeds and keeps there the inputs that found a new
verdict.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import hashlib
import importlib
import json
import queue
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any, Final

from leak_corpus import corpus
from reasoning_replay.atomic_files import replace_file
from reasoning_replay.diagnostics import Code
from reasoning_replay.history import history_files
from reasoning_replay.history.export import ExportMode, export_history
from reasoning_replay.history.history_files import (
    HistoryFileProblem,
    parse_json_file,
    parse_json_file_exhaustively,
    read_message_channels_exhaustively,
)
from reasoning_replay.history.scan import scan_text
from reasoning_replay.history.validation import validate_history
from reasoning_replay.record import jsontext
from reasoning_replay.record._fast import canonical as canonical_path
from reasoning_replay.record._fast import general
from reasoning_replay.record.capture import canonicalize_completed_reasoning_output_item
from reasoning_replay.record.envelope import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    SCHEMA_NAME,
    ReasoningReplayItem,
)
from reasoning_replay.record.jsontext import TextRefused
from reasoning_replay.record.read import read_block
from reasoning_replay.suite.jsontext import dumps_pretty
from reasoning_replay.suite.vectors import Case, load_vector_dirs

REPO: Final = Path(__file__).resolve().parents[1]
VECTORS: Final = REPO / "conformance" / "vectors"
JS_ADAPTER: Final = f"node {REPO / 'conformance' / 'adapters' / 'js' / 'bin' / 'adapter.js'}"
DEFAULT_SEED: Final = 20261201
JS_BATCH: Final = 256  # requests per batch to the adapter
JS_TIMEOUT: Final = 10.0  # seconds for one reply
READ_REDUCTION_ATTEMPTS: Final = 600
HISTORY_REDUCTION_ATTEMPTS: Final = 150
CAPTURE_SOURCE: Final = "response.output_item.done"

# --- verdicts -----------------------------------------------------------------------------------

# One reader verdict: ("item", provider input item as JSON text) or ("reject", code). A provider
# input item is compared as its JSON text (ensure_ascii: lone surrogates compare too).
Verdict = tuple[str, str]


def item_verdict(item: ReasoningReplayItem | dict[str, Any]) -> Verdict:
    value = item.to_provider_input() if isinstance(item, ReasoningReplayItem) else item
    return ("item", json.dumps(value, sort_keys=True))


def reject_verdict(code: Code | str) -> Verdict:
    return ("reject", code.value if isinstance(code, Code) else code)


def _read_with(canonical: bool, strict: bool) -> Callable[[str | bytes], Verdict]:
    """The fast reader with the C accelerators of the canonical path and of ``_strict`` (the
    strict parser, the envelope in any layout) on or off (both off: msgspec and Python)."""

    def read(text: str | bytes) -> Verdict:
        saved = canonical_path._accelerator, general._accelerator, general._envelope_accelerator
        canonical_path._accelerator = saved[0] if canonical else None
        general._accelerator = saved[1] if strict else None
        general._envelope_accelerator = saved[2] if strict else None
        try:
            result = general.read(text)
        finally:
            (
                canonical_path._accelerator,
                general._accelerator,
                general._envelope_accelerator,
            ) = saved
        if result.item is not None:
            return item_verdict(result.item)
        assert result.code is not None
        return reject_verdict(result.code)

    return read


def statement_verdict(text: str | bytes) -> Verdict:
    """SPEC E6 read by its Python statement alone: the yardstick of every faster path."""
    result = read_block(text)
    if result.item is not None:
        return item_verdict(result.item)
    assert result.code is not None
    return reject_verdict(result.code)


ReaderPath = Callable[[str | bytes], Verdict]


def reader_paths() -> dict[str, ReaderPath]:
    """Every in-process reader path that is built here, by name."""
    paths: dict[str, ReaderPath] = {"statement": statement_verdict}
    canonical_built = canonical_path._accelerator is not None
    strict_built = general._accelerator is not None
    for canonical in (True, False):
        for strict in (True, False):
            if (canonical and not canonical_built) or (strict and not strict_built):
                continue
            name = (
                f"reader[canonical={'c' if canonical else 'py'},strict={'c' if strict else 'py'}]"
            )
            paths[name] = _read_with(canonical, strict)
    return paths


def _typed(value: object) -> object:
    """``value`` with every scalar tagged by its type (``True == 1`` in Python, not here)."""
    if isinstance(value, dict):
        return ("object", [(name, _typed(member)) for name, member in value.items()])
    if isinstance(value, list):
        return ("array", [_typed(element) for element in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def _file_reading(value: object) -> object:
    """A history file's reading as compared across paths: its problem's code, or its value as
    a flat list of type-tagged tokens (a loop, not recursion: a file may nest deeper than the
    interpreter's recursion limit)."""
    if isinstance(value, HistoryFileProblem):
        return value.code
    tokens: list[object] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            tokens.append(("object", list(current)))
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            tokens.append(("array", len(current)))
            stack.extend(reversed(current))
        elif isinstance(current, float):
            tokens.append(("float", repr(current)))
        else:
            tokens.append((type(current).__name__, current))
    return tokens


def accelerator_differences(text: str | bytes) -> dict[str, str]:
    """Where an accelerator and its Python statement disagree on ``text``: a signature and a
    message for each (empty: nowhere)."""
    problems: dict[str, str] = {}
    canonical = canonical_path._accelerator
    if canonical is not None:
        chars: str | None = text if isinstance(text, str) else None
        if isinstance(text, bytes):
            with contextlib.suppress(UnicodeDecodeError):
                chars = text.decode("utf-8")
        fields = canonical(text)
        expected = None if chars is None else canonical_path.read_canonical(chars)
        got = None if fields is None else ReasoningReplayItem(*fields)
        if got != expected:
            problems["_canonical differs from read_canonical"] = f"C {got!r}, Python {expected!r}"
    read_envelope = general._envelope_accelerator
    if read_envelope is not None and not jsontext.text_length_exceeds_limit(text):
        fields = read_envelope(text)
        got = None if fields is None else ReasoningReplayItem(*fields)
        expected = read_block(text).item
        if got != expected:
            problems["read_envelope differs from the statement"] = (
                f"C {got!r:.200}, statement {expected!r:.200}"
            )
    strict = general._accelerator
    if strict is not None and not jsontext.text_length_exceeds_limit(text):
        decided = strict(text)
        statement = jsontext.parse_strict_statement(text)
        if decided is None:
            undecided = {Code.JSON_MALFORMED, Code.JSON_INVALID_UNICODE, Code.LIMIT_EXCEEDED}
            if not (isinstance(statement, TextRefused) and statement.code in undecided):
                problems["_strict leaves undecided what Python decides"] = repr(statement)[:300]
        else:
            code, value = decided
            if isinstance(statement, TextRefused):
                if code != statement.code.value:
                    problems["_strict gives another code"] = f"C {code}, Python {statement.code}"
            elif code is not None or _typed(value) != _typed(statement):
                problems["_strict gives another value"] = (
                    f"C {code} {value!r:.200}, Python {statement!r:.200}"
                )
    return problems


def _typed_messages(messages: Sequence[Any]) -> list[object]:
    """A history reading's messages, every value typed (:func:`_typed`), replay texts kept as
    bytes read as the characters they encode."""
    typed: list[object] = []
    for role, channels, provider in messages:
        named = dict(channels)
        if REPLAY_CHANNEL in named:
            named[REPLAY_CHANNEL] = [
                {k: v.decode("utf-8") if isinstance(v, bytes) else v for k, v in block.items()}
                if isinstance(block, dict)
                else block
                for block in named[REPLAY_CHANNEL]
            ]
        typed.append((role, _typed(named), provider))
    return typed


def history_reading_differences(text: str) -> dict[str, str]:
    """Where the C reading of a history file and Python's json disagree on ``text``, as
    characters and as bytes: a signature and a message for each (empty: nowhere)."""
    problems: dict[str, str] = {}
    read = history_files._accelerator
    if read is None:
        return problems
    forms: list[str | bytes] = [text]
    with contextlib.suppress(UnicodeEncodeError):
        forms.append(text.encode("utf-8"))
    for form in forms:
        kind = "str" if isinstance(form, str) else "bytes"
        expected = read_message_channels_exhaustively(form)
        for stored_texts in (None, REPLAY_CHANNEL):
            got = read(form, history_files._NO_CHANNELS, stored_texts)
            if got is None:
                continue  # left to the other readings, which decide every file
            if isinstance(expected, HistoryFileProblem):
                problems[f"_history reads a file json finds broken ({kind})"] = repr(expected)
            elif _typed_messages(got) != _typed_messages(expected):
                problems[f"_history reads otherwise than json ({kind})"] = (
                    f"C {got!r:.200}, json {expected!r:.200}"
                )
    return problems


# --- the JavaScript implementation, through its adapter -----------------------------------------


class JsAdapter:
    """A persistent adapter process (conformance/PROTOCOL.md): batches of requests, in order."""

    def __init__(self, command: str) -> None:
        self.command = shlex.split(command)
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.seq = 0
        self.restarts = 0
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=REPO,
        )
        replies: queue.Queue[str | None] = queue.Queue()
        self.replies = replies
        stdout = process.stdout
        assert stdout is not None

        def pump() -> None:
            for line in stdout:
                replies.put(line.decode("utf-8", "replace"))
            replies.put(None)  # end of stream: the process is gone

        threading.Thread(target=pump, daemon=True).start()
        return process

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _restart(self) -> None:
        self.process.kill()
        self.process.wait()
        self.restarts += 1
        self.process = self._start()

    def run(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """One reply per ``(operation, input)``: the adapter's reply object without ``seq``, or
        ``{"crash": why}`` for a request it did not answer (it is then restarted)."""
        results: list[dict[str, Any]] = []
        while len(results) < len(requests):
            results.extend(self._run_some(requests[len(results) :]))
        return results

    def _run_some(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        first = self.seq + 1
        lines = []
        for offset, (operation, data) in enumerate(requests):
            request = {"cmd": "run", "seq": first + offset, "id": "fuzz", "operation": operation}
            request["input"] = data
            lines.append(json.dumps(request, ensure_ascii=True) + "\n")
        self.seq += len(requests)
        stdin = self.process.stdin
        assert stdin is not None

        def write() -> None:  # a thread: the adapter's replies fill its pipe as we write
            with contextlib.suppress(OSError):
                stdin.write("".join(lines).encode("ascii"))
                stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        results: list[dict[str, Any]] = []
        for offset in range(len(requests)):
            try:
                line = self.replies.get(timeout=JS_TIMEOUT)
            except queue.Empty:
                line = None
            reply: object = None
            if line is not None:
                with contextlib.suppress(ValueError):
                    reply = json.loads(line)
            if not isinstance(reply, dict) or reply.get("seq") != first + offset:
                why = "no reply (crash or timeout)" if line is None else f"bad reply {line[:200]!r}"
                results.append({"crash": why})
                writer.join()
                self._restart()
                return results
            reply.pop("seq")
            results.append(reply)
        writer.join()
        return results


def as_js_sees(text: str) -> str:
    """``text`` as JavaScript reads it from a JSON line: JSON escapes are UTF-16 code units, so a
    high surrogate followed by a low one (two code points in Python) arrives as one pair."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def js_read_input(text: str | bytes) -> dict[str, Any]:
    if isinstance(text, bytes):
        return {"text_base64": base64.b64encode(text).decode("ascii")}
    return {"text": text}


def js_verdict(reply: dict[str, Any]) -> Verdict:
    if "output" in reply and isinstance(reply["output"], dict) and "item" in reply["output"]:
        return item_verdict(reply["output"]["item"])
    if "reject" in reply and isinstance(reply["reject"], dict):
        return reject_verdict(str(reply["reject"].get("code")))
    return ("error", json.dumps(reply, ensure_ascii=True)[:300])


# --- mutation -----------------------------------------------------------------------------------

# Pieces that sit on the edges of SPEC E4/E6: structure, escapes, surrogates, numbers, names.
TEXT_PIECES: Final = (
    '"', "\\", "{", "}", "[", "]", ",", ":", " ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f",
    "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u00e9", "\\\"", "\\/", "\\x",
    "\ud800", "\udfff", "\ufeff", "\u2028", "é", "数据", "\U0001f600", "\uffff", "\ufdd0",
    "null", "true", "false", "0", "-0", "1", "1.0", "1e400", "-1e-400", "NaN", "Infinity",
    "9" * 700, "01", "1.", ".5", "+1", '"schema"', '"version"', '"item"', '"type"', '"id"',
    '"summary"', '"encrypted_content"', '"content"', '"text"', '"reasoning"', '"summary_text"',
    '"reasoning_text"', f'"{SCHEMA_NAME}"', f'"{SCHEMA_NAME}.redacted"', ',"x":1', '""',
    '"gAAAA"', "[" * 33, "]" * 33, "{}", "[]",
)  # fmt: skip
BYTE_PIECES: Final = (
    b"\x80", b"\xbf", b"\xc3", b"\xe6\x95", b"\xed\xa0\x80", b"\xc0\xa2", b"\xff",
    b"\xf4\x90\x80\x80", b"\xef\xbb\xbf", b"\xfe\xff", b"\x00", b"\xc3\xa9", b"\xf0\x9f\x98",
)  # fmt: skip
STRING_POOL: Final = (
    "", "s", "rs_1", "é", "数据 ✓", "\x00", "\ud800", "\udc00x", "\ufeff", "\u2028", '"\\',
    "\U0001f600", "a" * 300, "gAAAAABcanary", "\x7f\x1f", "\ufdd0\uffff",
)  # fmt: skip


def _json_text(value: object, rng: random.Random) -> str:
    """``value`` written one of the ways JSON allows: compact or spaced, escaped or raw."""
    if rng.random() < 0.5:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))


def _wrap_deep(text: str, depth: int) -> str:
    return "[" * depth + text + "]" * depth


def _mutate_value(value: object, rng: random.Random, budget: int = 3) -> object:
    """One structural change somewhere in a JSON value."""
    if budget <= 0 or not isinstance(value, (dict, list)) or not value or rng.random() < 0.2:
        return rng.choice(
            [
                None,
                True,
                False,
                0,
                1,
                -1,
                1.0,
                2,
                2**64,
                1e300,
                [],
                {},
                [value],
                {"x": value},
                *STRING_POOL,
            ]
        )
    if isinstance(value, dict):
        name = rng.choice(list(value))
        copy = dict(value)
        roll = rng.random()
        if roll < 0.15:
            del copy[name]
        elif roll < 0.3:
            copy[rng.choice(STRING_POOL) or "extra"] = rng.choice(STRING_POOL)
        else:
            copy[name] = _mutate_value(copy[name], rng, budget - 1)
        return copy
    index = rng.randrange(len(value))
    items = list(value)
    roll = rng.random()
    if roll < 0.15:
        del items[index]
    elif roll < 0.3:
        items.insert(index, items[index])
    else:
        items[index] = _mutate_value(items[index], rng, budget - 1)
    return items


def _structural(text: str, rng: random.Random) -> str | None:
    """A structure-aware change: a member repeated, the value nested deeper, a value changed."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    roll = rng.random()
    if roll < 0.2 and isinstance(value, dict) and value:
        # A duplicate member, first or last copy valid (SPEC E4: json_duplicate_member).
        name = rng.choice(list(value))
        member = f"{json.dumps(name)}:{_json_text(_mutate_value(value[name], rng), rng)}"
        body = text.strip()
        if body.startswith("{") and body.endswith("}"):
            inner = body[1:-1]
            joined = f"{member},{inner}" if rng.random() < 0.5 else f"{inner},{member}"
            return "{" + joined + "}"
        return None
    if roll < 0.35:
        return _wrap_deep(text, rng.choice([1, 27, 28, 29, 30, 31, 32, 33]))
    return _json_text(_mutate_value(value, rng), rng)


def mutate_text(
    data: str | bytes, rng: random.Random, corpus: Sequence[str | bytes]
) -> str | bytes:
    """One to four random edits of a block text; bytes stay bytes, characters may become bytes."""
    result = data
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if isinstance(result, str) and roll < 0.25:
            result = _structural(result, rng) or result
            continue
        if isinstance(result, str) and roll < 0.32:
            with contextlib.suppress(UnicodeEncodeError):
                result = result.encode("utf-8")
        if isinstance(result, bytes):
            piece_b = rng.choice(BYTE_PIECES) if rng.random() < 0.5 else rng.choice(TEXT_PIECES)
            if isinstance(piece_b, str):
                piece_b = piece_b.encode("utf-8", "surrogatepass")
            other_b = rng.choice(corpus)
            if isinstance(other_b, str):
                other_b = other_b.encode("utf-8", "surrogatepass")
            result = _edit(result, rng, piece_b, other_b)
        else:
            other = rng.choice(corpus)
            if isinstance(other, bytes):
                other = other.decode("utf-8", "surrogateescape")
            result = _edit(result, rng, rng.choice(TEXT_PIECES), other)
    return result


def _edit(text: Any, rng: random.Random, piece: Any, other: Any) -> Any:
    """Insert, overwrite, delete, truncate, repeat a span, or splice in part of ``other``."""
    at = rng.randint(0, len(text))
    roll = rng.random()
    if roll < 0.3:
        return text[:at] + piece + text[at:]
    if roll < 0.5:
        return text[:at] + piece + text[at + len(piece) :]
    if roll < 0.65:
        return text[:at] + text[at + rng.randint(1, 8) :]
    if roll < 0.7:
        return text[:at]
    if roll < 0.85 and text:
        start = rng.randrange(len(text))
        span = text[start : start + rng.randint(1, 64)]
        return text[:at] + span + text[at:]
    if len(other):
        start = rng.randrange(len(other))
        return text[:at] + other[start : start + rng.randint(1, 128)] + text[at:]
    return text


# --- generated items, envelopes and histories ---------------------------------------------------


def _random_string(rng: random.Random, *, plain: bool = False) -> str:
    if plain or rng.random() < 0.6:
        return "".join(rng.choice("abcdefghij_-0123456789") for _ in range(rng.randint(1, 24)))
    return "".join(rng.choice(STRING_POOL) for _ in range(rng.randint(1, 3)))


def random_sdk_item(
    rng: random.Random, ciphertext: str | None = None, *, plain: bool = False
) -> dict[str, Any]:
    """A completed reasoning output item as the SDK dumps it (SPEC §15 shape)."""
    item: dict[str, Any] = {
        "id": "rs_" + _random_string(rng, plain=True),
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": _random_string(rng, plain=plain)}
            for _ in range(rng.choice([0, 1, 1, 2, 4]))
        ],
        "encrypted_content": ciphertext or _random_string(rng, plain=True),
        "status": "completed",
    }
    if rng.random() < 0.2:
        item["content"] = [
            {"type": "reasoning_text", "text": _random_string(rng, plain=plain)}
            for _ in range(rng.randint(0, 2))
        ]
    return item


def random_envelope_text(rng: random.Random) -> str | None:
    captured = canonicalize_completed_reasoning_output_item(
        random_sdk_item(rng), source=CAPTURE_SOURCE
    )
    return captured.envelope_text


def new_canary(rng: random.Random) -> str:
    """A ciphertext-like string no other input holds: ``gAAAAAB`` and 113 hexadecimal digits
    (120 characters: a Fernet token's shape, SPEC H8, so that the leak corpus's forms without a
    name are found too)."""
    return "gAAAAAB" + "".join(rng.choice("0123456789abcdef") for _ in range(113))


def canary_envelope(canary: str, rng: random.Random) -> str:
    text = canonicalize_completed_reasoning_output_item(
        random_sdk_item(rng, canary, plain=True), source=CAPTURE_SOURCE
    ).envelope_text
    assert text is not None
    return text


# The text forms of issue 12 a secret may take in a text block, each a function of the canary.
def canary_forms(canary: str, rng: random.Random) -> dict[str, str]:
    envelope = canary_envelope(canary, rng)
    plain = json.dumps({"encrypted_content": canary})
    return {
        "envelope": envelope,
        "object": plain,
        "array": f"[{plain}]",
        "duplicate-first": f'{{"encrypted_content":"{canary}","encrypted_content":"x"}}',
        "duplicate-last": f'{{"encrypted_content":"x","encrypted_content":"{canary}"}}',
        "envelope-duplicate": envelope[:-1] + ',"version":1}',
        "deep": _wrap_deep(plain, 33),
        "deep-envelope": _wrap_deep(envelope, 33),
        "lone-surrogate": f'{{"encrypted_content":"{canary}","note":"\\ud800"}}',
        "trailing-data": plain + " x",
        "trailing-envelope": envelope + "\n{}",
        "bom": "\ufeff" + plain,
        "bom-envelope": "\ufeff" + envelope,
        "json-in-string": json.dumps({"data": plain}),
        "envelope-in-string": json.dumps({"data": envelope}),
        "escaped-name": f'{{"\\u0065ncrypted_content":"{canary}"}}',
        "upper-case-name": json.dumps({"Encrypted_Content": canary}),
        "fragment": f'log: "encrypted_content": "{canary}" (truncated',
        "nested-item": json.dumps({"item": {"type": "reasoning", "encrypted_content": canary}}),
        # The leak corpus (issue 20) as a seed set: every text form of the ciphertext.
        **{
            f"corpus/{form.form_class}/{form.name}": form.text
            for form in corpus(ciphertext=canary)
            if form.kind == "ciphertext"
        },
    }


# Where in a history a canary text is put: a text block in a channel, or the message's content.
PLACEMENTS: Final = ("replay-channel", "tool-channel", "message-content", "display-channel")


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def random_history(rng: random.Random) -> tuple[dict[str, Any], str | None, str]:
    """A history of SPEC H1 with ordinary messages and, mostly, one canary placed somewhere.

    Returns the history, its canary (``None`` for none) and where and in which form it is.
    """
    messages: list[dict[str, Any]] = []
    for index in range(rng.randint(1, 5)):
        message: dict[str, Any] = {
            "role": "user" if index % 2 == 0 else "assistant",
            "content": [_text_block(_random_string(rng))],
        }
        if message["role"] == "assistant":
            envelope = random_envelope_text(rng)
            channels: dict[str, Any] = {
                REPLAY_CHANNEL: [_text_block(envelope)] if envelope else [],
                DISPLAY_CHANNEL: [_text_block(_random_string(rng))],
            }
            if rng.random() < 0.3:
                channels["fast-agent-tool-data"] = [_text_block(json.dumps({"n": 1, "f": 1.5}))]
            message["channels"] = channels
        if rng.random() < 0.2:  # SPEC P4: the provider a message records, or not quite
            message["provider"] = rng.choice(["openai", "xai", "", None, 5])
        if rng.random() < 0.1:
            deep: Any = {"api_key": "sk-hidden"}
            for _ in range(rng.choice([40, 200, 500])):
                deep = [deep]
            message["metadata"] = {"deep": deep}
        messages.append(message)
    history: dict[str, Any] = {"messages": messages}
    if rng.random() < 0.1:
        return history, None, "none"
    canary = new_canary(rng)
    roll = rng.random()
    if roll < 0.1:  # plain forms: a structured value, not a text
        target = rng.choice(messages)
        where = rng.choice(["message-member", "top-level-member"])
        value = {"type": "reasoning", "id": "rs_x", "encrypted_content": canary}
        (target if where == "message-member" else history)["extra"] = value
        return history, canary, f"{where}/structured"
    form, text = rng.choice(sorted(canary_forms(canary, rng).items()))
    where = rng.choice(PLACEMENTS)
    target = rng.choice(messages)
    if where == "message-content":
        target["content"].append(_text_block(text))
    else:
        channel = {
            "replay-channel": REPLAY_CHANNEL,
            "tool-channel": "fast-agent-tool-data",
            "display-channel": DISPLAY_CHANNEL,
        }[where]
        target.setdefault("channels", {}).setdefault(channel, []).append(_text_block(text))
    return history, canary, f"{where}/{form}"


def history_text(history: dict[str, Any], rng: random.Random) -> str:
    """A history file's text as a writer makes it: indented or compact, raw UTF-8 or escaped
    (always escaped when a string holds a lone surrogate, which UTF-8 cannot carry)."""
    indent = rng.choice([2, None])
    text = json.dumps(history, ensure_ascii=rng.random() < 0.2, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(history, indent=indent)
    return text


# --- findings -----------------------------------------------------------------------------------


@dataclass
class Finding:
    """One kind of failure: the first input that showed it, reduced, and how often it was seen."""

    check: str
    signature: str
    message: str
    reproducer: dict[str, Any]
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "signature": self.signature,
            "message": self.message,
            "count": self.count,
            "reproducer": self.reproducer,
        }


def _exception_signature(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(error).__name__} at {where}"


def read_reproducer(text: str | bytes) -> dict[str, Any]:
    return {"operation": "read", "input": js_read_input(text)}


# --- the checks ---------------------------------------------------------------------------------


@dataclass
class Targets:
    """What is checked: the reader paths and the history tools (tests plant broken ones)."""

    paths: dict[str, ReaderPath] = field(default_factory=reader_paths)
    export: Callable[..., Any] = export_history
    validate: Callable[..., Any] = validate_history
    scan: Callable[[str], Any] = scan_text


def read_failures(targets: Targets, text: str | bytes) -> dict[str, str]:
    """Each failure signature of ``text`` over the in-process paths, with its message."""
    failures: dict[str, str] = {}
    verdicts: dict[str, Verdict] = {}
    forms: list[str | bytes] = [text]
    if isinstance(text, str):
        with contextlib.suppress(UnicodeEncodeError):
            forms.append(text.encode("utf-8"))
    for form in forms:
        kind = "str" if isinstance(form, str) else "bytes"
        for name, path in targets.paths.items():
            try:
                verdicts[f"{name}({kind})"] = path(form)
            except Exception as error:
                failures[f"raises: {name}: {_exception_signature(error)}"] = repr(error)
        try:
            for signature, message in accelerator_differences(form).items():
                failures[f"accelerator: {signature} ({kind})"] = message
        except Exception as error:
            failures[f"raises: accelerator: {_exception_signature(error)}"] = repr(error)
    distinct = sorted(set(verdicts.values()))
    if len(distinct) > 1:
        groups = {v: sorted(n for n, got in verdicts.items() if got == v) for v in distinct}
        odd = min(groups.values(), key=len)
        failures[f"verdicts differ: {', '.join(odd)}"] = "; ".join(
            f"{names}: {v[0]} {v[1][:160]}" for v, names in groups.items()
        )
    return failures


def consensus(targets: Targets, text: str | bytes) -> Verdict | None:
    """The in-process verdict of ``text`` (the statement's), or ``None`` if it raises."""
    with contextlib.suppress(Exception):
        return statement_verdict(text)
    return None


def _strings_in(value: object) -> Iterator[str]:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def _without_marker(value: Any) -> dict[str, Any]:
    return {name: member for name, member in value.items() if name != "reasoning_replay_export"}


LEAK: Final = "export redacted leaks"
SCAN_MISS: Final = "scan misses the canary"


def scan_must_flag(form: str, text: str) -> bool:
    """Whether SPEC H8 promises that a scan of ``text`` flags a canary placed in ``form``.

    Every form but one holds it as an ``encrypted_content`` member or an envelope, found by
    step 3 or 4 wherever it is. A member name written with escapes (``\\u0065ncrypted_content``)
    inside a JSON string is found only when the line is one JSON value (step 1, then step 3 on
    the string): on the lines of an indented file, step 2 looks for fragments by their literal
    name.
    """
    return not (form.endswith("/escaped-name") and "\n" in text)


def history_failures(
    targets: Targets, data: str, canary: str | None, *, scan_flags_canary: bool = True
) -> dict[str, str]:
    """Each failure signature of one history file's text over validate, scan and export.

    ``canary`` is the ciphertext placed in the history, if any; ``scan_flags_canary`` whether a
    scan of the file must find it (:func:`scan_must_flag`).
    """
    failures: dict[str, str] = {}

    def attempt(check: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as error:
            failures[f"raises: {check}: {_exception_signature(error)}"] = repr(error)
            return None

    differences = attempt("history reading", lambda: history_reading_differences(data))
    failures.update(differences or {})
    reports = [attempt("validate", lambda: targets.validate(data).to_json())]
    with contextlib.suppress(UnicodeEncodeError):
        encoded = data.encode("utf-8")
        reports.append(attempt("validate(bytes)", lambda: targets.validate(encoded).to_json()))
    if len(reports) == 2 and None not in reports and reports[0] != reports[1]:
        failures["validate: characters and bytes differ"] = f"{reports[0]} != {reports[1]}"
    found_in_input = attempt("scan", lambda: targets.scan(data))
    if canary is not None and scan_flags_canary and canary in data and found_in_input == ():
        # Every form holds the canary as an encrypted_content member (SPEC H8 step 3) or an
        # envelope (step 4), so a scan of the file must flag it: a leak scanner that misses one
        # would also pass an export that keeps it.
        failures[SCAN_MISS] = "SPEC H8: the history holds the canary, scan finds nothing"
    value = parse_json_file(data)
    # SPEC H1: the C reading of a file answers only what the exhaustive reading answers.
    exhaustive = attempt("history file: exhaustive", partial(parse_json_file_exhaustively, data))
    if _file_reading(value) != _file_reading(exhaustive):
        failures["history file: the C reading differs from the exhaustive one"] = (
            f"C {_file_reading(value)!r:.200}, Python {_file_reading(exhaustive)!r:.200}"
        )
    if isinstance(value, HistoryFileProblem):
        return failures
    resumable = attempt("export resumable", lambda: targets.export(value, ExportMode.RESUMABLE))
    if isinstance(resumable, dict) and not (
        isinstance(value, dict) and _without_marker(resumable) == _without_marker(value)
    ):
        failures["export resumable: not the history as stored"] = "SPEC H6"
    leaks: list[str] = []
    for drop in (False, True):
        mode = " (--drop-display-reasoning)" if drop else ""

        def redacted(drop: bool = drop) -> Any:
            return targets.export(value, ExportMode.REDACTED, drop_display_reasoning=drop)

        exported = attempt("export redacted", redacted)
        if not isinstance(exported, dict):
            continue
        text: str | None = attempt("export redacted: dumps", partial(dumps_pretty, exported))
        if text is None:
            continue
        if canary is not None and (
            canary in text or any(canary in s for s in _strings_in(exported))
        ):
            leaks.append(f"the canary ciphertext is kept{mode}")
        found = attempt("export redacted: scan", partial(targets.scan, text))
        if found:
            leaks.append(f"scan flags {len(found)} in the output{mode}")
    if leaks:
        failures[LEAK] = "SPEC H6, H8: " + "; ".join(leaks)
    return failures


def js_export_failures(
    targets: Targets, history: dict[str, Any], canary: str | None, form: str, reply: dict[str, Any]
) -> dict[str, str]:
    """The JavaScript implementation's redacted export of ``history``: the reference's output
    (SPEC H6 leaves it no choice the export vectors do not pin), and no canary."""
    output = reply.get("output")
    if not isinstance(output, dict) or not isinstance(output.get("history"), dict):
        return {f"js export: no output ({next(iter(reply), '?')})": json.dumps(reply)[:300]}
    exported = output["history"]
    failures: dict[str, str] = {}
    if canary is not None and canary in json.dumps(exported):
        failures[f"js export leaks [{form.rpartition('/')[2]}]"] = "SPEC H6: the canary is kept"
    with contextlib.suppress(Exception):  # the reference raising is a finding of its own
        expected = targets.export(history, ExportMode.REDACTED)
        if json.loads(json.dumps(expected)) != exported:
            failures["js export differs from the reference"] = "SPEC H6 (redacted mode)"
    return failures


def capture_failures(item: object, reply: dict[str, Any] | None) -> dict[str, str]:
    """Each failure of one capture: the reference raising, a text that does not read back as
    the captured item, or the JavaScript implementation answering otherwise (when ``reply``)."""
    failures: dict[str, str] = {}
    try:
        result = canonicalize_completed_reasoning_output_item(item, source=CAPTURE_SOURCE)
    except Exception as error:
        return {f"raises: capture: {_exception_signature(error)}": repr(error)}
    if result.envelope_text is not None:
        assert result.item is not None
        for name, path in reader_paths().items():
            got = path(result.envelope_text)
            if got != item_verdict(result.item):
                failures[f"capture: written text reads otherwise by {name}"] = str(got)[:200]
        expected: dict[str, Any] = {"output": {"envelope_text": result.envelope_text}}
    else:
        assert result.code is not None
        expected = {"reject": {"code": result.code.value}}
    if reply is not None and reply != expected:
        failures["capture: JavaScript differs"] = f"reference {expected}, JavaScript {reply}"[:400]
    return failures


# --- reduction ----------------------------------------------------------------------------------


def reduce_sequence(data: Any, still_fails: Callable[[Any], bool], attempts: int) -> Any:
    """Remove chunks (halves, then quarters, down to single elements) while it still fails."""
    chunk = max(1, len(data) // 2)
    while chunk >= 1 and attempts > 0:
        at = 0
        while at < len(data) and attempts > 0:
            candidate = data[:at] + data[at + chunk :]
            attempts -= 1
            if candidate != data and still_fails(candidate):
                data = candidate
            else:
                at += chunk
        chunk //= 2
    return data


def reduce_value(value: Any, still_fails: Callable[[Any], bool], attempts: int) -> Any:
    """Remove members and elements, depth first, while the value still fails."""
    budget = [attempts]

    def shrink(node: Any, rebuild: Callable[[Any], Any]) -> Any:
        smaller: Any
        if isinstance(node, dict):
            for name in list(node):
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                smaller = {k: v for k, v in node.items() if k != name}
                if still_fails(rebuild(smaller)):
                    node = smaller
            for name in list(node):

                def in_member(child: Any, name: str = name, node: Any = node) -> Any:
                    return rebuild({**node, name: child})

                node = {**node, name: shrink(node[name], in_member)}
        elif isinstance(node, list):
            index = 0
            while index < len(node) and budget[0] > 0:
                budget[0] -= 1
                smaller = node[:index] + node[index + 1 :]
                if still_fails(rebuild(smaller)):
                    node = smaller
                else:
                    index += 1
            for index in range(len(node)):

                def in_element(child: Any, index: int = index, node: Any = node) -> Any:
                    return rebuild([*node[:index], child, *node[index + 1 :]])

                node = [*node[:index], shrink(node[index], in_element), *node[index + 1 :]]
        return node

    return shrink(value, lambda whole: whole)


# --- the run ------------------------------------------------------------------------------------


@dataclass
class Stats:
    executions: dict[str, int] = field(
        default_factory=lambda: {"read": 0, "capture": 0, "history": 0}
    )
    comparisons: int = 0
    verdicts_seen: set[Verdict] = field(default_factory=set)

    def total(self) -> int:
        return sum(self.executions.values())


@dataclass(frozen=True)
class Config:
    seed: int = DEFAULT_SEED
    seconds: float = 60.0
    iterations: int | None = None
    corpus: Path | None = None
    js: str | None = JS_ADAPTER
    reduce: bool = True  # reduce each finding's reproducer (tests that only count turn it off)


@functools.cache
def vector_cases() -> tuple[Case, ...]:
    """The suite's cases, read once per process."""
    return load_vector_dirs([VECTORS]).cases


def read_seeds(corpus_dir: Path | None) -> list[str | bytes]:
    """The seed texts: the ``read`` vectors' texts, the ``capture`` vectors' envelopes, and the
    files of the corpus directory."""
    seeds: list[str | bytes] = []
    for case in vector_cases():
        if case.operation == "read":
            if "text_base64" in case.input:
                seeds.append(base64.b64decode(case.input["text_base64"]))
            elif isinstance(case.input.get("text"), str):
                seeds.append(case.input["text"])
        elif case.operation == "capture" and case.expect.output is not None:
            seeds.append(str(case.expect.output["envelope_text"]))
    if corpus_dir is not None and corpus_dir.is_dir():
        seeds.extend(path.read_bytes() for path in sorted(corpus_dir.iterdir()) if path.is_file())
    return seeds


def capture_seeds() -> list[object]:
    return [case.input["output_item"] for case in vector_cases() if case.operation == "capture"]


class Fuzzer:
    """The run: generates inputs, checks them, collects and reduces findings."""

    def __init__(self, config: Config, targets: Targets | None = None) -> None:
        self.config = config
        self.targets = targets or Targets()
        self.rng = random.Random(config.seed)
        self.stats = Stats()
        self.findings: dict[str, Finding] = {}
        self.read_corpus = read_seeds(config.corpus)
        self.capture_corpus = capture_seeds()
        self.new_corpus: list[bytes] = []
        self.history_forms: dict[str, int] = {}
        self.leaks: dict[str, int] = {}
        self.js: JsAdapter | None = JsAdapter(config.js) if config.js else None

    # -- recording

    def _record(self, check: str, failures: dict[str, str], reproducer: dict[str, Any]) -> None:
        for signature, message in failures.items():
            key = f"{check}: {signature}"
            if key in self.findings:
                self.findings[key].count += 1
            else:
                self.findings[key] = Finding(check, signature, message, reproducer)

    # -- one batch of each kind

    def _read_batch(self, count: int) -> None:
        texts: list[str | bytes] = []
        for _ in range(count):
            roll = self.rng.random()
            if roll < 0.1:
                text: str | bytes = random_envelope_text(self.rng) or "{}"
            else:
                text = self.rng.choice(self.read_corpus)
            texts.append(mutate_text(text, self.rng, self.read_corpus) if roll < 0.95 else text)
        expected: list[Verdict | None] = []
        for text in texts:
            failures = read_failures(self.targets, text)
            self.stats.executions["read"] += 1
            self.stats.comparisons += len(self.targets.paths) * (2 if isinstance(text, str) else 1)
            self._record("read", failures, read_reproducer(text))
            expected.append(
                consensus(self.targets, as_js_sees(text) if isinstance(text, str) else text)
            )
            verdict = consensus(self.targets, text)
            if (
                verdict is not None
                and verdict[0] == "reject"
                and verdict not in self.stats.verdicts_seen
            ):
                self.stats.verdicts_seen.add(verdict)
                self.read_corpus.append(text)  # a new code: keep it to mutate further
                data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
                self.new_corpus.append(data)
        if self.js is None:
            return
        replies = self.js.run([("read", js_read_input(text)) for text in texts])
        for text, verdict, reply in zip(texts, expected, replies, strict=True):
            self.stats.comparisons += 1
            got = js_verdict(reply)
            if verdict is not None and got != verdict:
                failure = {f"verdicts differ: js ({got[0]})": f"js {got}, reference {verdict}"}
                self._record("read", failure, read_reproducer(text))

    def _capture_batch(self, count: int) -> None:
        items: list[object] = []
        for _ in range(count):
            base = self.rng.choice(self.capture_corpus)
            if self.rng.random() < 0.2:
                base = random_sdk_item(self.rng)
            item = _mutate_value(base, self.rng) if self.rng.random() < 0.9 else base
            # One input for both: a Python string's surrogate pair is one character in JavaScript.
            items.append(json.loads(as_js_sees(json.dumps(item, ensure_ascii=False))))
        replies: list[dict[str, Any] | None] = [None] * len(items)
        if self.js is not None:
            requests = [("capture", {"output_item": it, "source": CAPTURE_SOURCE}) for it in items]
            replies = list(self.js.run(requests))
            self.stats.comparisons += len(items)
        for item, reply in zip(items, replies, strict=True):
            self.stats.executions["capture"] += 1
            reproducer = {
                "operation": "capture",
                "input": {"output_item": item, "source": CAPTURE_SOURCE},
            }
            self._record("capture", capture_failures(item, reply), reproducer)

    def _history_batch(self, count: int) -> None:
        exports: list[tuple[dict[str, Any], str | None, str]] = []
        for _ in range(count):
            generated, canary, form = random_history(self.rng)
            # One history for both implementations (see as_js_sees).
            history = json.loads(as_js_sees(json.dumps(generated, ensure_ascii=False)))
            self.history_forms[form] = self.history_forms.get(form, 0) + 1
            text = history_text(history, self.rng)
            mutated = self.rng.random() < 0.3
            if mutated:
                changed = mutate_text(text, self.rng, self.read_corpus)
                if isinstance(changed, bytes):
                    changed = changed.decode("utf-8", "surrogateescape")
                text = changed
            else:
                exports.append((history, canary, form))
            self.stats.executions["history"] += 1
            failures = history_failures(
                self.targets,
                text,
                None if mutated else canary,
                scan_flags_canary=scan_must_flag(form, text),
            )
            where = "mutated" if mutated else form
            if LEAK in failures:  # one finding per text form; the leaks table has the places
                self.leaks[where] = self.leaks.get(where, 0) + 1
            for signature in (LEAK, SCAN_MISS):
                if signature in failures:
                    failures[f"{signature} [{where.split('/')[-1]}]"] = failures.pop(signature)
            stored = {"history_text": text, "canary": None if mutated else canary, "form": form}
            self._record("history", failures, stored)
        if self.js is not None and exports:
            requests = [("export", {"history": h, "mode": "redacted"}) for h, _, _ in exports]
            replies = self.js.run(requests)
            for (history, canary, form), reply in zip(exports, replies, strict=True):
                self.stats.comparisons += 1
                reproducer: dict[str, Any] = {
                    "operation": "export",
                    "input": {"history": history, "mode": "redacted"},
                    "canary": canary,
                }
                self._record(
                    "export",
                    js_export_failures(self.targets, history, canary, form, reply),
                    reproducer,
                )

    # -- reduction

    def _reduce(self, finding: Finding) -> None:
        def fails_read(text: str | bytes) -> bool:
            if finding.signature.startswith("verdicts differ: js"):
                assert self.js is not None
                reply = self.js.run([("read", js_read_input(text))])[0]
                seen = as_js_sees(text) if isinstance(text, str) else text
                verdict = consensus(self.targets, seen)
                return verdict is not None and js_verdict(reply) != verdict
            return finding.signature in read_failures(self.targets, text)

        reproducer = finding.reproducer
        if finding.check == "export" and self.js is not None:
            js = self.js
            canary = reproducer["canary"]

            def fails_export(history: Any) -> bool:
                request = {"history": history, "mode": "redacted"}
                reply = js.run([("export", request)])[0]
                form = finding.signature.partition("[")[2].rstrip("]")
                found = js_export_failures(self.targets, history, canary, form, reply)
                return finding.signature in found

            history = reproducer["input"]["history"]
            with contextlib.suppress(RecursionError):
                smaller = reduce_value(history, fails_export, HISTORY_REDUCTION_ATTEMPTS)
                reproducer["input"]["history"] = smaller
        if finding.check == "read":
            data = reproducer["input"]
            text: str | bytes = (
                base64.b64decode(data["text_base64"]) if "text_base64" in data else data["text"]
            )
            reduced = reduce_sequence(text, fails_read, READ_REDUCTION_ATTEMPTS)
            finding.reproducer = read_reproducer(reduced)
        elif finding.check == "history":
            canary = reproducer["canary"]

            base = finding.signature.split(" [")[0]

            indent = 2 if "\n" in reproducer["history_text"] else None  # scan reads lines

            def fails_history(value: Any) -> bool:
                text = json.dumps(value, ensure_ascii=False, indent=indent)
                flags = scan_must_flag(reproducer["form"], text)
                return base in history_failures(self.targets, text, canary, scan_flags_canary=flags)

            value = parse_json_file(reproducer["history_text"])
            if isinstance(value, dict):
                with contextlib.suppress(RecursionError):  # a deep reproducer stays as it is
                    smaller = reduce_value(value, fails_history, HISTORY_REDUCTION_ATTEMPTS)
                    text = json.dumps(smaller, ensure_ascii=False, indent=indent)
                    if fails_history(smaller) and len(text) < len(reproducer["history_text"]):
                        finding.reproducer = {**reproducer, "history_text": text}

    # -- the loop

    def run(self) -> None:
        deadline = time.monotonic() + self.config.seconds
        limit = self.config.iterations
        batch = 0
        try:
            while time.monotonic() < deadline and (limit is None or self.stats.total() < limit):
                size = JS_BATCH if limit is None else max(1, min(JS_BATCH, limit // 8))
                phase = batch % 4
                if phase in (0, 2):
                    self._read_batch(size)
                elif phase == 1:
                    self._capture_batch(size // 2)
                else:
                    self._history_batch(max(1, size // 16))
                batch += 1
            # Reduction gets at most half the budget again (10 s at least); later findings then
            # keep their first reproducer.
            reduce_until = time.monotonic() + max(10.0, self.config.seconds / 2)
            for finding in self.findings.values() if self.config.reduce else ():
                if time.monotonic() < reduce_until:
                    self._reduce(finding)
        finally:
            if self.js is not None:
                self.js.close()
        if self.config.corpus is not None and self.new_corpus:
            self.config.corpus.mkdir(parents=True, exist_ok=True)
            for data in self.new_corpus:
                name = hashlib.sha256(data).hexdigest()[:16]
                replace_file(self.config.corpus / name, data)

    def report(self, elapsed: float) -> dict[str, Any]:
        paths = [f"{name}({form})" for name in self.targets.paths for form in ("str", "bytes")]
        paths += ["_canonical vs read_canonical", "_strict vs parse_strict_statement"]
        if self.js is not None:
            paths += ["js(str)", "js(bytes)", "capture: reference vs js"]
        paths += ["history file: C vs exhaustive", "validate(str)", "validate(bytes)", "scan"]
        paths += ["export resumable", "export redacted"]
        return {
            "seed": self.config.seed,
            "seconds": round(elapsed, 1),
            "executions": self.stats.total(),
            "executions_by_kind": self.stats.executions,
            "comparisons": self.stats.comparisons,
            "paths_compared": paths,
            "js_restarts": 0 if self.js is None else self.js.restarts,
            "history_forms": dict(sorted(self.history_forms.items())),
            "export_leaks_by_place_and_form": dict(sorted(self.leaks.items())),
            "findings": [finding.to_json() for finding in self.findings.values()],
        }


def _summary(report: dict[str, Any], out: IO[str]) -> None:
    print(
        f"fuzz: seed {report['seed']}, {report['executions']} executions "
        f"({', '.join(f'{k} {v}' for k, v in report['executions_by_kind'].items())}) "
        f"in {report['seconds']} s, {len(report['paths_compared'])} paths, "
        f"{report['comparisons']} comparisons, {len(report['findings'])} findings",
        file=out,
    )
    for finding in report["findings"]:
        print(
            f"\nFINDING ({finding['count']}x) {finding['check']}: {finding['signature']}", file=out
        )
        print(f"  {finding['message'][:500]}", file=out)
        reproducer = json.dumps(finding["reproducer"], ensure_ascii=True)
        print(f"  reproducer: {reproducer[:4000]}", file=out)


# --- atheris: coverage-guided, in-process ----------------------------------------------------


def _instrument_reference(atheris: Any) -> None:
    """Coverage for the reference's own functions only (``instrument_all`` would take minutes)."""
    for name, module in list(sys.modules.items()):
        if name != "reasoning_replay" and not name.startswith("reasoning_replay."):
            continue
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if isinstance(value, type) else []
            for candidate in [value, *members]:
                function = getattr(candidate, "__func__", getattr(candidate, "fget", candidate))
                if isinstance(function, types.FunctionType) and function.__module__ == name:
                    atheris.instrument_func(function)


def run_atheris(config: Config, report_path: Path | None) -> int:
    """libFuzzer's coverage-guided mutation (atheris) over the in-process checks; never returns.

    Each input is a read text as bytes, and as characters (bad bytes become lone surrogates);
    one that starts with ``{`` is also a history file's text for validate, scan and export. The
    JavaScript adapter is not used (libFuzzer gives one input at a time; batching is what makes it
    fast). libFuzzer stops at the first finding (exit status 1, a ``crash-*`` file in the corpus
    directory's parent); ``--report`` is rewritten every 1,000 executions and at a finding.
    """
    try:
        atheris: Any = importlib.import_module("atheris")
    except ImportError:
        print("fuzz: --engine atheris needs atheris (pip install atheris)", file=sys.stderr)
        return 2
    targets = Targets()
    corpus = config.corpus or Path(tempfile.mkdtemp(prefix="fuzz-corpus-"))
    corpus.mkdir(parents=True, exist_ok=True)
    for text in read_seeds(None):
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        replace_file(corpus / hashlib.sha256(data).hexdigest()[:16], data)
    executions = [0]
    started = time.monotonic()

    def write_report(findings: list[dict[str, Any]]) -> None:
        if report_path is not None:
            report = {
                "engine": "atheris",
                "seed": config.seed,
                "seconds": round(time.monotonic() - started, 1),
                "executions": executions[0],
                "paths_compared": [f"{name}(str|bytes)" for name in targets.paths],
                "findings": findings,
            }
            replace_file(report_path, _report_bytes(report))

    def one_input(data: bytes) -> None:
        executions[0] += 1
        chars = data.decode("utf-8", "surrogateescape")
        failures = {**read_failures(targets, data), **read_failures(targets, chars)}
        reproducer = read_reproducer(data)
        if not failures and data.startswith(b"{"):
            failures = history_failures(targets, chars, None)
            reproducer = {"history_text": chars, "canary": None, "form": "atheris"}
        if failures:
            findings = [
                Finding("atheris", signature, message, reproducer).to_json()
                for signature, message in failures.items()
            ]
            write_report(findings)
            raise AssertionError(json.dumps(findings, ensure_ascii=True)[:4000])
        if executions[0] % 1000 == 0:
            write_report([])

    _instrument_reference(atheris)
    arguments = [sys.argv[0], f"-seed={config.seed}", "-error_exitcode=1"]
    arguments += [f"-max_total_time={max(1, int(config.seconds))}", "-print_final_stats=1"]
    arguments += [f"-artifact_prefix={corpus.parent}/"]
    if config.iterations is not None:
        arguments.append(f"-runs={config.iterations}")
    atheris.Setup([*arguments, str(corpus)], one_input)
    atheris.Fuzz()
    return 0  # not reached: libFuzzer exits the process


def _report_bytes(report: dict[str, Any]) -> bytes:
    """The JSON report as written: whole or not at all, in place of the last one (SPEC H5)."""
    return (json.dumps(report, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    parser.add_argument("--iterations", type=int, help="stop after about this many executions")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--corpus", type=Path, help="extra seed texts; new finds are kept there")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument("--js", default=JS_ADAPTER, help="the JavaScript adapter's command line")
    parser.add_argument("--no-js", action="store_true", help="in-process paths only")
    parser.add_argument(
        "--engine",
        choices=["own", "atheris"],
        default="own",
        help="own: deterministic, batched, every check (default); atheris: coverage-guided",
    )
    args = parser.parse_args(argv)
    config = Config(
        seed=args.seed,
        seconds=args.seconds,
        iterations=args.iterations,
        corpus=args.corpus,
        js=None if args.no_js else args.js,
    )
    if args.engine == "atheris":
        return run_atheris(config, args.report)
    started = time.monotonic()
    try:
        fuzzer = Fuzzer(config)
    except OSError as error:  # no node, or no such adapter
        print(f"fuzz: cannot start {config.js}: {error} (--no-js runs without it)", file=sys.stderr)
        return 2
    fuzzer.run()
    report = fuzzer.report(time.monotonic() - started)
    if args.report is not None:
        replace_file(args.report, _report_bytes(report))
    _summary(report, sys.stdout)
    return 1 if report["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
