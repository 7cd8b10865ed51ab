"""How much the conformance suite decides: named semantic mutants of the reference, each killed
or not by the MUST vectors.

    python tools/suite_adequacy.py [--jobs N] [-k NAME ...] [--list]

``--jobs N`` asks for up to N worker processes; like ``validate --jobs``, a run never starts
more than there are usable CPUs or mutants to run (one worker: none, in this process).

Each mutant is another reading of one SPEC rule (a flipped comparison, a missing check, another
order of checks, another limit, a rule applied to the wrong messages, ...), applied in-process by
replacing a function or constant of the reference, or by wrapping one operation of
``reasoning_replay.operations.dispatch``. The suite then runs against the mutated reference in
the diagnostics profile (SPEC.md#profiles); a mutant is *killed* when a MUST vector fails. Every
reading goes through the reader's statement (``record.read.read_block``, pure Python): the
accelerated fast paths change no verdict, and bypassing them makes each mutant reach every text.

The tool prints, per SPEC rule, the mutants its MUST vectors kill, each with how many vectors
kill it in the diagnostics profile and in the verdict profile (``name (12/8)``; a mutant only
the diagnostics profile kills is another code for the same verdict), then the survivors. Exit
status: 0 every mutant killed or listed in ``EQUIVALENT`` with the SPEC sentence that makes
both readings conform; 1 a survivor, an ``EQUIVALENT`` mutant that a vector kills (a stale
entry), or a mutant that makes the reference raise (a bug of the mutant); 2 the unmutated
reference fails the suite in this harness (the measurement would mean nothing).
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
from reasoning_replay import operations
from reasoning_replay.diagnostics import Code
from reasoning_replay.history import (
    export,
    history_files,
    jsonspans,
    scan,
    text_forms,
    text_redaction,
    validation,
)
from reasoning_replay.history.validate_jobs import usable_cpus, worker_count
from reasoning_replay.operations import OperationResult
from reasoning_replay.ordering import cache_state, overrides, planner
from reasoning_replay.ordering.cache_state import ALLOWED_EFFORTS
from reasoning_replay.record import (
    capture,
    dedupe,
    display,
    envelope,
    history,
    item_types,
    jsontext,
    provider_input,
    providers,
    read,
    reader,
    redaction,
    telemetry,
    writer,
)
from reasoning_replay.record._fast import canonical as canonical_path
from reasoning_replay.record._fast import general
from reasoning_replay.record.envelope import ReasoningReplayItem
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.outcomes import Outcome as CaseOutcome
from reasoning_replay.suite.profiles import Profile
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import Case, Expect, Suite, load_suite, make_suite

REPO: Final = Path(__file__).resolve().parents[1]
VECTORS: Final = REPO / "conformance" / "vectors"
RUNNER_MODULES: Final = ("reasoning_replay.suite", "reasoning_replay.cli")

Handler = Callable[[Mapping[str, Any]], OperationResult]
Wrapper = Callable[[Mapping[str, Any], Handler], OperationResult]


# ---------------------------------------------------------------------------------------------
# Patching the reference


@dataclass
class Patcher:
    """Replacements of the reference's attributes, undone in reverse order; and per-operation
    wrappers of the dispatch function."""

    wrappers: dict[str, Wrapper] = field(default_factory=dict)
    _undo: list[tuple[object, str, object]] = field(default_factory=list)

    def set(self, owner: object, name: str, value: object) -> None:
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def everywhere(self, original: object, replacement: object) -> None:
        """Replace ``original`` under every name a module of the reference binds it to (a
        ``from x import f`` binds it again in the importing module)."""
        hits = 0
        for name, module in list(sys.modules.items()):
            # The runner and the command line are not under test: only the reference is mutated.
            if not name.startswith("reasoning_replay") or name.startswith(RUNNER_MODULES):
                continue
            for attr, value in list(vars(module).items()):
                if value is original:
                    self.set(module, attr, replacement)
                    hits += 1
        if hits == 0:
            raise LookupError(f"{original!r} is bound nowhere in the reference")

    def wrap(self, operation: str, wrapper: Wrapper) -> None:
        self.wrappers[operation] = wrapper

    def undo(self) -> None:
        while self._undo:
            owner, name, value = self._undo.pop()
            setattr(owner, name, value)
        self.wrappers.clear()

    def dispatch(self, operation: str, data: Mapping[str, Any]) -> OperationResult:
        def handler(d: Mapping[str, Any]) -> OperationResult:
            return operations.dispatch(operation, d)

        wrapper = self.wrappers.get(operation)
        return handler(data) if wrapper is None else wrapper(data, handler)


def _statement_reader(text: str | bytes) -> reader.ReadResult:
    """The reader's statement (SPEC E6 in order), for every text."""
    return read.read_block(text)


def statement_paths(p: Patcher) -> None:
    """No accelerator, no fast path: each reading is the statement of SPEC E6 (and a history
    file's, SPEC H1, the exhaustive one)."""
    p.set(canonical_path, "_accelerator", None)
    p.set(general, "_accelerator", None)
    p.set(history_files, "_accelerator", None)
    p.set(history_files, "_strict_parse", None)
    p.everywhere(reader.parse_reasoning_replay_envelope, _statement_reader)


Apply = Callable[[Patcher], None]


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str
    rule: str  # the SPEC anchor whose other reading it is
    reading: str
    apply: Apply
    raises: bool = False  # the reading is to raise: an error reply is its verdict


CATALOGUE: list[Mutant] = []


def mutant(rule: str, reading: str, *, raises: bool = False) -> Callable[[Apply], Apply]:
    def register(apply: Apply) -> Apply:
        name = apply.__name__.removeprefix("m_").replace("_", "-")
        CATALOGUE.append(Mutant(name, rule, reading, apply, raises))
        return apply

    return register


@dataclass(frozen=True, slots=True)
class Allowed:
    """Why a mutant is a conforming reading: the SPEC rule and its sentence, quoted exactly
    (a test checks that SPEC.md still says it), and how the mutant falls under it."""

    rule: str
    sentence: str
    because: str

    def describe(self) -> str:
        return f"SPEC {self.rule}: {self.sentence!r} ({self.because})"


# Mutants that both readings of SPEC allow. An entry whose mutant a vector kills is stale (the
# rule was tightened): the tool then fails until the entry is removed. None today: E4.1's limits
# became fixed MUST limits, which killed the depth and size readings this once allowed.
EQUIVALENT: Final[dict[str, Allowed]] = {}


def _result(output: dict[str, Any] | None = None, code: Code | None = None) -> OperationResult:
    return OperationResult(output=output, code=None if code is None else code.value)


def _envelope_checker(
    transform: Callable[[object], object | Code],
) -> Callable[[Patcher], None]:
    """A mutant that rewrites (or refuses) an envelope value before the reference checks it."""

    def apply(p: Patcher) -> None:
        original = envelope.check_envelope_value

        def mutated(value: object) -> ReasoningReplayItem | Code:
            changed = transform(value)
            return changed if isinstance(changed, Code) else original(changed)

        p.everywhere(original, mutated)

    return apply


def _item_checker(transform: Callable[[object], object | Code]) -> Callable[[Patcher], None]:
    def apply(p: Patcher) -> None:
        original = envelope.check_item_value

        def mutated(item: object) -> ReasoningReplayItem | Code:
            changed = transform(item)
            return changed if isinstance(changed, Code) else original(changed)

        p.everywhere(original, mutated)

    return apply


def _record_of(message: history.HistoryMessage) -> cache_state.CacheStateRecord | Code | None:
    """The record of a message's cache-state channel, as the reference reads it."""
    channel = message.channels.get(cache_state.CACHE_STATE_CHANNEL, ())
    return cache_state.read_cache_state(channel)


# ---------------------------------------------------------------------------------------------
# The envelope (SPEC §3)


def _with(value: object, **members: object) -> object:
    return {**value, **members} if isinstance(value, dict) else value


@mutant("E1", "version true is read as the number 1")
def m_version_true_accepted(p: Patcher) -> None:
    _envelope_checker(
        lambda v: _with(v, version=1) if isinstance(v, dict) and v.get("version") is True else v
    )(p)


@mutant("E1", "version is compared as written: 1.0 is not version 1")
def m_version_float_unsupported(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            Code.ENVELOPE_VERSION_UNSUPPORTED
            if isinstance(v, dict)
            and v.get("schema") == envelope.SCHEMA_NAME
            and isinstance(v.get("version"), float)
            else v
        )
    )(p)


@mutant("E1", "a version string holding a number is that number")
def m_version_string_accepted(p: Patcher) -> None:
    _envelope_checker(
        lambda v: _with(v, version=1) if isinstance(v, dict) and v.get("version") == "1" else v
    )(p)


@mutant("E1", "the schema name is compared case-insensitively")
def m_schema_case_insensitive(p: Patcher) -> None:
    def transform(v: object) -> object:
        schema = v.get("schema") if isinstance(v, dict) else None
        if isinstance(schema, str) and schema.lower() == envelope.SCHEMA_NAME:
            return _with(v, schema=envelope.SCHEMA_NAME)
        return v

    _envelope_checker(transform)(p)


@mutant("E1", "unknown envelope members are ignored")
def m_envelope_extra_member_ignored(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            {k: x for k, x in v.items() if k in envelope.ENVELOPE_MEMBERS}
            if isinstance(v, dict) and v.get("schema") == envelope.SCHEMA_NAME
            else v
        )
    )(p)


@mutant("E6", "an unknown envelope member is refused before the version is checked")
def m_unknown_member_before_version(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            Code.ENVELOPE_MEMBER_UNKNOWN
            if isinstance(v, dict)
            and v.get("schema") == envelope.SCHEMA_NAME
            and not v.keys() <= envelope.ENVELOPE_MEMBERS
            else v
        )
    )(p)


@mutant("E6", "a missing version is an invalid version")
def m_missing_version_invalid(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            Code.ENVELOPE_VERSION_INVALID
            if isinstance(v, dict)
            and v.get("schema") == envelope.SCHEMA_NAME
            and "version" not in v
            else v
        )
    )(p)


@mutant("E6", "a JSON value that is not an object is malformed JSON")
def m_not_object_malformed(p: Patcher) -> None:
    _envelope_checker(lambda v: v if isinstance(v, dict) else Code.JSON_MALFORMED)(p)


@mutant("H2", "a redacted record is an unknown schema")
def m_redacted_unknown_schema(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            Code.ENVELOPE_SCHEMA_UNKNOWN
            if isinstance(v, dict) and v.get("schema") == envelope.REDACTED_SCHEMA_NAME
            else v
        )
    )(p)


def _accept_empty(member: str) -> Callable[[Patcher], None]:
    """The item check with an empty string accepted for ``member``."""

    def apply(p: Patcher) -> None:
        original = envelope.check_item_value

        def mutated(item: object) -> ReasoningReplayItem | Code:
            if isinstance(item, dict) and item.get(member) == "":
                checked = original({**item, member: "x"})
                if isinstance(checked, ReasoningReplayItem):
                    return msgspec.structs.replace(checked, **{member: ""})
                return checked
            return original(item)

        p.everywhere(original, mutated)

    return apply


@mutant("E2", "an empty id is an id")
def m_empty_id_accepted(p: Patcher) -> None:
    _accept_empty("id")(p)


@mutant("E2", "an empty encrypted_content is a ciphertext")
def m_empty_ciphertext_accepted(p: Patcher) -> None:
    _accept_empty("encrypted_content")(p)


@mutant("E2", "an empty content array means no content")
def m_empty_content_dropped(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            {k: v for k, v in i.items() if k != "content"}
            if isinstance(i, dict) and i.get("content") == []
            else i
        )
    )(p)


@mutant("E2", "content null means no content")
def m_null_content_dropped(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            {k: v for k, v in i.items() if k != "content"}
            if isinstance(i, dict) and "content" in i and i["content"] is None
            else i
        )
    )(p)


@mutant("E2", "the item type is compared case-insensitively")
def m_item_type_case_insensitive(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            _with(i, type="reasoning")
            if isinstance(i, dict)
            and isinstance(i.get("type"), str)
            and i["type"].lower() == "reasoning"
            else i
        )
    )(p)


def _strip_part_members(parts: object) -> object:
    if not isinstance(parts, list):
        return parts
    return [
        {k: v for k, v in part.items() if k in envelope.PART_MEMBERS}
        if isinstance(part, dict)
        else part
        for part in parts
    ]


@mutant("E2", "extra members of a summary part are ignored")
def m_part_extra_member_ignored(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            _with(i, summary=_strip_part_members(i.get("summary")))
            if isinstance(i, dict) and "summary" in i
            else i
        )
    )(p)


@mutant("E2", "a summary part of any type is a summary part")
def m_part_type_unchecked(p: Patcher) -> None:
    def retype(parts: object) -> object:
        if not isinstance(parts, list):
            return parts
        return [
            _with(part, type="summary_text") if isinstance(part, dict) else part for part in parts
        ]

    _item_checker(
        lambda i: (
            _with(i, summary=retype(i.get("summary")))
            if isinstance(i, dict) and "summary" in i
            else i
        )
    )(p)


@mutant("E6", "the summary is checked before the id")
def m_summary_before_id(p: Patcher) -> None:
    def transform(i: object) -> object:
        if (
            isinstance(i, dict)
            and i.keys() <= envelope.ITEM_MEMBERS
            and i.get("type") == "reasoning"
            and envelope.part_texts(i.get("summary"), envelope.SUMMARY_PART_TYPE) is None
        ):
            return Code.ITEM_SUMMARY_INVALID
        return i

    _item_checker(transform)(p)


@mutant("E6", "the ciphertext is checked before the summary")
def m_ciphertext_before_summary(p: Patcher) -> None:
    def transform(i: object) -> object:
        if (
            isinstance(i, dict)
            and i.keys() <= envelope.ITEM_MEMBERS
            and i.get("type") == "reasoning"
        ):
            item_id = i.get("id")
            ciphertext = i.get("encrypted_content")
            if (
                isinstance(item_id, str)
                and item_id
                and not (isinstance(ciphertext, str) and ciphertext)
            ):
                return Code.ITEM_CIPHERTEXT_INVALID
        return i

    _item_checker(transform)(p)


@mutant("E3", "unknown item members are dropped, the rest is replayed")
def m_unknown_item_member_dropped(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            {k: v for k, v in i.items() if k in envelope.ITEM_MEMBERS} if isinstance(i, dict) else i
        )
    )(p)


@mutant("E3", "the item type is checked before unknown members")
def m_type_before_unknown_member(p: Patcher) -> None:
    _item_checker(
        lambda i: (
            Code.ITEM_TYPE_INVALID if isinstance(i, dict) and i.get("type") != "reasoning" else i
        )
    )(p)


# ---------------------------------------------------------------------------------------------
# JSON text (SPEC E4, E4.1, E4.2, S2)


@mutant("E4", "duplicate members are allowed; the last one wins")
def m_duplicates_last_wins(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        parsed = original(text)
        if isinstance(parsed, jsontext.TextRefused) and parsed.code is Code.JSON_DUPLICATE_MEMBER:
            return json.loads(text)
        return parsed

    p.everywhere(original, mutated)


@mutant("E4", "duplicate members are allowed; the first one wins")
def m_duplicates_first_wins(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def first(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            out.setdefault(k, v)
        return out

    def mutated(text: str | bytes) -> object:
        parsed = original(text)
        if isinstance(parsed, jsontext.TextRefused) and parsed.code is Code.JSON_DUPLICATE_MEMBER:
            return json.loads(text, object_pairs_hook=first)
        return parsed

    p.everywhere(original, mutated)


@mutant("E4", "a byte-order mark before the text is skipped")
def m_bom_skipped(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        if isinstance(text, bytes) and text.startswith(b"\xef\xbb\xbf"):
            return original(text[3:])
        if isinstance(text, str) and text.startswith("\ufeff"):
            return original(text[1:])
        return original(text)

    p.everywhere(original, mutated)


@mutant("E4", "NaN and Infinity are numbers")
def m_non_json_numbers_accepted(p: Patcher) -> None:
    p.set(jsontext, "_refuse_constant", float)


@mutant("E4", "lone surrogates are accepted")
def m_lone_surrogates_accepted(p: Patcher) -> None:
    p.set(jsontext, "_has_surrogate", lambda text: False)


@mutant("E4", "invalid UTF-8 is decoded with replacement characters")
def m_invalid_utf8_replaced(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        if isinstance(text, bytes):
            return original(text.decode("utf-8", "replace"))
        return original(text)

    p.everywhere(original, mutated)


@mutant("E6", "duplicate members are refused before lone surrogates")
def m_duplicate_before_unicode(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        parsed = original(text)
        if isinstance(parsed, jsontext.TextRefused) and parsed.code is Code.JSON_INVALID_UNICODE:
            chars = text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text
            if general.has_duplicate_member(chars):
                return jsontext.TextRefused(Code.JSON_DUPLICATE_MEMBER)
        return parsed

    p.everywhere(original, mutated)


@mutant("E6", "malformed grammar is refused before the depth limit")
def m_grammar_before_depth(p: Patcher) -> None:
    original = jsontext._unreadable

    def mutated(chars: str) -> jsontext.TextRefused:
        refused = original(chars)
        if refused.code is Code.LIMIT_EXCEEDED:
            return jsontext.TextRefused(Code.JSON_MALFORMED)
        return refused

    p.set(jsontext, "_unreadable", mutated)


def _depth_limit(limit: int) -> Callable[[Patcher], None]:
    def apply(p: Patcher) -> None:
        nesting, value_depth = jsontext.nesting_depth_exceeds, jsontext.value_depth_exceeds
        p.everywhere(nesting, lambda text, limit_=limit: nesting(text, limit_))
        p.everywhere(value_depth, lambda value, limit_=limit: value_depth(value, limit_))

    return apply


@mutant("E4-limits", "the depth limit is 31")
def m_depth_31(p: Patcher) -> None:
    _depth_limit(31)(p)


@mutant("E4-limits", "the depth limit is 33")
def m_depth_33(p: Patcher) -> None:
    _depth_limit(33)(p)


@mutant("E4-limits", "the size limit counts characters, not UTF-8 bytes")
def m_size_in_characters(p: Patcher) -> None:
    limit = jsontext.MAX_TEXT_BYTES
    p.everywhere(
        jsontext.text_length_exceeds_limit,
        lambda text: len(text) > limit,
    )


@mutant(
    "E4-total",
    "a reader gives up (raises) on a text nested deeper than it can recurse",
    raises=True,
)
def m_deep_text_raises(p: Patcher) -> None:
    original = _statement_reader

    def mutated(text: str | bytes) -> reader.ReadResult:
        if len(text) > 2000 and text.count("[") + text.count("{") > 1000:  # type: ignore[arg-type]
            raise RecursionError("maximum recursion depth exceeded")
        return original(text)

    p.everywhere(_statement_reader, mutated)


@mutant("S2", "a reader that validates with the schema alone accepts duplicate members")
def m_schema_only_duplicates(p: Patcher) -> None:
    p.set(general, "has_duplicate_member", lambda chars: False)
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        parsed = original(text)
        if isinstance(parsed, jsontext.TextRefused) and parsed.code is Code.JSON_DUPLICATE_MEMBER:
            return json.loads(text)
        return parsed

    p.everywhere(original, mutated)


# ---------------------------------------------------------------------------------------------
# Legacy forms (E5), provider input (P1)


@mutant("E5", "a legacy minimal record and a raw SDK snapshot are told apart the other way")
def m_legacy_codes_swapped(p: Patcher) -> None:
    original = envelope.classify_unversioned

    def mutated(value: dict[str, Any]) -> Code:
        code = original(value)
        swap = {
            Code.LEGACY_MINIMAL_RECORD: Code.RAW_SDK_SNAPSHOT,
            Code.RAW_SDK_SNAPSHOT: Code.LEGACY_MINIMAL_RECORD,
        }
        return swap.get(code, code)

    p.everywhere(original, mutated)


@mutant("E5", "a legacy minimal record is resumable with an empty summary")
def m_legacy_resumable(p: Patcher) -> None:
    original = envelope.check_envelope_value

    def mutated(value: object) -> ReasoningReplayItem | Code:
        checked = original(value)
        if checked is Code.LEGACY_MINIMAL_RECORD and isinstance(value, dict):
            ciphertext, item_id = value.get("encrypted_content"), value.get("id")
            if isinstance(ciphertext, str) and ciphertext and isinstance(item_id, str) and item_id:
                return ReasoningReplayItem(item_id, (), ciphertext)
        return checked

    p.everywhere(original, mutated)


def _provider_item(transform: Callable[[dict[str, Any]], dict[str, Any]]) -> Apply:
    def apply(p: Patcher) -> None:
        original = ReasoningReplayItem.to_provider_input

        def mutated(self: ReasoningReplayItem) -> dict[str, Any]:
            return transform(original(self))

        def stored(self: ReasoningReplayItem) -> dict[str, Any]:
            # what capture stores stays as it was: only what is sent to the provider changes
            item = original(self)
            return {
                "schema": envelope.SCHEMA_NAME,
                "version": envelope.SCHEMA_VERSION,
                "item": item,
            }

        p.set(ReasoningReplayItem, "to_provider_input", mutated)
        p.set(ReasoningReplayItem, "to_envelope", stored)

    return apply


@mutant("P1", "the provider input item gains status: completed")
def m_provider_item_status_added(p: Patcher) -> None:
    _provider_item(lambda item: {**item, "status": "completed"})(p)


@mutant("P1", "the provider input item leaves out its content")
def m_provider_item_content_dropped(p: Patcher) -> None:
    _provider_item(lambda item: {k: v for k, v in item.items() if k != "content"})(p)


@mutant("P1", "an empty summary is left out of the provider input item")
def m_provider_item_empty_summary_dropped(p: Patcher) -> None:
    _provider_item(lambda item: {k: v for k, v in item.items() if k != "summary" or v})(p)


# ---------------------------------------------------------------------------------------------
# Capture (SPEC §4)


@mutant("C1", "response.output_item.added is a final source")
def m_added_is_final(p: Patcher) -> None:
    p.set(
        capture, "FINAL_SOURCES", capture.FINAL_SOURCES | {capture.CaptureSource.OUTPUT_ITEM_ADDED}
    )


@mutant("C1", "response.incomplete is not a final source")
def m_incomplete_not_final(p: Patcher) -> None:
    p.set(
        capture,
        "FINAL_SOURCES",
        capture.FINAL_SOURCES - {capture.CaptureSource.RESPONSE_INCOMPLETE},
    )


@mutant("C1", "an item with status incomplete is captured")
def m_status_incomplete_captured(p: Patcher) -> None:
    p.set(capture, "CAPTURABLE_STATUSES", (*capture.CAPTURABLE_STATUSES, "incomplete"))


@mutant("C1", "an item without status is not completed")
def m_status_missing_refused(p: Patcher) -> None:
    p.set(capture, "CAPTURABLE_STATUSES", ("completed",))


@mutant("C1", "the source is compared case-insensitively")
def m_source_case_insensitive(p: Patcher) -> None:
    p.wrap(
        "capture",
        lambda data, call: (
            call({**data, "source": data["source"].lower()})
            if isinstance(data.get("source"), str)
            else call(data)
        ),
    )


def _envelope_text_of(output: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> str:
    doc = json.loads(output["envelope_text"])
    change(doc["item"])
    return writer.canonical_json(doc)


@mutant("C2", "status is kept in the captured item")
def m_status_not_stripped(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        item = data.get("output_item")
        if result.output is None or not isinstance(item, dict) or "status" not in item:
            return result
        text = _envelope_text_of(result.output, lambda i: i.update(status=item["status"]))
        return OperationResult(output={"envelope_text": text})

    p.wrap("capture", wrapper)


@mutant("C2", "a part with extra members is refused instead of copied without them")
def m_part_extra_member_refused(p: Patcher) -> None:
    original = capture._part_texts

    def mutated(value: object, part_type: str) -> tuple[str, ...] | None:
        if isinstance(value, list) and any(
            isinstance(part, Mapping) and part.keys() - {"type", "text"} for part in value
        ):
            return None
        return original(value, part_type)

    p.set(capture, "_part_texts", mutated)


@mutant("C2", "content null is an invalid content")
def m_capture_content_null_refused(p: Patcher) -> None:
    p.wrap(
        "capture",
        lambda data, call: (
            _result(code=Code.ITEM_CONTENT_INVALID)
            if isinstance(data.get("output_item"), dict)
            and "content" in data["output_item"]
            and data["output_item"]["content"] is None
            and data["output_item"].get("type") == "reasoning"
            else call(data)
        ),
    )


@mutant("C2", "a non-string id is written as a string")
def m_capture_id_coerced(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        item = data.get("output_item")
        if (
            isinstance(item, dict)
            and isinstance(item.get("id"), int | float)
            and not isinstance(item.get("id"), bool)
        ):
            return call({**data, "output_item": {**item, "id": str(item["id"])}})
        return call(data)

    p.wrap("capture", wrapper)


@mutant("C3", "non-ASCII characters are written as \\u escapes")
def m_ascii_escapes(p: Patcher) -> None:
    p.set(
        writer,
        "canonical_json",
        lambda value: json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False),
    )


@mutant("C3", "members are written in sorted order")
def m_sorted_members(p: Patcher) -> None:
    p.set(
        writer,
        "canonical_json",
        lambda value: json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True
        ),
    )


@mutant("C3", "a space follows each separator")
def m_spaced_separators(p: Patcher) -> None:
    p.set(
        writer,
        "canonical_json",
        lambda value: json.dumps(value, ensure_ascii=False, allow_nan=False),
    )


_KNOWN_SDK_MEMBERS: Final = frozenset(
    ("type", "id", "summary", "encrypted_content", "content", "status")
)


@mutant("C4", "an SDK dump with members this SDK version does not know is not a reasoning item")
def m_newer_sdk_dump_refused(p: Patcher) -> None:
    p.wrap(
        "capture",
        lambda data, call: (
            _result(code=Code.CAPTURE_NOT_REASONING)
            if isinstance(data.get("output_item"), dict)
            and data["output_item"].keys() - _KNOWN_SDK_MEMBERS
            else call(data)
        ),
    )


# ---------------------------------------------------------------------------------------------
# Replay (SPEC §5, ST1, ST2, D7)


def _history_rewrite(rewrite: Callable[[dict[str, Any], Any], dict[str, Any]]) -> Apply:
    """A mutant that rewrites the history (and its target) of `replay` and `plan` inputs."""

    def apply(p: Patcher) -> None:
        def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
            history = data.get("history")
            if not isinstance(history, dict):
                return call(data)
            target = data.get("target", {}).get("provider", data.get("target_provider", "openai"))
            return call({**data, "history": rewrite(history, target)})

        p.wrap("replay", wrapper)
        p.wrap("plan", wrapper)

    return apply


def _messages(
    history: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    messages = history.get("messages")
    if not isinstance(messages, list):
        return history
    return {**history, "messages": [change(m) if isinstance(m, dict) else m for m in messages]}


def _no_provider(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "provider"}


@mutant("P4", "an item of another issuer is sent: issuers are not compared")
def m_issuer_not_compared(p: Patcher) -> None:
    _history_rewrite(lambda h, _t: _messages(_no_provider(h), _no_provider))(p)


@mutant("P4", "the history's provider is ignored for messages that record none")
def m_history_provider_ignored(p: Patcher) -> None:
    _history_rewrite(lambda h, _t: _no_provider(h))(p)


@mutant("P4", "codex and openai are taken for one issuer")
def m_codex_is_openai(p: Patcher) -> None:
    def alias(h: dict[str, Any], target: Any) -> dict[str, Any]:
        def one(m: dict[str, Any]) -> dict[str, Any]:
            both = m.get("provider") in ("openai", "codex") and target in ("openai", "codex")
            return {**m, "provider": target} if both else m

        return _messages(h, one)

    _history_rewrite(alias)(p)


@mutant("P4", "an item whose issuer is unknown is not sent")
def m_unknown_issuer_dropped(p: Patcher) -> None:
    def unknown(h: dict[str, Any], _target: Any) -> dict[str, Any]:
        fallback = h.get("provider")
        if not (isinstance(fallback, str) and fallback):
            fallback = "unknown-issuer"

        def one(m: dict[str, Any]) -> dict[str, Any]:
            recorded = m.get("provider")
            return m if isinstance(recorded, str) and recorded else {**m, "provider": fallback}

        return _messages(h, one)

    _history_rewrite(unknown)(p)


@mutant("P2", "a message's replay items come after its own items")
def m_reasoning_after_own_items(p: Patcher) -> None:
    original = provider_input._own_items
    # rebuild by_message with the two parts swapped: wrap the dataclass construction
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        swapped = []
        for message, items in zip(messages, built.by_message, strict=False):
            own = original(message, target)
            replayed = list(items[: len(items) - len(own)])
            swapped.append((*items[len(items) - len(own) :], *replayed))
        return provider_input.ReplayRequestInput(
            tuple(swapped) if built.by_message else (),
            built.diagnostics,
            built.deduplicated_exact,
            built.id_ciphertext_conflicts,
            built.rejected,
        )

    p.everywhere(original_build, mutated)


@mutant("P2", "replay blocks of user messages are replayed too")
def m_misplaced_blocks_replayed(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        return original_build([_as_assistant(m) for m in messages], target)

    def _as_assistant(m: history.HistoryMessage) -> history.HistoryMessage:
        if m.role == "assistant" or not m.replay_blocks:
            return m
        return history.HistoryMessage("assistant", m.provider, m.channels, m.items, m.response_id)

    p.everywhere(original_build, mutated)


@mutant("P2", "replay diagnostics are listed in the order they are found, not by location")
def m_diagnostics_unsorted(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        dedupe_codes = {Code.DEDUPE_EXACT_DUPLICATE, Code.DEDUPE_ID_CIPHERTEXT_CONFLICT}
        first = tuple(d for d in built.diagnostics if d.code not in dedupe_codes)
        last = tuple(d for d in built.diagnostics if d.code in dedupe_codes)
        return provider_input.ReplayRequestInput(
            built.by_message,
            first + last,
            built.deduplicated_exact,
            built.id_ciphertext_conflicts,
            built.rejected,
        )

    p.everywhere(original_build, mutated)


@mutant("P2", "a block that is not a text block is skipped without a diagnostic")
def m_non_text_block_silent(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        kept = tuple(d for d in built.diagnostics if d.code is not Code.BLOCK_NOT_TEXT)
        return provider_input.ReplayRequestInput(
            built.by_message,
            kept,
            built.deduplicated_exact,
            built.id_ciphertext_conflicts,
            built.rejected,
        )

    p.everywhere(original_build, mutated)


@mutant("P3", "a WebSocket replay sends only the messages after the last assistant message")
def m_websocket_replay_increment(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        if target.transport is not provider_input.Transport.WEBSOCKET:
            return built
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        by_message = tuple(items if i > last else () for i, items in enumerate(built.by_message))
        return provider_input.ReplayRequestInput(
            by_message,
            built.diagnostics,
            built.deduplicated_exact,
            built.id_ciphertext_conflicts,
            built.rejected,
        )

    p.everywhere(original_build, mutated)


@mutant("ST1", "a message's replay blocks are replayed last first")
def m_blocks_reversed(p: Patcher) -> None:
    p.set(
        history.HistoryMessage,
        "replay_blocks",
        property(lambda self: tuple(reversed(self.channels.get(envelope.REPLAY_CHANNEL, ())))),
    )


@mutant("ST2", "the display channel reasoning is replayed as well")
def m_display_channel_replayed(p: Patcher) -> None:
    p.set(
        history.HistoryMessage,
        "replay_blocks",
        property(
            lambda self: (
                *self.channels.get(envelope.REPLAY_CHANNEL, ()),
                *self.channels.get(envelope.DISPLAY_CHANNEL, ()),
            )
        ),
    )


@mutant("D7", "xAI keeps the ids of assistant message items")
def m_xai_ids_kept(p: Patcher) -> None:
    p.set(provider_input, "XAI", "xai-never")


@mutant("F2", 'only an item whose type is "message" is a message item: the short form is not')
def m_message_needs_type(p: Patcher) -> None:
    def literal(item: Mapping[str, Any], role: str) -> bool:
        return item.get("type") == "message" and item.get("role") == role

    p.everywhere(item_types.is_message, literal)


@mutant("D7", "every provider drops the ids of assistant message items")
def m_ids_dropped_for_all(p: Patcher) -> None:
    original = provider_input._own_items

    def mutated(message: history.HistoryMessage, target: Any) -> list[dict[str, Any]]:
        return original(message, provider_input.ReplayTarget(provider_input.XAI))

    p.set(provider_input, "_own_items", mutated)


@mutant("D7", "xAI drops the id of every item, not only of assistant messages")
def m_xai_drops_every_id(p: Patcher) -> None:
    original = provider_input._own_items

    def mutated(message: history.HistoryMessage, target: Any) -> list[dict[str, Any]]:
        items = original(message, target)
        if target.provider == provider_input.XAI:
            for item in items:
                item.pop("id", None)
        return items

    p.set(provider_input, "_own_items", mutated)


# ---------------------------------------------------------------------------------------------
# Deduplication (SPEC §6)


def _identity(make: Callable[[ReasoningReplayItem, str], dedupe.DedupeIdentity]) -> Apply:
    def apply(p: Patcher) -> None:
        p.everywhere(dedupe.reasoning_replay_dedupe_key, make)

    return apply


@mutant("D1", "the dedupe identity leaves out the provider")
def m_identity_without_provider(p: Patcher) -> None:
    _identity(
        lambda item, provider: dedupe.DedupeIdentity(
            "", item.id, dedupe.ciphertext_sha256(item.encrypted_content)
        )
    )(p)


@mutant("D1", "the dedupe identity is the id alone")
def m_identity_id_only(p: Patcher) -> None:
    _identity(lambda item, provider: dedupe.DedupeIdentity(provider, item.id, ""))(p)


@mutant("D1", "the dedupe identity is the ciphertext alone")
def m_identity_ciphertext_only(p: Patcher) -> None:
    _identity(
        lambda item, provider: dedupe.DedupeIdentity(
            provider, "", dedupe.ciphertext_sha256(item.encrypted_content)
        )
    )(p)


@mutant("D1", "a message without a recorded provider is from no provider, not the target's")
def m_unrecorded_provider_empty(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        stamped = [
            m
            if m.provider is not None
            else history.HistoryMessage(m.role, "", m.channels, m.items, m.response_id)
            for m in messages
        ]
        return original_build(stamped, target)

    p.everywhere(original_build, mutated)


@mutant("D1", "the recorded provider is ignored: every item is the target's")
def m_recorded_provider_ignored(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        plain = [
            history.HistoryMessage(m.role, None, m.channels, m.items, m.response_id)
            for m in messages
        ]
        return original_build(plain, target)

    p.everywhere(original_build, mutated)


@mutant("D1", "recorded providers are compared case-insensitively")
def m_provider_case_insensitive(p: Patcher) -> None:
    _identity(
        lambda item, provider: dedupe.DedupeIdentity(
            provider.lower(), item.id, dedupe.ciphertext_sha256(item.encrypted_content)
        )
    )(p)


def _decisions(
    change: Callable[[list[dedupe.DedupeIdentity]], list[dedupe.DedupeDecision]],
) -> Apply:
    def apply(p: Patcher) -> None:
        p.everywhere(dedupe.decide, lambda identities: change(list(identities)))

    return apply


@mutant("D2", "of two exact duplicates the last is kept")
def m_duplicates_keep_last(p: Patcher) -> None:
    original = dedupe.decide

    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        return list(reversed(original(list(reversed(ids)))))

    _decisions(change)(p)


@mutant("D2", "exact duplicates are all kept")
def m_duplicates_kept(p: Patcher) -> None:
    original = dedupe.decide
    _decisions(
        lambda ids: [
            dedupe.DedupeDecision.KEEP if d is dedupe.DedupeDecision.DROP_DUPLICATE else d
            for d in original(ids)
        ]
    )(p)


@mutant("D3", "a new ciphertext under a known id is dropped")
def m_conflict_dropped(p: Patcher) -> None:
    original = dedupe.decide
    _decisions(
        lambda ids: [
            dedupe.DedupeDecision.DROP_DUPLICATE if d is dedupe.DedupeDecision.KEEP_CONFLICT else d
            for d in original(ids)
        ]
    )(p)


@mutant("D3", "a new ciphertext under a known id is kept without a word")
def m_conflict_silent(p: Patcher) -> None:
    original = dedupe.decide
    _decisions(
        lambda ids: [
            dedupe.DedupeDecision.KEEP if d is dedupe.DedupeDecision.KEEP_CONFLICT else d
            for d in original(ids)
        ]
    )(p)


@mutant("D3", "a conflict is judged against the last kept ciphertext only")
def m_conflict_against_last(p: Patcher) -> None:
    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        last: dict[tuple[str, str], dedupe.DedupeIdentity] = {}
        out = []
        for identity in ids:
            key = (identity.provider, identity.id)
            if last.get(key) == identity:
                out.append(dedupe.DedupeDecision.DROP_DUPLICATE)
                continue
            out.append(
                dedupe.DedupeDecision.KEEP_CONFLICT if key in last else dedupe.DedupeDecision.KEEP
            )
            last[key] = identity
        return out

    _decisions(change)(p)


@mutant("D4", "the same ciphertext under another id is a duplicate")
def m_same_ciphertext_duplicate(p: Patcher) -> None:
    original = dedupe.decide

    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        seen: set[tuple[str, str]] = set()
        out = []
        for identity, decision in zip(ids, original(ids), strict=True):
            key = (identity.provider, identity.ciphertext_sha256)
            out.append(dedupe.DedupeDecision.DROP_DUPLICATE if key in seen else decision)
            seen.add(key)
        return out

    _decisions(change)(p)


@mutant("D5", "items of different providers with the same id and ciphertext are duplicates")
def m_cross_provider_duplicates(p: Patcher) -> None:
    original = dedupe.decide

    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        return original([dedupe.DedupeIdentity("", i.id, i.ciphertext_sha256) for i in ids])

    _decisions(change)(p)


@mutant("D6", "deduplication runs per message, not over the whole history")
def m_dedupe_per_message(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = [original_build([m], target) for m in messages]
        diagnostics = tuple(
            type(d)(d.code, index, d.block_index)
            for index, b in enumerate(built)
            for d in b.diagnostics
        )
        whole = original_build(messages, target)
        if whole.rejected is not None:
            return whole
        return provider_input.ReplayRequestInput(
            tuple(items for b in built for items in b.by_message),
            diagnostics,
            sum(b.deduplicated_exact for b in built),
            sum(b.id_ciphertext_conflicts for b in built),
        )

    p.everywhere(original_build, mutated)


@mutant("D6", "the dedupe operation decides the items in reverse order")
def m_dedupe_reverse_order(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        entries = data.get("entries")
        if not isinstance(entries, list):
            return call(data)
        result = call({**data, "entries": list(reversed(entries))})
        if result.output is None:
            return result
        return OperationResult(
            output={**result.output, "decisions": list(reversed(result.output["decisions"]))}
        )

    p.wrap("dedupe", wrapper)


# ---------------------------------------------------------------------------------------------
# Redaction and telemetry (SPEC §7, §8)


@mutant("R2", "sensitive names are compared case-sensitively")
def m_names_case_sensitive(p: Patcher) -> None:
    p.set(redaction, "normal_name", lambda name: re.sub(r"[^A-Za-z0-9]+", "", name))


@mutant("R2", "only - and _ are removed from a name's normal form")
def m_names_only_dash_underscore_removed(p: Patcher) -> None:
    p.set(redaction, "normal_name", lambda name: name.lower().replace("-", "").replace("_", ""))


@mutant("R2", "digits are removed from a name's normal form too")
def m_names_digits_removed(p: Patcher) -> None:
    p.set(redaction, "normal_name", lambda name: re.sub(r"[^a-z]+", "", name.lower()))


@mutant("R2", "token and auth count only at the end of a name (the closed list of fragments)")
def m_names_suffix_rule(p: Patcher) -> None:
    fragments = tuple(f for f in redaction.SENSITIVE_FRAGMENTS if f not in ("token", "auth"))

    def sensitive(name: str) -> bool:
        normal = redaction.normal_name(name)
        return normal.endswith(("token", "auth")) or any(f in normal for f in fragments)

    p.everywhere(redaction.is_sensitive_name, sensitive)


@mutant("R2", "names are lowercased with full Unicode case folding")
def m_names_casefold(p: Patcher) -> None:
    p.set(redaction, "normal_name", lambda name: re.sub(r"[^a-z0-9]+", "", name.casefold()))


@mutant("R2", "a name/value pair's value is kept")
def m_pairs_kept(p: Patcher) -> None:
    p.set(redaction, "pair_name", lambda value, text: None)


@mutant("R2", "a count is judged by its literal: 1.0 is not a count")
def m_count_by_literal(p: Patcher) -> None:
    p.set(
        redaction,
        "is_count",
        lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= 0,
    )


@mutant("R2", "the replacement names the member by its normal form")
def m_replacement_normal_name(p: Patcher) -> None:
    original = redaction.replacement

    def mutated(name: str, value: object, text: Callable[[str], str]) -> object:
        replaced = original(name, value, text)
        if isinstance(replaced, dict) and replaced.keys() == {"redacted"}:
            return {"redacted": redaction.normal_name(name)}
        return replaced

    p.set(redaction, "replacement", mutated)


@mutant("R2", "bytes and sha256 replace any name holding encryptedcontent")
def m_measured_any_ciphertext_name(p: Patcher) -> None:
    original = redaction.replacement

    def mutated(name: str, value: object, text: Callable[[str], str]) -> object:
        if "encryptedcontent" in redaction.normal_name(name) and isinstance(value, str):
            return original("encrypted_content", value, text)
        return original(name, value, text)

    p.set(redaction, "replacement", mutated)


@mutant("R2", "rule 4 applies to a sensitive member's value too")
def m_nesting_before_sensitive(p: Patcher) -> None:
    original = redaction.redact_value

    def mutated(value: object, text: Callable[[str], str], depth: int = 0) -> object:
        if isinstance(value, Mapping) and depth + 1 >= redaction.MAX_REDACTION_DEPTH:
            return {
                name: {"redacted": "nesting"}
                if isinstance(member, Mapping | list) and redaction.is_sensitive_name(name)
                else original(member, text, depth + 1)
                for name, member in value.items()
            }
        return original(value, text, depth)

    p.set(redaction, "redact_value", mutated)


@mutant("R2", "rule 1 precedes rule 4: a reasoning item at any depth becomes its view")
def m_view_before_nesting(p: Patcher) -> None:
    original = redaction.redact_value

    def mutated(value: object, text: Callable[[str], str], depth: int = 0) -> object:
        if isinstance(value, Mapping) and value.get("type") == "reasoning":
            return original(value, text, 0)
        return original(value, text, depth)

    p.set(redaction, "redact_value", mutated)


@mutant("R2", "a non-string value under a sensitive name is kept")
def m_non_string_sensitive_kept(p: Patcher) -> None:
    original = redaction.replacement
    p.set(
        redaction,
        "replacement",
        lambda name, value, text: original(name, value, text) if isinstance(value, str) else value,
    )


@mutant("R1", "a reasoning item is redacted member by member, not replaced by its view")
def m_no_diagnostic_view(p: Patcher) -> None:
    p.set(
        redaction,
        "redact_reasoning_replay_for_diagnostics",
        lambda value: {
            name: redaction.replacement(name, member, str)
            if redaction.is_sensitive_name(name)
            or name in ("encrypted_content", "summary", "content")
            else member
            for name, member in value.items()
        },
    )


@mutant("R1", "the diagnostic view counts characters, not UTF-8 bytes")
def m_view_counts_characters(p: Patcher) -> None:
    p.set(redaction, "utf8_length", lambda value: len(value) if isinstance(value, str) else 0)


@mutant("R3", "a debug capture keeps reasoning items, redacting only sensitive names")
def m_debug_keeps_reasoning(p: Patcher) -> None:
    original = redaction.redact_structural

    def mutated(value: object) -> object:
        if isinstance(value, Mapping) and value.get("type") == "reasoning":
            return dict(value)
        return original(value)

    p.everywhere(original, mutated)


@mutant("T1", "every item of the input is counted, not only reasoning items")
def m_count_every_item(p: Patcher) -> None:
    original = telemetry.replay_telemetry

    def mutated(request_input: Any, **kwargs: int) -> telemetry.ReplayTelemetry:
        items = list(request_input)
        counted = original(items, **kwargs)
        others = sum(
            1 for i in items if not (isinstance(i, Mapping) and i.get("type") == "reasoning")
        )
        return dataclasses.replace(
            counted, reasoning_replay_item_count=counted.reasoning_replay_item_count + others
        )

    p.everywhere(original, mutated)


@mutant("T1", "text sizes are counted in characters, not UTF-8 bytes")
def m_sizes_in_characters(p: Patcher) -> None:
    p.set(telemetry, "utf8_length", lambda value: len(value) if isinstance(value, str) else 0)


@mutant("T1", "content parts are not counted")
def m_content_not_counted(p: Patcher) -> None:
    original = telemetry.replay_telemetry

    def mutated(request_input: Any, **kwargs: int) -> telemetry.ReplayTelemetry:
        without_content = [
            {k: v for k, v in i.items() if k != "content"} if isinstance(i, Mapping) else i
            for i in request_input
        ]
        return original(without_content, **kwargs)

    p.everywhere(original, mutated)


@mutant("T2", "telemetry names the ids of the replayed items")
def m_telemetry_names_ids(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        request = data.get("request", {})
        ids = [
            i.get("id")
            for i in request.get("input", [])
            if isinstance(i, Mapping) and i.get("type") == "reasoning"
        ]
        if not ids:
            return result
        return OperationResult(output={"counters": {**result.output["counters"], "ids": ids}})

    p.wrap("telemetry", wrapper)


# ---------------------------------------------------------------------------------------------
# Effort updates and cache keys (SPEC §9)


@mutant("F1", "the baseline is the effort of the last record, not the first")
def m_baseline_from_last_record(p: Patcher) -> None:
    original = planner._records

    def mutated(messages: Any, model: str, update_capable: bool) -> Any:
        valid, diagnostics = original(messages, model, update_capable)
        if len(valid) < 2:
            return valid, diagnostics
        first, last = min(valid), max(valid)
        swapped = dict(valid)
        swapped[first] = dataclasses.replace(valid[first], effort=valid[last].effort)
        return swapped, diagnostics

    p.set(planner, "_records", mutated)


@mutant("F1", "the request-level effort is always the desired effort")
def m_baseline_desired(p: Patcher) -> None:
    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        reasoning = planned.request.get("reasoning")
        desired = overrides.desired_effort(settings.desired_effort, settings.metadata)
        if (
            isinstance(reasoning, dict)
            and "effort" in reasoning
            and isinstance(desired, str)
            and overrides.is_update_capable(planned.request["model"], settings.update_capable)
        ):
            planned.request["reasoning"] = {**reasoning, "effort": desired}
        return planned

    original_plan = planner.plan_request
    p.everywhere(original_plan, plan)


@mutant("F2", "stored configuration updates are sent as they are")
def m_stored_updates_sent(p: Patcher) -> None:
    original = provider_input.message_inputs

    def mutated(messages: Any, target: Any, read: Any) -> Iterator[tuple[dict[str, Any], ...]]:
        # the planner filters items whose type is configuration_update: rename them past it
        for items in original(messages, target, read):
            yield tuple(
                {**i, "type": "configuration_update "}
                if i.get("type") == "configuration_update"
                else i
                for i in items
            )

    p.set(planner, "message_inputs", mutated)


@mutant("F2", "the update goes after the user message, not before it")
def m_update_after_user_message(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        items = list(planned.request["input"])
        for i in range(len(items) - 1):
            if items[i].get("type") == "configuration_update":
                items[i], items[i + 1] = items[i + 1], items[i]
        planned.request["input"] = items
        return planned

    p.everywhere(original_plan, plan)


@mutant("F2", "the update item also names the model")
def m_update_names_model(p: Patcher) -> None:
    p.set(
        planner,
        "configuration_update",
        lambda effort: {
            "type": "configuration_update",
            "reasoning": {"effort": effort},
            "model": "",
        },
    )


@mutant("F3", "a turn takes the effort of the last assistant message before the next turn")
def m_turn_effort_from_last_assistant(p: Patcher) -> None:
    def turn_efforts(messages: Any, records: Mapping[int, Any], desired: str) -> dict[int, Any]:
        efforts: dict[int, Any] = {}
        decider: Any = desired
        seen_assistant = False
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            genuine = planner.is_genuine_user_turn(message)
            if genuine:
                efforts[index] = decider
                seen_assistant = False
            if message.role == "assistant" and not seen_assistant:
                record = records.get(index)
                decider = record.effort if record is not None else None
                seen_assistant = True
            elif genuine:
                decider = None
        return efforts

    p.set(planner, "_turn_efforts", turn_efforts)


@mutant("F3", "the last turn takes the effective effort, not the desired one")
def m_last_turn_keeps_effective(p: Patcher) -> None:
    original = planner._turn_efforts

    def mutated(messages: Any, records: Any, desired: str) -> dict[int, Any]:
        efforts = original(messages, records, desired)
        last = max(
            (i for i, m in enumerate(messages) if planner.is_genuine_user_turn(m)), default=None
        )
        if last is not None and not any(m.role == "assistant" for m in messages[last + 1 :]):
            efforts[last] = None
        return efforts

    p.set(planner, "_turn_efforts", mutated)


@mutant("F4", "a tool-result continuation is a user turn and gets an update")
def m_update_at_tool_continuations(p: Patcher) -> None:
    original = planner.is_genuine_user_turn

    def mutated(message: history.HistoryMessage) -> bool:
        if message.role == "user" and any(
            i.get("type") in planner.TOOL_OUTPUT_TYPES for i in message.items
        ):
            return True
        return original(message)

    user_item = planner._is_user_message_item
    p.everywhere(original, mutated)
    # the update then goes before the continuation's first tool output
    p.set(
        planner,
        "_is_user_message_item",
        lambda item: item.get("type") in planner.TOOL_OUTPUT_TYPES or user_item(item),
    )


@mutant("F4", "a user message with staged media is a genuine turn")
def m_staged_media_genuine(p: Patcher) -> None:
    p.set(planner, "STAGED_MEDIA_CHANNEL", "no-such-channel")


@mutant("F4", "a user message with empty content is a genuine turn")
def m_empty_content_genuine(p: Patcher) -> None:
    p.set(planner, "_has_content", lambda item: "content" in item)


@mutant("F5", "a record of another model decides the turn's effort")
def m_other_model_records(p: Patcher) -> None:
    original = planner._records

    def mutated(messages: Any, model: str, update_capable: bool) -> Any:
        valid, diagnostics = original(messages, model, update_capable)
        for index, message in enumerate(messages):
            if message.role != "assistant" or index in valid:
                continue
            record = cache_state.read_cache_state(
                message.channels.get(cache_state.CACHE_STATE_CHANNEL, ())
            )
            if (
                isinstance(record, cache_state.CacheStateRecord)
                and record.effort in ALLOWED_EFFORTS
            ):
                valid[index] = cache_state.CacheStateRecord(model, record.key, record.effort)
        return valid, diagnostics

    p.set(planner, "_records", mutated)


@mutant("F5", "a later genuine turn before any assistant message does not reset the look-ahead")
def m_lookahead_not_reset(p: Patcher) -> None:
    def turn_efforts(messages: Any, records: Mapping[int, Any], desired: str) -> dict[int, Any]:
        efforts: dict[int, Any] = {}
        decider: Any = desired
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if planner.is_genuine_user_turn(message):
                efforts[index] = decider
            if message.role == "assistant":
                record = records.get(index)
                decider = record.effort if record is not None else None
        return efforts

    p.set(planner, "_turn_efforts", turn_efforts)


@mutant("F5", "a turn whose assistant message has no record gets the desired effort")
def m_missing_record_desired(p: Patcher) -> None:
    original = planner._turn_efforts

    def mutated(messages: Any, records: Any, desired: str) -> dict[int, Any]:
        return {
            index: desired if effort is None else effort
            for index, effort in original(messages, records, desired).items()
        }

    p.set(planner, "_turn_efforts", mutated)


@mutant("F6", "a malformed record is ignored without a diagnostic")
def m_malformed_record_silent(p: Patcher) -> None:
    original = planner._records

    def mutated(messages: Any, model: str, update_capable: bool) -> Any:
        valid, _ = original(messages, model, update_capable)
        return valid, []

    p.set(planner, "_records", mutated)


@mutant("F6", "any effort string is allowed in a record")
def m_any_effort_allowed(p: Patcher) -> None:
    p.set(
        planner,
        "effort_allowed",
        lambda effort, capable: isinstance(effort, str) if capable else effort is None,
    )


@mutant("F6", "a record with an empty key is valid")
def m_empty_key_record(p: Patcher) -> None:
    original = cache_state.read_cache_state

    def mutated(blocks: Any) -> Any:
        record = original(blocks)
        if record is Code.CACHE_STATE_INVALID and isinstance(blocks, list) and len(blocks) == 1:
            block = blocks[0]
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                try:
                    value = json.loads(block["text"])
                except ValueError:
                    return record
                if (
                    isinstance(value, dict)
                    and value.keys() == {"model", "key", "effort"}
                    and value["key"] == ""
                    and isinstance(value["model"], str)
                ):
                    return cache_state.CacheStateRecord(value["model"], "", value["effort"])
        return record

    p.set(planner, "read_cache_state", mutated)


@mutant("F6", "a channel of several blocks is read from its first block")
def m_first_block_record(p: Patcher) -> None:
    original = cache_state.read_cache_state
    p.set(
        planner,
        "read_cache_state",
        lambda blocks: original(blocks[:1] if isinstance(blocks, list) else blocks),
    )


@mutant("U1", "a lone surrogate is hashed as its own UTF-8-style bytes, not as U+FFFD")
def m_surrogate_hashed_raw(p: Patcher) -> None:
    p.set(
        dedupe,
        "ciphertext_sha256",
        lambda text: hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    )


@mutant("F7", "a compaction does not make the effective effort unknown")
def m_no_update_after_compaction(p: Patcher) -> None:
    p.set(planner, "COMPACTION_TYPES", frozenset())


@mutant("F7", "only compaction_trigger compacts")
def m_compaction_item_ignored(p: Patcher) -> None:
    p.set(planner, "COMPACTION_TYPES", frozenset(("compaction_trigger",)))


def _plan_check(check: Callable[[Any, Any], Code | None]) -> Apply:
    def apply(p: Patcher) -> None:
        original_plan = planner.plan_request

        def plan(messages: Any, settings: Any) -> Any:
            code = check(messages, settings)
            return code if code is not None else original_plan(messages, settings)

        p.everywhere(original_plan, plan)

    return apply


@mutant("F8", "a desired effort of another model's allowed set is not checked")
def m_effort_unchecked(p: Patcher) -> None:
    original = overrides.check_overrides

    def mutated(
        model: Any, effort: Any, key: Any, metadata: Any, capable: Any, **kw: Any
    ) -> Code | None:
        code = original(model, effort, key, metadata, capable, **kw)
        reasoning = metadata.get("reasoning")
        if (
            code is Code.PLAN_EFFORT_INVALID
            and isinstance(overrides.desired_effort(effort, metadata), str)
            and (reasoning is None or isinstance(reasoning, Mapping))
        ):
            return None  # a string effort is sent as it is
        return code

    p.everywhere(original, mutated)


@mutant("F8", "metadata.input is allowed")
def m_raw_input_allowed(p: Patcher) -> None:
    original = overrides.check_overrides

    def mutated(
        model: Any, effort: Any, key: Any, metadata: Any, capable: Any, **kw: Any
    ) -> Code | None:
        code = original(model, effort, key, metadata, capable, **kw)
        return None if code is Code.PLAN_RAW_INPUT_OVERRIDE else code

    p.everywhere(original, mutated)


@mutant("F8", "extra_body is checked before the instance key")
def m_extra_body_before_key(p: Patcher) -> None:
    original = overrides.check_overrides

    def mutated(
        model: Any, effort: Any, key: Any, metadata: Any, capable: Any, **kw: Any
    ) -> Code | None:
        code = original(model, effort, key, metadata, capable, **kw)
        if code is Code.PLAN_CACHE_KEY_INVALID:
            later = original(
                model, effort, "0" * 32, {**metadata, "prompt_cache_key": None}, capable, **kw
            )
            if later is not None and later is not Code.PLAN_MODEL_INVALID:
                return later
        return code

    p.everywhere(original, mutated)


@mutant("F8", "compact with an update is sent")
def m_compact_with_update_sent(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        if settings.endpoint is planner.Endpoint.COMPACT:
            settings = dataclasses.replace(settings, endpoint=planner.Endpoint.RESPONSES)
        return original_plan(messages, settings)

    p.everywhere(original_plan, plan)


@mutant("F9", "a WebSocket continuation sends the whole input")
def m_websocket_full_input(p: Patcher) -> None:
    p.set(
        planner,
        "_input_for_transport",
        lambda messages, planned, transport: {"input": planned.items},
    )


@mutant("F9", "a WebSocket continuation chains to the first assistant message")
def m_websocket_first_assistant(p: Patcher) -> None:
    def mutated(messages: Any, planned: Any, transport: Any) -> dict[str, Any]:
        first = min((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
        if transport is planner.PlanTransport.WEBSOCKET_CONTINUATION and first is not None:
            response_id = messages[first].response_id
            if response_id is not None:
                return {"input": planned.after(first), "previous_response_id": response_id}
        return {"input": planned.items}

    p.set(planner, "_input_for_transport", mutated)


@mutant("F10", "a model that is not update-capable gets updates too")
def m_updates_for_every_model(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        model = overrides.requested_model(settings.model, settings.metadata)
        desired = overrides.desired_effort(settings.desired_effort, settings.metadata)
        if isinstance(model, str) and desired in ALLOWED_EFFORTS:
            settings = dataclasses.replace(
                settings, update_capable=settings.update_capable | {model}
            )
        return original_plan(messages, settings)

    p.everywhere(original_plan, plan)


@mutant("F10", "a model that is not update-capable records its effort")
def m_non_capable_records_effort(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code) or planned.record is None or planned.record.effort is not None:
            return planned
        effort = planned.request.get("reasoning", {}).get("effort")
        if effort is None:
            return planned
        record = cache_state.CacheStateRecord(planned.record.model, planned.record.key, effort)
        return type(planned)(planned.request, record, planned.diagnostics)

    p.everywhere(original_plan, plan)


@mutant("F11", "metadata's other reasoning options are dropped")
def m_reasoning_options_dropped(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        reasoning = planned.request.get("reasoning")
        if isinstance(reasoning, dict):
            kept = {k: v for k, v in reasoning.items() if k == "effort"}
            if kept:
                planned.request["reasoning"] = kept
            else:
                del planned.request["reasoning"]
        return planned

    p.everywhere(original_plan, plan)


@mutant("F11", "the record's diagnostics come before the replay's")
def m_record_diagnostics_first(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        record_codes = {Code.CACHE_STATE_INVALID}
        diagnostics = sorted(
            planned.diagnostics,
            key=lambda d: (d.message_index, d.code not in record_codes),
        )
        return type(planned)(planned.request, planned.record, tuple(diagnostics))

    p.everywhere(original_plan, plan)


@mutant("K1", "an instance key in upper-case hex is valid")
def m_upper_hex_key(p: Patcher) -> None:
    p.set(overrides, "INSTANCE_KEY", re.compile(r"[0-9a-fA-F]{32}"))


@mutant("K1", "an instance key of any length is valid")
def m_any_length_key(p: Patcher) -> None:
    p.set(overrides, "INSTANCE_KEY", re.compile(r"[0-9a-f]+"))


def _key_rule(pick: Callable[[Mapping[int, Any]], Any]) -> Apply:
    """The planner with another choice of the record whose key is sent."""

    def apply(p: Patcher) -> None:
        original_plan = planner.plan_request

        def plan(messages: Any, settings: Any) -> Any:
            planned = original_plan(messages, settings)
            if isinstance(planned, Code) or planned.record is None:
                return planned
            explicit = settings.metadata.get("prompt_cache_key")
            if isinstance(explicit, str):
                return planned
            model = planned.request["model"]
            capable = overrides.is_update_capable(model, settings.update_capable)
            records, _ = original_records(messages, model, capable)
            if not records:
                return planned
            key = pick(records)
            planned.request["prompt_cache_key"] = key
            record = cache_state.CacheStateRecord(model, key, planned.record.effort)
            return type(planned)(planned.request, record, planned.diagnostics)

        original_records = planner._records
        p.everywhere(original_plan, plan)

    return apply


@mutant("K2", "the key is taken from the first record, not the last")
def m_key_from_first_record(p: Patcher) -> None:
    _key_rule(lambda records: records[min(records)].key)(p)


@mutant("K2", "an explicit empty prompt_cache_key is sent")
def m_empty_explicit_key(p: Patcher) -> None:
    original = overrides.check_overrides

    def mutated(
        model: Any, effort: Any, key: Any, metadata: Any, capable: Any, **kw: Any
    ) -> Code | None:
        if metadata.get("prompt_cache_key") == "":
            metadata = {k: v for k, v in metadata.items() if k != "prompt_cache_key"}
        return original(model, effort, key, metadata, capable, **kw)

    p.everywhere(original, mutated)


@mutant("K3", "the instance key wins over a recorded key")
def m_instance_key_wins(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if (
            isinstance(planned, Code)
            or planned.record is None
            or isinstance(settings.metadata.get("prompt_cache_key"), str)
        ):
            return planned
        planned.request["prompt_cache_key"] = settings.instance_key
        record = cache_state.CacheStateRecord(
            planned.record.model, settings.instance_key, planned.record.effort
        )
        return type(planned)(planned.request, record, planned.diagnostics)

    p.everywhere(original_plan, plan)


@mutant("K4", "the key is also sent as a cache breakpoint")
def m_key_as_breakpoint(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        planned.request["prompt_cache_retention"] = "24h"
        return planned

    p.everywhere(original_plan, plan)


@mutant("D2", "exact duplicates are dropped only across messages, not within one")
def m_duplicates_within_message_kept(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        if built.deduplicated_exact == 0 or built.rejected is not None:
            return built
        # rebuild each message alone: what it drops by itself it now keeps
        alone = [original_build([m], target) for m in messages]
        by_message = []
        for whole, single in zip(built.by_message, alone, strict=True):
            by_message.append(whole if single.deduplicated_exact == 0 else single.input)
        return provider_input.ReplayRequestInput(
            tuple(by_message),
            built.diagnostics,
            built.deduplicated_exact - sum(a.deduplicated_exact for a in alone),
            built.id_ciphertext_conflicts,
        )

    p.everywhere(original_build, mutated)


@mutant("D3", "the first item of a conflicting id is counted as a conflict too")
def m_conflict_counts_first(p: Patcher) -> None:
    original = dedupe.decide

    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        decisions = original(ids)
        conflicted = {
            (i.provider, i.id)
            for i, d in zip(ids, decisions, strict=True)
            if d is dedupe.DedupeDecision.KEEP_CONFLICT
        }
        return [
            dedupe.DedupeDecision.KEEP_CONFLICT
            if d is dedupe.DedupeDecision.KEEP and (i.provider, i.id) in conflicted
            else d
            for i, d in zip(ids, decisions, strict=True)
        ]

    _decisions(change)(p)


@mutant("E1", "a fractional version is truncated to an integer")
def m_version_truncated(p: Patcher) -> None:
    _envelope_checker(
        lambda v: (
            _with(v, version=int(v["version"]))
            if isinstance(v, dict)
            and isinstance(v.get("version"), float)
            and v["version"] == v["version"]
            and abs(v["version"]) < 1e18
            else v
        )
    )(p)


@mutant("E2", "a summary null is an empty summary")
def m_null_summary_empty(p: Patcher) -> None:
    _item_checker(
        lambda i: _with(i, summary=[]) if isinstance(i, dict) and i.get("summary", 0) is None else i
    )(p)


@mutant("C2", "the summary is checked before the id")
def m_capture_summary_before_id(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        item = data.get("output_item")
        if result.code == Code.ITEM_ID_INVALID.value and isinstance(item, dict):
            summary = item.get("summary")
            if capture._part_texts(summary, "summary_text") is None:
                return _result(code=Code.ITEM_SUMMARY_INVALID)
        return result

    p.wrap("capture", wrapper)


@mutant("K2", "the key comes from the last record of any model")
def m_key_from_any_model(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if (
            isinstance(planned, Code)
            or planned.record is None
            or isinstance(settings.metadata.get("prompt_cache_key"), str)
        ):
            return planned
        last = None
        for message in messages:
            if message.role == "assistant":
                record = cache_state.read_cache_state(
                    message.channels.get(cache_state.CACHE_STATE_CHANNEL, ())
                )
                if isinstance(record, cache_state.CacheStateRecord):
                    last = record
        if last is None:
            return planned
        planned.request["prompt_cache_key"] = last.key
        record = cache_state.CacheStateRecord(planned.record.model, last.key, planned.record.effort)
        return type(planned)(planned.request, record, planned.diagnostics)

    p.everywhere(original_plan, plan)


@mutant("F6", "a record on a user message counts")
def m_user_message_records(p: Patcher) -> None:
    original = planner._records

    def mutated(messages: Any, model: str, update_capable: bool) -> Any:
        relabelled = [
            history.HistoryMessage("assistant", m.provider, m.channels, m.items, m.response_id)
            if m.role != "assistant" and m.channels.get(cache_state.CACHE_STATE_CHANNEL)
            else m
            for m in messages
        ]
        return original(relabelled, model, update_capable)

    p.set(planner, "_records", mutated)


@mutant("F9", "without a response id on the last assistant message, the one before is used")
def m_continuation_earlier_response(p: Patcher) -> None:
    def mutated(messages: Any, planned: Any, transport: Any) -> dict[str, Any]:
        if transport is planner.PlanTransport.WEBSOCKET_CONTINUATION:
            for i in range(len(messages) - 1, -1, -1):
                if messages[i].role == "assistant" and messages[i].response_id is not None:
                    return {
                        "input": planned.after(i),
                        "previous_response_id": messages[i].response_id,
                    }
        return {"input": planned.items}

    p.set(planner, "_input_for_transport", mutated)


@mutant("F1", "the baseline comes from the first record of any model")
def m_baseline_any_model(p: Patcher) -> None:
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if isinstance(planned, Code):
            return planned
        model = planned.request["model"]
        if not overrides.is_update_capable(model, settings.update_capable):
            return planned
        for message in messages:
            if message.role != "assistant":
                continue
            record = cache_state.read_cache_state(
                message.channels.get(cache_state.CACHE_STATE_CHANNEL, ())
            )
            if isinstance(record, cache_state.CacheStateRecord):
                if record.model != model and record.effort in ALLOWED_EFFORTS:
                    planned.request["reasoning"] = {
                        **planned.request.get("reasoning", {}),
                        "effort": record.effort,
                    }
                break
        return planned

    p.everywhere(original_plan, plan)


def _canonical_then(change: Callable[[str], str]) -> Apply:
    def apply(p: Patcher) -> None:
        original = writer.canonical_json
        p.set(writer, "canonical_json", lambda value: change(original(value)))

    return apply


@mutant("C3", "a solidus is escaped as \\/")
def m_solidus_escaped(p: Patcher) -> None:
    _canonical_then(lambda text: text.replace("/", "\\/"))(p)


@mutant("C3", "DEL (U+007F) is escaped as \\u007f")
def m_del_escaped(p: Patcher) -> None:
    _canonical_then(lambda text: text.replace("\x7f", "\\u007f"))(p)


@mutant("C3", "control characters are escaped with upper-case hex digits")
def m_upper_hex_escapes(p: Patcher) -> None:
    _canonical_then(
        lambda text: re.sub(r"\\u00([0-9a-f]{2})", lambda m: "\\u00" + m[1].upper(), text)
    )(p)


@mutant("C3", "U+2028 and U+2029 are escaped, as JavaScript source needs")
def m_line_separators_escaped(p: Patcher) -> None:
    _canonical_then(lambda text: text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))(p)


@mutant("C3", "the short escapes \\b and \\f are written as \\u0008 and \\u000c")
def m_no_short_escapes(p: Patcher) -> None:
    _canonical_then(lambda text: text.replace("\\b", "\\u0008").replace("\\f", "\\u000c"))(p)


@mutant("C3", "the text is normalised to NFC")
def m_nfc_normalised(p: Patcher) -> None:
    import unicodedata  # noqa: PLC0415

    def nfc(value: object) -> object:
        if isinstance(value, str):
            return unicodedata.normalize("NFC", value)
        if isinstance(value, list):
            return [nfc(v) for v in value]
        if isinstance(value, dict):
            return {k: nfc(v) for k, v in value.items()}
        return value

    p.wrap(
        "capture", lambda data, call: call({**data, "output_item": nfc(data.get("output_item"))})
    )


@mutant("F4", "a custom tool output is not a tool-result continuation")
def m_custom_tool_output_genuine(p: Patcher) -> None:
    p.set(planner, "TOOL_OUTPUT_TYPES", frozenset(("function_call_output",)))


@mutant("F8", "a model in metadata does not override the configured model")
def m_model_override_ignored(p: Patcher) -> None:
    p.everywhere(overrides.requested_model, lambda configured, metadata: configured)


@mutant("E4", "whitespace around the text is malformed")
def m_outer_whitespace_refused(p: Patcher) -> None:
    original = jsontext.parse_strict_statement

    def mutated(text: str | bytes) -> object:
        chars = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        if chars.strip(" \t\r\n") != chars:
            return jsontext.TextRefused(Code.JSON_MALFORMED)
        return original(text)

    p.everywhere(original, mutated)


@mutant("R2", "redacted objects have their members sorted")
def m_redacted_members_sorted(p: Patcher) -> None:
    # Member order shows only in text: a redacted export's rewritten text blocks (H6). The
    # runner compares JSON values ignoring member order, so the `redact` operation cannot show it.
    def sort_texts(value: Any) -> Any:
        if isinstance(value, list):
            return [sort_texts(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: sort_texts(v) for k, v in value.items()}
        text = out.get("text")
        if out.get("type") == "text" and isinstance(text, str) and text.startswith("{"):
            try:
                parsed = json.loads(text)
            except ValueError:
                return out
            if isinstance(parsed, dict):
                out["text"] = json.dumps(
                    parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False
                )
        return out

    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None or data.get("mode") != "redacted":
            return result
        return OperationResult(output=sort_texts(result.output))

    p.wrap("export", wrapper)


@mutant("D7", "xAI also drops the ids of replayed reasoning items")
def m_xai_drops_reasoning_ids(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        target = data.get("target")
        if result.output is None or not (
            isinstance(target, Mapping) and target.get("provider") == "xai"
        ):
            return result
        items = [
            {k: v for k, v in i.items() if k != "id"} if i.get("type") == "reasoning" else i
            for i in result.output["input"]
        ]
        return OperationResult(output={**result.output, "input": items})

    p.wrap("replay", wrapper)


@mutant("H3", "a legacy record is counted as malformed")
def m_legacy_counts_malformed(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        counts = dict(result.output["counts"])
        counts["malformed"] += counts["legacy"]
        counts["legacy"] = 0
        return OperationResult(output={**result.output, "counts": counts})

    p.wrap("validate", wrapper)


@mutant("T1", "the ciphertext is counted as the bytes its base64 decodes to")
def m_ciphertext_decoded_bytes(p: Patcher) -> None:
    original = telemetry.replay_telemetry

    def mutated(request_input: Any, **kwargs: int) -> telemetry.ReplayTelemetry:
        items = list(request_input)
        counted = original(items, **kwargs)
        encrypted = 0
        for i in items:
            if isinstance(i, Mapping) and i.get("type") == "reasoning":
                value = i.get("encrypted_content")
                encrypted += len(value) * 3 // 4 if isinstance(value, str) else 0
        return dataclasses.replace(counted, reasoning_replay_encrypted_bytes=encrypted)

    p.everywhere(original, mutated)


@mutant("F6", "a record with effort null for an update-capable model is a missing record")
def m_null_effort_missing(p: Patcher) -> None:
    original = planner._records

    def mutated(messages: Any, model: str, update_capable: bool) -> Any:
        valid, diagnostics = original(messages, model, update_capable)
        if not update_capable:
            return valid, diagnostics
        silent = set()
        for index, message in enumerate(messages):
            record = _record_of(message) if message.role == "assistant" else None
            if (
                isinstance(record, cache_state.CacheStateRecord)
                and record.model == model
                and record.effort is None
            ):
                silent.add(index)
        return valid, [d for d in diagnostics if d.message_index not in silent]

    p.set(planner, "_records", mutated)


@mutant("E5", "only the exact legacy member set is a legacy minimal record")
def m_legacy_exact_members(p: Patcher) -> None:
    original = envelope.classify_unversioned

    def mutated(value: dict[str, Any]) -> Code:
        code = original(value)
        if code is Code.LEGACY_MINIMAL_RECORD and value.keys() != envelope.LEGACY_MINIMAL_MEMBERS:
            return Code.RAW_SDK_SNAPSHOT
        return code

    p.everywhere(original, mutated)


@mutant("H8", "a line reports one finding however many leaks it holds")
def m_one_finding_per_line(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        seen: set[object] = set()
        findings = []
        for finding in result.output["findings"]:
            if finding.get("line") not in seen:
                findings.append(finding)
            seen.add(finding.get("line"))
        return OperationResult(output={"findings": findings})

    p.wrap("scan", wrapper)


@mutant("P2", "a message whose replay blocks are all unreadable is left out with its own items")
def m_unreadable_message_dropped(p: Patcher) -> None:
    original_build = provider_input.build_replay_input

    def mutated(messages: Sequence[history.HistoryMessage], target: Any) -> Any:
        built = original_build(messages, target)
        if built.rejected is not None:
            return built
        unreadable = {
            index
            for index, message in enumerate(messages)
            if message.replay_blocks
            and len([d for d in built.diagnostics if d.message_index == index])
            == len(message.replay_blocks)
            and all(
                d.code not in _DEDUPE_CODES for d in built.diagnostics if d.message_index == index
            )
        }
        return provider_input.ReplayRequestInput(
            tuple(() if i in unreadable else items for i, items in enumerate(built.by_message)),
            built.diagnostics,
            built.deduplicated_exact,
            built.id_ciphertext_conflicts,
        )

    p.everywhere(original_build, mutated)


_DEDUPE_CODES: Final = frozenset((Code.DEDUPE_EXACT_DUPLICATE, Code.DEDUPE_ID_CIPHERTEXT_CONFLICT))


# ---------------------------------------------------------------------------------------------
# Trailing placement (SPEC F2, F4) and the items form (SPEC CL3)


@mutant("F2", "updates trail: stored ones replayed where they are, a change appended at the end")
def m_trailing_placement(p: Patcher) -> None:
    """The placement of a framework that appends its update at the end of each step's request
    (after the user message, and on tool-result steps) and replays the updates it stored there:
    the request-level effort as F1 gives it, no update derived before a user message."""
    original_plan = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        planned = original_plan(messages, settings)
        if (
            isinstance(planned, Code)
            or settings.transport is planner.PlanTransport.WEBSOCKET_CONTINUATION
            or settings.target_provider not in planner.GOVERNED_PROVIDERS
            or not overrides.is_update_capable(planned.request["model"], settings.update_capable)
        ):
            return planned
        target = provider_input.ReplayTarget(settings.target_provider)
        read = provider_input.read_replay_blocks(messages, target)
        parts = provider_input.message_inputs(messages, target, read)
        items = [item for part in parts for item in part]
        effective = planned.request["reasoning"]["effort"]
        for item in items:
            if item.get("type") == "configuration_update":
                effective = item["reasoning"]["effort"]
        desired = overrides.desired_effort(settings.desired_effort, settings.metadata)
        assert isinstance(desired, str)  # F8 admitted it: the model is update-capable
        if desired != effective:
            items.append(planner.configuration_update(desired))
        planned.request["input"] = items
        return planned

    p.everywhere(original_plan, plan)


@mutant("CL3", "in the items form, a message's reasoning items are sent before its other items")
def m_items_form_reasoning_first(p: Patcher) -> None:
    original = provider_input.message_inputs

    def mutated(messages: Any, target: Any, read: Any) -> Iterator[tuple[dict[str, Any], ...]]:
        for message, items in zip(messages, original(messages, target, read), strict=True):
            if not message.reasoning_in_items:
                yield items
                continue
            reasoning = tuple(i for i in items if i.get("type") == "reasoning")
            yield (*reasoning, *(i for i in items if i.get("type") != "reasoning"))

    p.everywhere(original, mutated)


@mutant("CL3", "in the items form, a diagnostic counts only the message's reasoning items")
def m_items_form_reasoning_ordinal(p: Patcher) -> None:
    def ordinal(messages: Any, message_index: int, item_index: int) -> int:
        items = messages[message_index].get("items", [])
        return sum(1 for i in items[:item_index] if i.get("type") == "reasoning")

    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        history_doc = data.get("history")
        if result.output is None or not isinstance(history_doc, dict):
            return result
        if history_doc.get("form") != "items":
            return result
        messages = history_doc["messages"]
        diagnostics = [
            {**d, "block_index": ordinal(messages, d["message_index"], d["block_index"])}
            if d["code"] != Code.CACHE_STATE_INVALID.value
            else d
            for d in result.output["diagnostics"]
        ]
        return _result({**result.output, "diagnostics": diagnostics})

    p.wrap("replay", wrapper)
    p.wrap("plan", wrapper)


# ---------------------------------------------------------------------------------------------
# Stored histories (SPEC §10)


@mutant("H1", "a history without messages is an empty history")
def m_missing_messages_empty(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        text = data.get("history_text")
        if isinstance(text, str):
            try:
                doc = json.loads(text)
            except ValueError:
                return call(data)
            if isinstance(doc, dict) and "messages" not in doc:
                return call({**data, "history_text": json.dumps({**doc, "messages": []})})
        return call(data)

    p.wrap("validate", wrapper)


@mutant("H2", "a redacted record counts as malformed")
def m_redacted_counts_malformed(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        counts = dict(result.output["counts"])
        counts["malformed"] += counts["redacted"]
        counts["redacted"] = 0
        return OperationResult(output={**result.output, "counts": counts})

    p.wrap("validate", wrapper)


@mutant("H3", "a history of legacy records replays as stored")
def m_legacy_replays(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        counts = result.output["counts"]
        if counts["legacy"] and not counts["malformed"] and not counts["redacted"]:
            return OperationResult(output={**result.output, "replays_as_stored": True})
        return result

    p.wrap("validate", wrapper)


def _plan_request_rewrite(change: Callable[[Mapping[str, Any], dict[str, Any]], None]) -> Apply:
    """A mutant that rewrites the request of every plan output; ``change`` sees the input."""

    def apply(p: Patcher) -> None:
        def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
            result = call(data)
            if result.output is None:
                return result
            request = dict(result.output["request"])
            change(data, request)
            return OperationResult(output={**result.output, "request": request})

        p.wrap("plan", wrapper)

    return apply


@mutant("P5", "a plan leaves store to the provider's default")
def m_no_store(p: Patcher) -> None:
    _plan_request_rewrite(lambda _data, request: request.pop("store", None))(p)


@mutant("P5", "a plan does not ask for the encrypted content")
def m_no_include(p: Patcher) -> None:
    _plan_request_rewrite(lambda _data, request: request.update(include=[]))(p)


@mutant("P5", "with no configuration, only the requests to openai send store false")
def m_defaults_store_for_openai_only(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None or data.get("target_provider") == "openai":
            return result
        request = {k: v for k, v in result.output["request"].items() if k != "store"}
        return OperationResult(output={**result.output, "request": request})

    p.wrap("defaults", wrapper)


class _EveryProvider:
    def __contains__(self, _provider: object) -> bool:
        return True


@mutant("F12", "section 9 governs every target provider, xai included")
def m_every_target_governed(p: Patcher) -> None:
    p.set(planner, "GOVERNED_PROVIDERS", _EveryProvider())


@mutant("F12", "only openai is governed: codex is treated as another provider")
def m_only_openai_governed(p: Patcher) -> None:
    p.set(planner, "GOVERNED_PROVIDERS", frozenset(("openai",)))


def _metadata_key(data: Mapping[str, Any], request: dict[str, Any]) -> None:
    metadata = data.get("metadata")
    key = metadata.get("prompt_cache_key") if isinstance(metadata, Mapping) else None
    if isinstance(key, str):
        request["prompt_cache_key"] = key


@mutant("F12", "another target provider sends metadata.prompt_cache_key")
def m_other_target_metadata_key(p: Patcher) -> None:
    _plan_request_rewrite(_metadata_key)(p)


def _without_providers(history: object) -> object:
    if not isinstance(history, Mapping):
        return history
    messages = history.get("messages")
    if not isinstance(messages, list):
        return history
    stripped = [
        {k: v for k, v in m.items() if k != "provider"} if isinstance(m, Mapping) else m
        for m in messages
    ]
    return {**{k: v for k, v in history.items() if k != "provider"}, "messages": stripped}


@mutant("P4", "recorded providers are ignored: every item is sent to the target")
def m_issuer_ignored(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        return call({**data, "history": _without_providers(data.get("history"))})

    p.wrap("replay", wrapper)
    p.wrap("plan", wrapper)


@mutant("ST3", "the display channel is never compared with the replay items")
def m_display_not_checked(p: Patcher) -> None:
    p.set(validation, "display_consistent", lambda _items, _texts: True)


@mutant("ST3", "the display blocks must be exactly the items' display texts")
def m_display_exact(p: Patcher) -> None:
    def exact(items: Sequence[ReasoningReplayItem], texts: Sequence[str]) -> bool:
        shown = [text for text in map(display.display_text, items) if text is not None]
        return shown == list(texts)

    p.set(validation, "display_consistent", exact)


@mutant("ST3", "an item's parts are joined by one line feed")
def m_display_single_newline(p: Patcher) -> None:
    p.set(display, "PART_SEPARATOR", "\n")


@mutant("ST3", "parts are not trimmed")
def m_display_untrimmed(p: Patcher) -> None:
    p.set(display, "TRIMMED", "")


@mutant("H3", "warnings make a history not replay as stored")
def m_warnings_block_replay(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        if result.output["findings"]:
            return OperationResult(output={**result.output, "replays_as_stored": False})
        return result

    p.wrap("validate", wrapper)


@mutant("H3", "blocks another provider issued are not counted as not replaying")
def m_provider_mismatch_uncounted(p: Patcher) -> None:
    # a verdict (SPEC.md#profiles): the verdict profile must kill it too, not only diagnostics
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        return OperationResult(output={**result.output, "provider_mismatch": 0})

    p.wrap("validate", wrapper)


# ---------------------------------------------------------------------------------------------
# Provider names (SPEC P4, §18.2), the store and include of P5, interleaved reasoning (ST1),
# conflicts in validate (H3), the instance key (F8) and canonicalizers (C5): issue 19


@mutant("P4", "route names are issuers: responses is not openai (no registry)")
def m_no_provider_name_registry(p: Patcher) -> None:
    p.set(providers, "PROVIDER_NAME_REGISTRY", {})


def _drop_provider_names(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        return call({k: v for k, v in data.items() if k != "provider_names"})

    for operation in ("replay", "plan", "validate"):
        p.wrap(operation, wrapper)


@mutant("P4", "the caller's provider_names are ignored")
def m_provider_names_ignored(p: Patcher) -> None:
    _drop_provider_names(p)


def _issuer_rule(rule: Callable[[Mapping[str, str], str], str]) -> Apply:
    def apply(p: Patcher) -> None:
        def issuer_of(self: providers.ProviderNames, name: str) -> str:
            return rule(self.caller, name)

        p.set(providers.ProviderNames, "issuer_of", issuer_of)

    return apply


@mutant("P4", "the registry's entry wins over the caller's for a name it lists")
def m_registry_wins(p: Patcher) -> None:
    registry = providers.PROVIDER_NAME_REGISTRY
    _issuer_rule(lambda caller, name: registry.get(name, caller.get(name, name)))(p)


@mutant("P4", "an issuer is mapped again: the caller's gateway → responses is openai")
def m_issuer_mapped_twice(p: Patcher) -> None:
    registry = providers.PROVIDER_NAME_REGISTRY

    def twice(caller: Mapping[str, str], name: str) -> str:
        first = caller.get(name, registry.get(name, name))
        return caller.get(first, registry.get(first, first))

    _issuer_rule(twice)(p)


@mutant("P4", "the target provider is compared as written, only recorded names are mapped")
def m_target_not_mapped(p: Patcher) -> None:
    p.set(provider_input.ReplayTarget, "issuer", property(lambda self: self.provider))


@mutant("D1", "the dedupe operation compares provider names, not issuers")
def m_dedupe_by_name(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        entries = data.get("entries")
        if not isinstance(entries, list):
            return call(data)
        named = [
            {**e, "provider": f"name:{e['provider']}"}
            if isinstance(e, dict) and isinstance(e.get("provider"), str)
            else e
            for e in entries
        ]
        return call({**data, "entries": named})

    p.wrap("dedupe", wrapper)


@mutant("F12", "whether section 9 governs is decided on the target name as written")
def m_governed_by_name(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        target = data.get("target_provider", "openai")
        if not isinstance(target, str) or target in planner.GOVERNED_PROVIDERS:
            return call(data)
        names = data.get("provider_names")
        names = dict(names) if isinstance(names, Mapping) else {}
        return call({**data, "provider_names": {**names, target: target}})

    p.wrap("plan", wrapper)


@mutant("H3", "the file's provider is compared as written, not mapped to its issuer")
def m_file_provider_not_mapped(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        provider = data.get("provider", "openai")
        names = data.get("provider_names")
        names = dict(names) if isinstance(names, Mapping) else {}
        return call({**data, "provider_names": {**names, provider: provider}})

    p.wrap("validate", wrapper)


@mutant("H3", "an id/ciphertext conflict is an error, as fast-agent's id dedupe would have it")
def m_conflict_is_an_error(p: Patcher) -> None:
    p.set(validation, "_WARNINGS", validation._WARNINGS - {Code.DEDUPE_ID_CIPHERTEXT_CONFLICT})


def _plan_settings_rewrite(change: Callable[[Any], Any]) -> Apply:
    def apply(p: Patcher) -> None:
        original_plan = planner.plan_request

        def plan(messages: Any, settings: Any) -> Any:
            return original_plan(messages, change(settings))

        p.everywhere(original_plan, plan)

    return apply


@mutant("P5", "the compact endpoint also gets store false and the include entry")
def m_compact_gets_store_include(p: Patcher) -> None:
    def change(data: Mapping[str, Any], request: dict[str, Any]) -> None:
        if data.get("endpoint") == "compact":
            request.update(store=False, include=[planner.REPLAY_INCLUDE])

    _plan_request_rewrite(change)(p)


@mutant("P5", "a model declared without reasoning still gets the include entry")
def m_include_for_every_model(p: Patcher) -> None:
    _plan_settings_rewrite(lambda s: dataclasses.replace(s, reasoning_model=True))(p)


@mutant("P5", "a model declared without reasoning gets neither store nor include")
def m_no_store_without_reasoning(p: Patcher) -> None:
    def change(data: Mapping[str, Any], request: dict[str, Any]) -> None:
        if data.get("reasoning_model") is False:
            request.pop("store", None)

    _plan_request_rewrite(change)(p)


def _check_overrides_governed(decide: Callable[[bool], bool]) -> Apply:
    def apply(p: Patcher) -> None:
        original = overrides.check_overrides

        def mutated(*args: Any, governed: bool = True) -> Code | None:
            return original(*args, governed=decide(governed))

        p.everywhere(original, mutated)

    return apply


@mutant("F8", "the instance key is checked even where an explicit key replaces it")
def m_instance_key_always_checked(p: Patcher) -> None:
    _check_overrides_governed(lambda _governed: False)(p)


@mutant("F8", "an explicit key spares the instance key's check whatever the target")
def m_explicit_key_spares_every_target(p: Patcher) -> None:
    _check_overrides_governed(lambda _governed: True)(p)


@mutant("ST1", "a run of assistant messages sends all its reasoning before its own items")
def m_run_reasoning_first(p: Patcher) -> None:
    original = provider_input.message_inputs

    def hoisted(messages: Any, target: Any, read: Any) -> Iterator[tuple[dict[str, Any], ...]]:
        parts = list(original(messages, target, read))
        out = list(parts)
        start = 0
        for index in range(len(messages) + 1):
            in_run = index < len(messages) and messages[index].role == "assistant"
            if in_run:
                continue
            run = range(start, index)
            if len(run) > 1:
                own = [provider_input._own_items(messages[i], target) for i in run]
                replayed = [parts[i][: len(parts[i]) - len(own[k])] for k, i in enumerate(run)]
                first = run[0]
                out[first] = (*(x for r in replayed for x in r), *(x for o in own for x in o))
                for i in run[1:]:
                    out[i] = ()
            start = index + 1
        yield from out

    p.set(provider_input, "message_inputs", hoisted)
    p.set(planner, "message_inputs", hoisted)


@mutant("C5", "a native compaction item is adapted into a reasoning item and captured")
def m_compaction_captured(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        item = data.get("output_item")
        if isinstance(item, dict) and item.get("type") == "compaction":
            item = {**item, "type": "reasoning", "summary": item.get("summary", [])}
        return call({**data, "output_item": item})

    p.wrap("capture", wrapper)


@mutant("C5", "another canonicalizer's record is read as a reasoning envelope")
def m_other_schema_read(p: Patcher) -> None:
    sibling = "fast-agent.openai-responses.compaction-replay"

    def adopt(value: object) -> object:
        if isinstance(value, dict) and value.get("schema") == sibling:
            kept = {k: v for k, v in value.items() if k != "origin"}
            return {**kept, "schema": envelope.SCHEMA_NAME}
        return value

    _envelope_checker(adopt)(p)


@mutant("C5", "a missing id is invented from the ciphertext rather than refused")
def m_id_invented(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        item = data.get("output_item")
        if isinstance(item, dict) and item.get("type") == "reasoning" and "id" not in item:
            item = {**item, "id": "rs_invented"}
        return call({**data, "output_item": item})

    p.wrap("capture", wrapper)


@mutant("H4", "group bits alone are not too open")
def m_group_bits_ignored(p: Patcher) -> None:
    p.set(validation, "GROUP_OTHER_BITS", 0o007)


@mutant("H4", "the execute bit alone is not too open")
def m_execute_bit_ignored(p: Patcher) -> None:
    p.set(validation, "GROUP_OTHER_BITS", 0o066)


@mutant("H6", "an export carries no marker")
def m_export_without_marker(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        exported = {
            k: v for k, v in result.output["history"].items() if k != "reasoning_replay_export"
        }
        return OperationResult(output={"history": exported})

    p.wrap("export", wrapper)


@mutant("H6", "a redacted export keeps the display channel reasoning unless asked")
def m_redacted_export_keeps_display(p: Patcher) -> None:
    p.wrap(
        "export",
        lambda data, call: call({**data, "drop_display_reasoning": False}),
    )


@mutant("H6", "a resumable export redacts the replay channel too")
def m_resumable_export_redacts(p: Patcher) -> None:
    p.wrap(
        "export",
        lambda data, call: (
            call({**data, "mode": "redacted"}) if data.get("mode") == "resumable" else call(data)
        ),
    )


def _blocks(message: dict[str, Any], channel: str) -> list[Any]:
    channels = message.get("channels")
    return (channels.get(channel) or []) if isinstance(channels, dict) else []


def _read_display(p: Patcher, duplicated: Callable[[list[dict[str, Any]]], bool]) -> None:
    """A reading of H6's ``display_reasoning``: ``duplicated`` when ``duplicated(messages)``."""

    def reading(history: dict[str, Any]) -> export.DisplayReasoning:
        if duplicated(history["messages"]):
            return export.DisplayReasoning.DUPLICATED
        return export.DisplayReasoning.NONE

    p.set(export, "display_reasoning", reading)


def _any_resumable(blocks: list[Any]) -> bool:
    return any(map(export._is_resumable_block, blocks))


def _holds_both(
    message: dict[str, Any],
    display_block: Callable[[object], bool] = lambda block: True,  # SPEC H6: any block counts
    replay_blocks: Callable[[list[Any]], bool] = _any_resumable,
) -> bool:
    return (
        message["role"] == "assistant"
        and any(map(display_block, _blocks(message, envelope.DISPLAY_CHANNEL)))
        and replay_blocks(_blocks(message, envelope.REPLAY_CHANNEL))
    )


@mutant("H6", "display_reasoning is duplicated whenever a display channel holds a block")
def m_duplicated_whenever_display(p: Patcher) -> None:
    _read_display(p, lambda ms: any(_blocks(m, envelope.DISPLAY_CHANNEL) for m in ms))


@mutant("H6", "the two channels count on any two assistant messages of the history")
def m_duplicated_across_messages(p: Patcher) -> None:
    def duplicated(ms: list[dict[str, Any]]) -> bool:
        assistants = [m for m in ms if m["role"] == "assistant"]
        return any(_blocks(m, envelope.DISPLAY_CHANNEL) for m in assistants) and any(
            _any_resumable(_blocks(m, envelope.REPLAY_CHANNEL)) for m in assistants
        )

    _read_display(p, duplicated)


@mutant("H6", "a user message holding both channels counts too")
def m_duplicated_on_user_messages(p: Patcher) -> None:
    _read_display(p, lambda ms: any(_holds_both({**m, "role": "assistant"}) for m in ms))


@mutant("H6", "any replay block counts, resumable or not")
def m_duplicated_any_replay_block(p: Patcher) -> None:
    _read_display(p, lambda ms: any(_holds_both(m, replay_blocks=bool) for m in ms))


@mutant("H6", "every replay block must be resumable, as for ST3's check")
def m_duplicated_every_replay_block_resumable(p: Patcher) -> None:
    def every(blocks: list[Any]) -> bool:
        return bool(blocks) and all(map(export._is_resumable_block, blocks))

    _read_display(p, lambda ms: any(_holds_both(m, replay_blocks=every) for m in ms))


@mutant("H6", "only a display text block with text counts")
def m_duplicated_needs_display_text(p: Patcher) -> None:
    def has_text(block: object) -> bool:
        return isinstance(block, dict) and bool(block.get("text"))

    _read_display(p, lambda ms: any(_holds_both(m, display_block=has_text) for m in ms))


@mutant("H6", "a redacted export's marker says display_reasoning too")
def m_redacted_marker_says_display(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None or data.get("mode") != "redacted":
            return result
        exported = dict(result.output["history"])
        marker = {**exported["reasoning_replay_export"], "display_reasoning": "duplicated"}
        exported["reasoning_replay_export"] = marker
        return OperationResult(output={"history": exported})

    p.wrap("export", wrapper)


@mutant("H8", "a ciphertext of 16 characters is too short to report")
def m_min_ciphertext_17(p: Patcher) -> None:
    p.set(scan, "MIN_CIPHERTEXT_CHARS", 17)


@mutant("H8", "a ciphertext of 15 characters is reported")
def m_min_ciphertext_15(p: Patcher) -> None:
    p.set(scan, "MIN_CIPHERTEXT_CHARS", 15)


@mutant("H8", "the name encrypted_content is matched case-sensitively")
def m_scan_case_sensitive(p: Patcher) -> None:
    p.set(scan, "is_ciphertext_name", lambda name: name == "encrypted_content")


@mutant("H8", "a Fernet-prefixed run needs more than 100 characters")
def m_scan_fernet_longer(p: Patcher) -> None:
    p.set(text_forms, "MIN_FERNET_CHARS", 101)


@mutant("H8", "a long run needs no digit to be a ciphertext by its shape")
def m_scan_long_run_two_classes(p: Patcher) -> None:
    p.set(text_forms, "_DIGIT", re.compile(r"[\s\S]"))


@mutant("H8", "a file that is not text is skipped without a finding")
def m_scan_not_text_skipped(p: Patcher) -> None:
    original = scan.scan_decoded
    p.everywhere(scan.scan_text, lambda text: tuple(original(text)))


@mutant("H8", "encoded texts are not decoded")
def m_scan_no_decodings(p: Patcher) -> None:
    p.set(scan, "percent_decoded", lambda text: None)
    p.set(scan, "references_decoded", lambda text: None)
    p.set(scan, "base64_decoded", lambda run: None)


@mutant("H8", "a value cut off before its closing quote is no finding")
def m_scan_truncated_ignored(p: Patcher) -> None:
    original = scan.read_fragment

    def mutated(text: str, start: int, backslashes: int) -> scan.Fragment:
        found = original(text, start, backslashes)
        return found if found.terminated else scan.Fragment("", found.value_end, found.end)

    p.set(scan, "read_fragment", mutated)


@mutant("H8", "a file is read line by line only: a colon on the next line is missed")
def m_scan_lines_only(p: Patcher) -> None:
    p.set(scan, "_HEAD_AT_END", re.compile(r"(?!)"))


@mutant("H6", "text forms that are not JSON are left as they are")
def m_export_no_text_forms(p: Patcher) -> None:
    p.set(text_redaction, "assignments", lambda gap: iter(()))


@mutant("H8", "embedded (escaped) envelopes are not looked into")
def m_scan_not_embedded(p: Patcher) -> None:
    p.set(scan, "_embedded", lambda text, decodings, decoded: iter(()))


# ---------------------------------------------------------------------------------------------
# Readings decided for issue 19, each recorded in conformance/readings/spec-readings.yaml

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# An ill-formed lead and the unit after it: a lone high surrogate, or a UTF-8 lead byte that is
# not UTF-8, as the reader's statement holds it (surrogateescape).
_ILL_FORMED_LEAD_AND_NEXT: Final = re.compile("[\ud800-\udbff\udcc2-\udcf4].", re.DOTALL)


def _replaced(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as U1 measures and hashes it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


@mutant(
    "E4-limits",
    "the depth scan decodes leniently: a lone lead byte or high surrogate takes the next unit",
)
def m_depth_scan_bad_byte_swallows_next(p: Patcher) -> None:
    original = jsontext.nesting_depth_exceeds

    def mutated(text: str, limit: int = jsontext.MAX_DEPTH) -> bool:
        return original(_ILL_FORMED_LEAD_AND_NEXT.sub("\ufffd", text), limit)

    p.everywhere(original, mutated)


def _depth_scan(*, escapes: bool) -> Callable[..., bool]:
    """E4.1's scan where a quote right after a backslash never ends a string literal, even when
    that backslash is itself escaped (``escapes``), or where a backslash escapes nothing."""

    def exceeds(text: str, limit: int = jsontext.MAX_DEPTH) -> bool:
        depth, in_string, previous = 0, False, ""
        for character in text:
            if in_string:
                in_string = character != '"' or (escapes and previous == "\\")
            elif character == '"':
                in_string = True
            elif character in "[{":
                depth += 1
                if depth > limit:
                    return True
            elif character in "]}" and depth:
                depth -= 1
            previous = character
        return False

    return exceeds


@mutant("E4-limits", "a quote after a backslash is escaped, even when the backslash is escaped")
def m_depth_scan_quote_after_any_backslash(p: Patcher) -> None:
    p.everywhere(jsontext.nesting_depth_exceeds, _depth_scan(escapes=True))


@mutant("E4-limits", "a backslash escapes nothing in the depth scan: the next quote ends a string")
def m_depth_scan_no_escapes(p: Patcher) -> None:
    p.everywhere(jsontext.nesting_depth_exceeds, _depth_scan(escapes=False))


@mutant(
    "E4-limits", "an unterminated string literal hides nothing: the brackets after its quote count"
)
def m_depth_scan_unterminated_string_counts(p: Patcher) -> None:
    p.set(jsontext, "_DEPTH_TOKEN", re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL))


@mutant("P2", "a replay leaves a stored configuration update out, as a plan does (F2)")
def m_replay_drops_stored_updates(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None:
            return result
        sent = [i for i in result.output["input"] if i.get("type") != "configuration_update"]
        return OperationResult(output={**result.output, "input": sent})

    p.wrap("replay", wrapper)


@mutant("F9", "a continuation reports only the diagnostics of the messages it sends")
def m_continuation_tail_diagnostics(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        if result.output is None or "previous_response_id" not in result.output["request"]:
            return result
        messages = data["history"]["messages"]
        last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
        tail = [d for d in result.output["diagnostics"] if d["message_index"] > last]
        return OperationResult(output={**result.output, "diagnostics": tail})

    p.wrap("plan", wrapper)


@mutant("C2", "an empty content array of the output item is kept in the envelope")
def m_capture_keeps_empty_content(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        item = data.get("output_item")
        if result.output is None or not (isinstance(item, Mapping) and item.get("content") == []):
            return result
        envelope_value = json.loads(result.output["envelope_text"])
        envelope_value["item"]["content"] = []
        text = json.dumps(envelope_value, separators=(",", ":"), ensure_ascii=False)
        return OperationResult(output={**result.output, "envelope_text": text})

    p.wrap("capture", wrapper)


@mutant("T1", "only replayed items are counted, not a message's own reasoning items")
def m_own_reasoning_not_counted(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        result = call(data)
        history_value = data.get("history")
        messages = history_value.get("messages") if isinstance(history_value, Mapping) else None
        if result.output is None or not isinstance(messages, list):
            return result
        own = [
            item
            for message in messages
            if isinstance(message, Mapping)
            for item in message.get("items", ())
            if isinstance(item, Mapping) and item.get("type") == "reasoning"
        ]
        counters = result.output["counters"]
        counted = telemetry.replay_telemetry(
            [item for item in result.output["input"] if item not in own],
            deduplicated_exact=counters["replay_deduplicated_exact_count"],
            id_ciphertext_conflicts=counters["replay_id_ciphertext_conflict_count"],
        )
        return OperationResult(output={**result.output, "counters": counted.to_json()})

    p.wrap("replay", wrapper)


@mutant("U1", "ids are compared after U1's replacement: x\\ud800 and x\\ufffd are one id")
def m_ids_compared_after_replacement(p: Patcher) -> None:
    def wrapper(data: Mapping[str, Any], call: Handler) -> OperationResult:
        entries = data.get("entries")
        if not isinstance(entries, list):
            return call(data)
        replaced = [
            {**e, "item": {**e["item"], "id": _replaced(e["item"]["id"])}}
            if isinstance(e, Mapping)
            and isinstance(e.get("item"), Mapping)
            and isinstance(e["item"].get("id"), str)
            else e
            for e in entries
        ]
        return call({**data, "entries": replaced})

    p.wrap("dedupe", wrapper)


@mutant("U1", "a raw lone surrogate in a cache-state record's text is read as U+FFFD")
def m_record_surrogate_replaced(p: Patcher) -> None:
    original = cache_state.read_cache_state

    def mutated(blocks: object = ()) -> object:
        if isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], Mapping):
            text = blocks[0].get("text")
            if isinstance(text, str):
                blocks = [{**blocks[0], "text": _replaced(text)}]
        return original(blocks)

    p.everywhere(original, mutated)


@mutant("U1", "the diagnostic view's id has each lone surrogate replaced by U+FFFD")
def m_view_id_replaced(p: Patcher) -> None:
    original = redaction.redact_reasoning_replay_for_diagnostics

    def mutated(item: Any) -> dict[str, Any]:
        view = original(item)
        if isinstance(view["id"], str):
            view["id"] = _replaced(view["id"])
        return view

    p.everywhere(original, mutated)


@mutant("F12", "F8's update-capable rows apply by the registry, whatever the target provider")
def m_f8_rows_for_every_target(p: Patcher) -> None:
    original = planner.plan_request

    def plan(messages: Any, settings: planner.PlanSettings) -> Any:
        rejected = overrides.check_overrides(
            settings.model,
            settings.desired_effort,
            settings.instance_key,
            settings.metadata,
            settings.update_capable,
        )
        return rejected if rejected is not None else original(messages, settings)

    p.everywhere(original, plan)


@mutant("F9", "any response_id but null is a response id: an empty string or a number continues")
def m_any_response_id_continues(p: Patcher) -> None:
    original = history.history_from_json

    def read(raw: object) -> tuple[history.HistoryMessage, ...]:
        messages = original(raw)
        stored = raw.get("messages") if isinstance(raw, Mapping) else None
        if not isinstance(stored, list):
            return messages
        return tuple(
            dataclasses.replace(m, response_id=s.get("response_id"))
            if isinstance(s, Mapping)
            else m
            for m, s in zip(messages, stored, strict=True)
        )

    def transport(messages: Any, planned: Any, chosen: Any) -> dict[str, Any]:
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
        continues = chosen is planner.PlanTransport.WEBSOCKET_CONTINUATION
        if continues and last is not None and messages[last].response_id is not None:
            return {
                "input": planned.after(last),
                "previous_response_id": messages[last].response_id,
            }
        return {"input": planned.items}

    p.everywhere(original, read)
    p.set(planner, "_input_for_transport", transport)


@mutant("H1", "a byte-order mark before a history file is skipped")
def m_history_bom_skipped(p: Patcher) -> None:
    original = history_files.parse_json_file

    def mutated(data: str | bytes) -> object:
        if isinstance(data, bytes):
            return original(data.removeprefix(b"\xef\xbb\xbf"))
        return original(data.removeprefix("\ufeff"))

    p.everywhere(original, mutated)


@mutant("H1", "a member named twice in a history file is read last-wins, as Python's json does")
def m_history_duplicates_last_wins(p: Patcher) -> None:
    p.set(history_files, "_refuse_duplicates", dict)


@mutant("H1", "NaN and Infinity in a history file are numbers")
def m_history_nan_accepted(p: Patcher) -> None:
    p.set(history_files, "_refuse_constant", float)


def _holds_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if _LONE_SURROGATE.search(current):
                return True
        elif isinstance(current, dict):
            stack.extend(current)
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return False


@mutant("H1", "an escaped lone surrogate anywhere in a history file makes it malformed")
def m_history_escaped_surrogate_malformed(p: Patcher) -> None:
    original = history_files.parse_json_file

    def mutated(data: str | bytes) -> object:
        value = original(data)
        if not isinstance(value, history_files.HistoryFileProblem) and _holds_surrogate(value):
            return history_files.HistoryFileProblem(Code.HISTORY_MALFORMED, "lone surrogate")
        return value

    p.everywhere(original, mutated)


_OPTIONAL_MEMBERS: Final = (
    "channels",
    "tool_calls",
    "tool_results",
    "provider",
    "stop_reason",
    "phase",
    "is_template",
    "timestamp",
)


@mutant("H1", "an optional member of a message set to null is malformed, not absent")
def m_history_null_member_malformed(p: Patcher) -> None:
    original = history_files._message

    def mutated(index: int, raw: object) -> object:
        if isinstance(raw, dict) and any(
            name in raw and raw[name] is None for name in _OPTIONAL_MEMBERS
        ):
            return history_files.HistoryFileProblem(Code.HISTORY_MALFORMED, "null member")
        return original(index, raw)

    p.set(history_files, "_message", mutated)


def _scan_without_misplaced(*, report: bool) -> Apply:
    def apply(p: Patcher) -> None:
        original = validation._scan_blocks

        def mutated(messages: Any) -> Any:
            scan_found = original(messages)
            if not report:
                scan_found.located = [
                    entry
                    for entry in scan_found.located
                    if entry[3].code is not Code.REPLAY_CHANNEL_MISPLACED
                ]
            scan_found.misplaced = 0
            return scan_found

        p.set(validation, "_scan_blocks", mutated)

    return apply


@mutant("H3", "replay channels of other messages are not read, so nothing is reported of them")
def m_misplaced_channels_not_reported(p: Patcher) -> None:
    _scan_without_misplaced(report=False)(p)


@mutant("H3", "a history whose user message holds replay blocks still replays as stored")
def m_misplaced_channels_replay_as_stored(p: Patcher) -> None:
    _scan_without_misplaced(report=True)(p)


@mutant("H3", "a redacted record is an error, as every code of E6 but the legacy ones")
def m_redacted_record_error(p: Patcher) -> None:
    original = validation.severity_of

    def mutated(code: Code) -> validation.Severity:
        return validation.Severity.ERROR if code is Code.REDACTED_RECORD else original(code)

    p.set(validation, "severity_of", mutated)


def _display_text_reading(
    *,
    content_fallback: bool = False,
    drop_before_trim: bool = False,
    body_of_untrimmed: bool = False,
    join_bodies: bool = False,
) -> Apply:
    """ST3's display text under another reading of one of its steps."""

    def display_text(item: ReasoningReplayItem) -> str | None:
        texts = [text for text in item.summary if text] if drop_before_trim else list(item.summary)
        if content_fallback and not [text for text in item.summary if text]:
            texts = [text for text in item.content or () if text]
        kept = []
        for text in texts:
            trimmed = text.strip(display.TRIMMED)
            body = display._body(text if body_of_untrimmed else trimmed).strip(display.TRIMMED)
            if body == display.EMPTY_SUMMARY_PLACEHOLDER or (not trimmed and not drop_before_trim):
                continue
            kept.append(body if join_bodies else trimmed)
        return display.PART_SEPARATOR.join(kept) or None

    def apply(p: Patcher) -> None:
        p.set(display, "display_text", display_text)

    return apply


@mutant("ST3", "with no summary text, the content parts give the display text")
def m_display_content_fallback(p: Patcher) -> None:
    _display_text_reading(content_fallback=True)(p)


@mutant("ST3", "empty parts are dropped before trimming; a part of spaces stays, empty")
def m_display_empty_before_trim(p: Patcher) -> None:
    _display_text_reading(drop_before_trim=True)(p)


@mutant("ST3", "the <!-- --> body test looks at the part as stored, before trimming")
def m_display_body_test_untrimmed(p: Patcher) -> None:
    _display_text_reading(body_of_untrimmed=True)(p)


@mutant("ST3", "the parts' bodies are joined, without their bold titles")
def m_display_joins_bodies(p: Patcher) -> None:
    _display_text_reading(join_bodies=True)(p)


@mutant("ST3", "display blocks are trimmed before they are compared")
def m_display_blocks_trimmed(p: Patcher) -> None:
    def consistent(items: Sequence[ReasoningReplayItem], texts: Sequence[str]) -> bool:
        return display.display_consistent(items, [t.strip(display.TRIMMED) for t in texts])

    p.set(validation, "display_consistent", consistent)


# ---------------------------------------------------------------------------------------------
# Readings of the Rust implementation's first-run notes (conformance/adapters/rust/
# FIRST-RUN-NOTES.md), each recorded in conformance/readings/spec-notes.yaml


@mutant("F4", "content counts only when it holds text: an array of empty text parts is no turn")
def m_empty_text_parts_not_genuine(p: Patcher) -> None:
    def has_text(item: Mapping[str, Any]) -> bool:
        content = item.get("content")
        if isinstance(content, str):
            return bool(content)
        return isinstance(content, list) and any(
            not isinstance(part, Mapping) or part.get("text") != "" for part in content
        )

    p.set(planner, "_has_content", has_text)


@mutant("F4", "the message's role decides: any message item of a user message is its user item")
def m_message_items_of_any_role_count(p: Patcher) -> None:
    p.set(planner, "_is_user_message_item", lambda item: item.get("type") == "message")


@mutant("F3", "the look-ahead ends at the next message that is not an assistant message")
def m_lookahead_stops_at_any_message(p: Patcher) -> None:
    def turn_efforts(messages: Any, records: Mapping[int, Any], desired: str) -> dict[int, Any]:
        efforts: dict[int, Any] = {}
        decider: Any = desired
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if planner.is_genuine_user_turn(message):
                efforts[index] = decider
            if message.role == "assistant":
                record = records.get(index)
                decider = record.effort if record is not None else None
            else:  # a continuation, a genuine turn or another role: the look-ahead ends
                decider = None
        return efforts

    p.set(planner, "_turn_efforts", turn_efforts)


@mutant("F11", "a metadata effort that is not a string does not set the desired effort")
def m_non_string_desired_effort_ignored(p: Patcher) -> None:
    original = overrides.desired_effort

    def mutated(configured: object, metadata: Mapping[str, Any]) -> object:
        reasoning = metadata.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, Mapping) else None
        if effort is not None and not isinstance(effort, str):
            return configured
        return original(configured, metadata)

    p.everywhere(original, mutated)


@mutant(
    "F6", "a record of a model that is not update-capable may hold any effort (none is checked)"
)
def m_other_model_record_effort_allowed(p: Patcher) -> None:
    original = cache_state.effort_allowed

    def mutated(effort: object, update_capable: bool) -> bool:
        return original(effort, update_capable) or (not update_capable and isinstance(effort, str))

    p.everywhere(original, mutated)


@mutant("F8", "a stored configuration update rejects a plan for the compact endpoint")
def m_stored_update_rejects_compact(p: Patcher) -> None:
    original = planner.plan_request

    def plan(messages: Any, settings: Any) -> Any:
        stored = any(
            item.get("type") == "configuration_update"
            for message in messages
            for item in message.items
        )
        if settings.endpoint is planner.Endpoint.COMPACT and stored:
            return Code.PLAN_COMPACT_WITH_UPDATES
        return original(messages, settings)

    p.everywhere(original, plan)


def _channels_edited(
    edit: Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]],
) -> Apply:
    """A mutant of H1's message shape: ``edit`` splits a message's channels into those the
    shape check sees and those it is not shown (and that the message keeps as they are)."""

    def apply(p: Patcher) -> None:
        original = history_files._message

        def mutated(index: int, raw: object) -> object:
            if not isinstance(raw, dict) or not isinstance(raw.get("channels"), dict):
                return original(index, raw)
            checked, kept = edit(raw["channels"])
            found = original(index, {**raw, "channels": checked})
            if isinstance(found, history_files.HistoryFileProblem):
                return found
            role, channels, provider = found
            return role, {**channels, **kept}, provider

        p.set(history_files, "_message", mutated)

    return apply


@mutant("H1", "in a file, a cache-state channel that is not an array is a malformed record")
def m_file_cache_state_channel_is_a_record(p: Patcher) -> None:
    name = cache_state.CACHE_STATE_CHANNEL

    def edit(channels: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        if name in channels and not isinstance(channels[name], list):
            return {k: v for k, v in channels.items() if k != name}, {name: channels[name]}
        return channels, {}

    _channels_edited(edit)(p)


@mutant("H1", "a channel set to null is absent, as an optional member of a message is")
def m_null_channel_absent(p: Patcher) -> None:
    _channels_edited(lambda channels: ({k: v for k, v in channels.items() if v is not None}, {}))(p)


@mutant("H3", "a history text given as characters is parsed with its lone surrogates")
def m_surrogate_history_text_parsed(p: Patcher) -> None:
    original = history_files.parse_json_file_exhaustively

    def mutated(data: str | bytes) -> object:
        if isinstance(data, str):
            try:
                data.encode("utf-8")
            except UnicodeEncodeError:
                try:
                    return json.loads(
                        data,
                        object_pairs_hook=history_files._refuse_duplicates,
                        parse_constant=history_files._refuse_constant,
                    )
                except (ValueError, history_files._NonJsonToken, history_files._DuplicateMember):
                    return history_files.HistoryFileProblem(Code.HISTORY_MALFORMED, "not JSON")
        return original(data)

    p.set(history_files, "parse_json_file_exhaustively", mutated)


def _title_search_from(start: int) -> Apply:
    def body(text: str) -> str:
        if not text.startswith("**"):
            return text
        closing = text.find("**", start)
        if closing < 3:
            return text
        rest = text[closing + 2 :]
        return rest if rest.startswith(("\n", "\r")) else text

    return lambda p: p.set(display, "_body", body)


@mutant("ST3", "a title's closing ** is the first found at index 3 or later")
def m_display_title_search_from_3(p: Patcher) -> None:
    _title_search_from(3)(p)


@mutant("ST3", "a title's closing ** is the next found from index 1, overlapping the opening")
def m_display_title_search_from_1(p: Patcher) -> None:
    _title_search_from(1)(p)


@mutant("ST3", "only the blocks a request would send are checked against the display channel")
def m_display_checks_replayed_blocks_only(p: Patcher) -> None:
    original = validation.validate_history

    def mutated(data: str | bytes, **kw: Any) -> validation.FileReport:
        report = original(data, **kw)
        mismatch = Code.DISPLAY_REPLAY_MISMATCH
        messages = history_files.read_message_channels(data)
        if isinstance(messages, history_files.HistoryFileProblem):
            return report
        names = kw.get("provider_names", providers.REGISTRY_ONLY)
        issuer = names.issuer_of(kw.get("provider", "openai"))
        skipped = {
            f.message_index for f in report.findings if f.code is Code.DEDUPE_EXACT_DUPLICATE
        } | {
            index
            for index, (_role, _channels, recorded) in enumerate(messages)
            if recorded is not None and names.issuer_of(recorded) != issuer
        }
        kept = tuple(
            f for f in report.findings if f.code is not mismatch or f.message_index not in skipped
        )
        return dataclasses.replace(report, findings=kept)

    p.everywhere(original, mutated)


@mutant("H2", "a block text is read leniently for its view: duplicates last-wins, any depth")
def m_view_read_leniently(p: Patcher) -> None:
    original = export.redacted_record_text

    def mutated(text: str) -> str:
        verdict = reader.parse_reasoning_replay_envelope(text)
        if verdict.item is not None or verdict.code in (None, Code.REDACTED_RECORD):
            return original(text)
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        record = export.redacted_record(verdict.code.value, export._view_of_value(value))
        return text_redaction.redact_text(text_redaction.compact_json(record))

    p.set(export, "redacted_record_text", mutated)


@mutant("H2", "an envelope whose item is not an object has no view")
def m_view_null_unless_item_object(p: Patcher) -> None:
    original = export._view_of_value

    def mutated(value: object) -> Any:
        if isinstance(value, dict) and "item" in value and not isinstance(value["item"], dict):
            return None
        return original(value)

    p.set(export, "_view_of_value", mutated)


@mutant("H2", "only an item of type reasoning has a view")
def m_view_only_reasoning_items(p: Patcher) -> None:
    original = export._view_of_value

    def mutated(value: object) -> Any:
        item = value.get("item") if isinstance(value, dict) else None
        if isinstance(item, dict) and item.get("type") != "reasoning":
            return None
        return original(value)

    p.set(export, "_view_of_value", mutated)


@mutant("H6", "a view's id copied from the item is kept as it is, not redacted as a text")
def m_view_id_not_text_redacted(p: Patcher) -> None:
    original = export.redacted_record_text

    def mutated(text: str) -> str:
        out = original(text)
        verdict = reader.parse_reasoning_replay_envelope(text)
        if verdict.item is None:
            return out
        record = json.loads(out)
        record["view"]["id"] = verdict.item.id
        return text_redaction.compact_json(record)

    p.set(export, "redacted_record_text", mutated)


@mutant("R2", "the measured replacement is left as it is only under an encryptedcontent name")
def m_measured_replacement_only_for_ciphertext_names(p: Patcher) -> None:
    original = redaction.is_replacement

    def mutated(value: object, name: str) -> bool:
        measured = isinstance(value, Mapping) and value.keys() != {"redacted"}
        if measured and redaction.normal_name(name) != redaction.CIPHERTEXT_NORMAL_NAME:
            return False
        return original(value, name)

    p.everywhere(original, mutated)


@mutant("R2", "a replacement is left as it is only with its members in the order R2 writes them")
def m_replacement_members_in_order(p: Patcher) -> None:
    original = redaction.is_replacement

    def mutated(value: object, name: str) -> bool:
        in_order = isinstance(value, Mapping) and list(value) in (
            ["redacted"],
            ["redacted", "bytes", "sha256"],
        )
        return in_order and original(value, name)

    p.everywhere(original, mutated)


@mutant("R2", "a replacement read from a text with a member named twice counts by its last value")
def m_repeated_member_replacement_kept(p: Patcher) -> None:
    def is_replacement(node: Any, name: str) -> bool:
        if not isinstance(node, jsonspans.JObject):
            return False
        members = {m.name.value: m.value for m in node.members}  # last wins
        label = members.get("redacted")
        if members.keys() == {"redacted"}:
            return isinstance(label, jsonspans.JString) and label.value == name
        digest = members.get("sha256")
        return (
            members.keys() == {"redacted", "bytes", "sha256"}
            and isinstance(label, jsonspans.JString)
            and label.value == "encrypted_content"
            and text_redaction._is_count(members["bytes"])
            and isinstance(digest, jsonspans.JString)
            and redaction.is_sha256_hex(digest.value)
        )

    p.set(text_redaction, "_is_replacement", is_replacement)


@mutant("R1", "a view's fields list a member named twice twice")
def m_view_fields_repeat_names(p: Patcher) -> None:
    original = text_redaction._view_text

    def mutated(node: Any) -> str:
        view = json.loads(original(node))
        view["fields"] = [text_redaction.redact_text(m.name.value) for m in node.members]
        view["fields"].sort()
        return text_redaction.compact_json(view)

    p.set(text_redaction, "_view_text", mutated)


@mutant("R2", "rule 4's bound is off by one: an array or object inside 257 others is replaced")
def m_nesting_bound_257(p: Patcher) -> None:
    p.set(redaction, "MAX_REDACTION_DEPTH", 257)


@mutant("R2", "rule 4's bound is off by one: an array or object inside 255 others is replaced")
def m_nesting_bound_255(p: Patcher) -> None:
    p.set(redaction, "MAX_REDACTION_DEPTH", 255)


@mutant(
    "D2", "a conflict is decided before a duplicate: a copy of a conflicting item is a conflict"
)
def m_conflict_before_duplicate(p: Patcher) -> None:
    def change(ids: list[dedupe.DedupeIdentity]) -> list[dedupe.DedupeDecision]:
        first: dict[tuple[str, str], dedupe.DedupeIdentity] = {}
        seen: set[dedupe.DedupeIdentity] = set()
        out = []
        for identity in ids:
            key = (identity.provider, identity.id)
            if key in first and first[key] != identity:
                out.append(dedupe.DedupeDecision.KEEP_CONFLICT)
            elif identity in seen:
                out.append(dedupe.DedupeDecision.DROP_DUPLICATE)
            else:
                out.append(dedupe.DedupeDecision.KEEP)
            first.setdefault(key, identity)
            seen.add(identity)
        return out

    _decisions(change)(p)


def _report_changed(change: Callable[[validation.FileReport], validation.FileReport]) -> Apply:
    def apply(p: Patcher) -> None:
        original = validation.validate_history

        def mutated(data: str | bytes, **kw: Any) -> validation.FileReport:
            return change(original(data, **kw))

        p.everywhere(original, mutated)

    return apply


@mutant("H3", "a block that is not a text block is counted in no bucket")
def m_block_not_text_uncounted(p: Patcher) -> None:
    def change(report: validation.FileReport) -> validation.FileReport:
        uncounted = sum(f.code is Code.BLOCK_NOT_TEXT for f in report.findings)
        counts = dataclasses.replace(report.counts, malformed=report.counts.malformed - uncounted)
        return dataclasses.replace(report, counts=counts)

    _report_changed(change)(p)


@mutant(
    "H3", "a file that is not a history has no block that fails to replay: it replays as stored"
)
def m_broken_file_replays_as_stored(p: Patcher) -> None:
    broken = (Code.HISTORY_MALFORMED, Code.HISTORY_UNREADABLE)

    def change(report: validation.FileReport) -> validation.FileReport:
        if any(f.code in broken for f in report.findings):
            return dataclasses.replace(report, replays_as_stored=True)
        return report

    _report_changed(change)(p)


@mutant("H3", "session.json is validated as a history file")
def m_session_json_validated_as_history(p: Patcher) -> None:
    p.set(validation, "is_session_file", lambda file_name: False)


@mutant("H3", "a block of another issuer is reported, as P4 reports it in a request")
def m_provider_mismatch_reported(p: Patcher) -> None:
    def change(report: validation.FileReport) -> validation.FileReport:
        if not report.provider_mismatch:
            return report
        found = validation.Finding(Code.REPLAY_PROVIDER_MISMATCH, level=validation.Severity.WARNING)
        return dataclasses.replace(report, findings=(*report.findings, found))

    _report_changed(change)(p)


@mutant("H3", "a malformed cache-state record is reported with its message index only")
def m_record_finding_without_block_index(p: Patcher) -> None:
    def change(report: validation.FileReport) -> validation.FileReport:
        findings = tuple(
            dataclasses.replace(f, block_index=None) if f.code is Code.CACHE_STATE_INVALID else f
            for f in report.findings
        )
        return dataclasses.replace(report, findings=findings)

    _report_changed(change)(p)


def _values_in_reading(*, length: Callable[[str], int] = len, names: bool = True) -> Apply:
    """SPEC H8's reading of a value (``scan._values_in``), with lengths counted by ``length``
    and member names read again as texts or not."""

    def values_in(value: Any, decodings: int) -> Iterator[scan.Material]:
        stack: list[Any] = [value]
        while stack:
            current = stack.pop()
            if isinstance(current, jsonspans.JObject):
                pending: list[Any] = []
                for member in current.members:
                    if names:
                        pending.append(member.name)
                    found = member.value
                    if scan.is_ciphertext_name(member.name.value) and isinstance(
                        found, jsonspans.JString
                    ):
                        if length(found.value) >= scan.MIN_CIPHERTEXT_CHARS:
                            pending.append(scan._Found(found.start, found.value))
                    else:
                        pending.append(found)
                stack.extend(reversed(pending))
            elif isinstance(current, jsonspans.JArray):
                stack.extend(reversed(current.elements))
            elif isinstance(current, scan._Found):
                yield scan.Material(current.offset, current.value)
            elif isinstance(current, jsonspans.JString):
                for inner in scan.material(current.value, decodings):
                    yield scan.Material(current.start, inner.value)

    return lambda p: p.set(scan, "_values_in", values_in)


@mutant("H8", "lengths count UTF-16 code units: a character outside the BMP counts two")
def m_lengths_in_utf16_units(p: Patcher) -> None:
    _values_in_reading(length=lambda value: len(value.encode("utf-16-le", "surrogatepass")) // 2)(p)


@mutant("H8", "member names are not read again as texts, only string values")
def m_member_names_not_read(p: Patcher) -> None:
    _values_in_reading(names=False)(p)


def _fragment_reading(*, exact_closing: bool = False, skip_bare_quote: bool = False) -> Apply:
    """SPEC H8's fragment value, read another way (``scan.read_fragment`` otherwise)."""

    def read(text: str, start: int, backslashes: int) -> scan.Fragment:
        index, end, step = start, len(text), 2 * (backslashes + 1)
        while index < end:
            char = text[index]
            if char == "\\":
                run_start = index
                while index < end and text[index] == "\\":
                    index += 1
                run = index - run_start
                closing = (
                    run == backslashes
                    if exact_closing
                    else run >= backslashes and (run - backslashes) % step == 0
                )
                if index < end and text[index] == '"' and closing:
                    value_end = index - backslashes
                    value = scan._unescape(text[start:value_end], backslashes)
                    return scan.Fragment(value, value_end, index + 1)
                index += 1
            elif char == '"' and not (skip_bare_quote and backslashes):
                value = scan._unescape(text[start:index], 0) if backslashes == 0 else None
                return scan.Fragment(value, index, index + 1)
            else:
                index += 1
        return scan.Fragment(None, end, end)

    return lambda p: p.set(scan, "read_fragment", read)


@mutant("H8", "a fragment's closing quote is preceded by exactly 2^k - 1 backslashes")
def m_fragment_closing_quote_exact_backslashes(p: Patcher) -> None:
    _fragment_reading(exact_closing=True)(p)


@mutant("H8", "a quote with no backslash does not end an escaped fragment: it is skipped")
def m_bare_quote_skipped_in_escaped_fragment(p: Patcher) -> None:
    _fragment_reading(skip_bare_quote=True)(p)


@mutant("H8", "only JSON whitespace is allowed around a fragment's colon (no U+000B, U+000C)")
def m_fragment_colon_json_whitespace_only(p: Patcher) -> None:
    head = r"(?P<q>\\*)\"encrypted_content(?P=q)\"[ \t\n\r]*:[ \t\n\r]*(?P=q)\""
    p.set(scan, "CANDIDATE", re.compile(r"[{\[]|" + head, re.IGNORECASE | re.ASCII))
    p.set(scan, "FRAGMENT_HEAD", re.compile(head, re.IGNORECASE | re.ASCII))


@mutant("H8", "a file is always read line by line, even when it is one JSON value")
def m_file_never_read_whole(p: Patcher) -> None:
    p.set(scan, "scan_decoded", lambda text, path=None: scan.scan_lines(text.split("\n"), path))


@mutant("H8", "an object nested inside a value read is an envelope when it has E1's schema")
def m_envelope_at_any_depth(p: Patcher) -> None:
    original = scan._raw_material

    def raw(text: str, decodings: int, decoded: list[scan.Decoded]) -> Iterator[scan.Material]:
        value = jsonspans.parse_whole(text)
        if value is None or scan.is_envelope(value):
            yield from original(text, decodings, decoded)
            return
        nested = []
        stack: list[Any] = [value]
        while stack:
            current = stack.pop()
            if isinstance(current, jsonspans.JObject):
                if scan.is_envelope(current):
                    nested.append(current)
                    continue
                stack.extend(m.value for m in current.members)
            elif isinstance(current, jsonspans.JArray):
                stack.extend(current.elements)
        if not nested:
            yield from original(text, decodings, decoded)
            return
        for found in nested:
            yield scan.Material(found.start, text[found.start : found.end])

    p.set(scan, "_raw_material", raw)


@mutant("H8", "an envelope holds its ciphertext in item only, under the exact name")
def m_envelope_ciphertext_in_item_only(p: Patcher) -> None:
    def holds(value: Any) -> bool:
        item = value.last("item") if isinstance(value, jsonspans.JObject) else None
        found = item.last("encrypted_content") if isinstance(item, jsonspans.JObject) else None
        return isinstance(found, jsonspans.JString) and bool(found.value)

    p.set(scan, "_holds_ciphertext", holds)


@mutant("H8", "a base64 run's = padding is not part of it: its length and digest leave it out")
def m_base64_run_without_padding(p: Patcher) -> None:
    run = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]+(?![A-Za-z0-9+/_-])")
    p.set(text_forms, "BASE64_RUN", run)


@mutant("H8", "lines read together report a finding on their first line, where the name is")
def m_grouped_lines_report_the_first(p: Patcher) -> None:
    def scan_lines(lines: list[str], path: Path | None = None) -> Iterator[scan.ScanFinding]:
        number = 0
        while number < len(lines):
            first = number
            chunk = lines[number].removesuffix("\r")
            number += 1
            while number < len(lines) and scan._HEAD_AT_END.search(chunk) is not None:
                chunk += "\n" + lines[number].removesuffix("\r")
                number += 1
            for found in scan.material(chunk):
                yield scan.ScanFinding(first + 1, scan.sha256_prefix(found.value), path)

    p.set(scan, "scan_lines", scan_lines)


@mutant("H8", "an assignment's value is quoted only by a double quote")
def m_value_quoted_by_double_quote_only(p: Patcher) -> None:
    p.set(text_forms, "_OPENING_QUOTE", re.compile(r'(\\*)(")'))


@mutant("H8", "a fragment that does not unescape keeps the backslashes of its closing quote")
def m_undecodable_fragment_keeps_closing_backslashes(p: Patcher) -> None:
    original = scan.read_fragment

    def mutated(text: str, start: int, backslashes: int) -> scan.Fragment:
        found = original(text, start, backslashes)
        closing = found.end - 1 - found.value_end == backslashes > 0
        if found.value is None and found.terminated and closing:
            return scan.Fragment(None, found.end - 1, found.end)
        return found

    p.set(scan, "read_fragment", mutated)


# ---------------------------------------------------------------------------------------------
# H8 readings the Rust implementation's README left open (conformance/readings/h8-readings.yaml)


@mutant("H8", "an escaped quoted value ends only at a quote with its own backslashes")
def m_escaped_quoted_value_skips_bare_quote(p: Patcher) -> None:
    def quoted_end(text: str, start: int, quote: str, backslashes: int) -> tuple[int, int]:
        index, end, step = start, len(text), 2 * (backslashes + 1)
        while index < end:
            if text[index] == "\\":
                run_start = index
                while index < end and text[index] == "\\":
                    index += 1
                run = index - run_start
                closing = run >= backslashes and (run - backslashes) % step == 0
                if index < end and text[index] == quote and closing:
                    return index - backslashes, index + 1
            elif text[index] == quote and backslashes == 0:
                return index, index + 1
            index += 1
        return end, end

    p.set(text_forms, "quoted_end", quoted_end)


@mutant("H8", "only 2^k - 1 backslashes open a quoted value; after others it is bare")
def m_quoted_value_after_escape_levels_only(p: Patcher) -> None:
    p.set(text_forms, "_OPENING_QUOTE", re.compile(r"(\\{7}|\\{3}|\\|)([\"'])"))


@mutant("H8", "a line ends with a fragment's name and colon only before JSON whitespace")
def m_next_line_after_json_whitespace_only(p: Patcher) -> None:
    head = r"(\\*)\"encrypted_content\1\"[ \t\n\r]*(?::[ \t\n\r]*)?$"
    p.set(scan, "_HEAD_AT_END", re.compile(head, re.IGNORECASE | re.ASCII))


@mutant("H8", "an XML element's text is its value whole, spaces and line breaks included")
def m_xml_element_text_untrimmed(p: Patcher) -> None:
    p.set(text_forms, "XML_SPACES", "")


@mutant("H8", "an XML element's text is trimmed of JSON whitespace only (U+000B, U+000C are text)")
def m_xml_element_text_json_whitespace(p: Patcher) -> None:
    p.set(text_forms, "XML_SPACES", " \t\n\r")


@mutant("H8", "a YAML block scalar's value is its header alone; the lines after it stay")
def m_yaml_block_scalar_header_only(p: Patcher) -> None:
    p.set(text_forms, "block_scalar_end", lambda gap, name_start, header_end: header_end)


def _percent_reading(errors: str) -> Apply:
    """SPEC H8's percent-decoding, read another way: ``strict`` (a decoding that is not UTF-8 is
    not read) or ``surrogatepass`` (a lone surrogate is its three bytes, each U+FFFD)."""

    def decoded(text: str) -> str | None:
        if "%" not in text or re.search(r"%[0-9A-Fa-f]{2}", text) is None:
            return None
        data = bytearray()
        escapes = re.split(r"(%[0-9A-Fa-f]{2})", text)
        for piece in escapes:
            if re.fullmatch(r"%[0-9A-Fa-f]{2}", piece):
                data.append(int(piece[1:], 16))
            else:
                data += piece.encode("utf-8", "surrogatepass")
        try:
            return data.decode("utf-8", "strict" if errors == "strict" else "replace")
        except UnicodeDecodeError:
            return None

    return lambda p: p.everywhere(text_forms.percent_decoded, decoded)


@mutant("H8", "a percent-decoding whose bytes are not UTF-8 is not read")
def m_percent_decoding_strict_utf8(p: Patcher) -> None:
    _percent_reading("strict")(p)


@mutant("H8", "a lone surrogate is percent-decoded as its three bytes, three U+FFFD")
def m_percent_decoding_surrogate_bytes(p: Patcher) -> None:
    _percent_reading("surrogatepass")(p)


def _base64_reading(*, padding: bool = False, bits: bool = False) -> Apply:
    """SPEC H8's base64 decoding, checked strictly: its padding, or its last character's bits."""
    original = text_forms.base64_decoded

    def decoded(run: str) -> str | None:
        body = run.rstrip("=")
        if padding and body != run and len(run) % 4:
            return None
        text = original(run)
        if bits and text is not None:
            url_safe = "-" in body or "_" in body
            data = text.encode("utf-8")
            again = base64.urlsafe_b64encode(data) if url_safe else base64.b64encode(data)
            if again.decode("ascii").rstrip("=") != body:
                return None
        return text

    return lambda p: p.everywhere(text_forms.base64_decoded, decoded)


@mutant("H8", "a base64 run's padding must complete its length to a multiple of 4")
def m_base64_padding_must_fit(p: Patcher) -> None:
    _base64_reading(padding=True)(p)


@mutant("H8", "a base64 run's last character must have its unused bits zero")
def m_base64_unused_bits_must_be_zero(p: Patcher) -> None:
    _base64_reading(bits=True)(p)


def _material_reading(*, weigh_all: bool = True, remember: bool = True) -> Apply:
    """SPEC H8's "not reported twice", read another way: ``weigh_all=False`` reports what base64
    runs' texts hold whatever the text showed; ``remember=False`` weighs a decoded text's finding
    against the text's own only, so two decodings that hold one value both report it."""

    def material(text: str, decodings: int = 0) -> Iterator[scan.Material]:
        if scan.MAY_HOLD.search(text) is None:
            return
        decoded: list[scan.Decoded] = []
        found = list(scan._raw_material(text, decodings, decoded))
        yield from found
        if decodings >= text_forms.MAX_DECODINGS:
            return
        seen = {each.value for each in found}
        for each in decoded:
            weighed = weigh_all or not _is_run_text(text, each)
            for inner in material(each.text, decodings + 1):
                if not weighed:
                    yield scan.Material(each.offset, inner.value)
                elif inner.value not in seen:
                    if remember:
                        seen.add(inner.value)
                    yield scan.Material(each.offset, inner.value)

    return lambda p: p.set(scan, "material", material)


def _is_run_text(text: str, decoded: scan.Decoded) -> bool:
    """Whether a decoded text is a base64 run's (its offset starts a run of the text)."""
    run = text_forms.BASE64_RUN.match(text, decoded.offset)
    return run is not None and text_forms.base64_decoded(run.group()) == decoded.text


@mutant("H8", "what a base64 run's text holds is reported even when the text showed it")
def m_base64_texts_not_weighed(p: Patcher) -> None:
    _material_reading(weigh_all=False)(p)


@mutant("H8", "a value two decodings of a text hold is reported by each")
def m_decodings_weighed_against_the_text_only(p: Patcher) -> None:
    _material_reading(remember=False)(p)


@mutant("H8", "the whole text is decoded, not its gaps, and its findings stand at its start")
def m_whole_text_decoded(p: Patcher) -> None:
    original = scan.material
    p.set(scan, "percent_decoded", lambda text: None)
    p.set(scan, "references_decoded", lambda text: None)

    def material(text: str, decodings: int = 0) -> Iterator[scan.Material]:
        found = list(original(text, decodings))
        yield from found
        if decodings >= text_forms.MAX_DECODINGS or scan.MAY_HOLD.search(text) is None:
            return
        seen = {each.value for each in found}
        for decode in (text_forms.percent_decoded, text_forms.references_decoded):
            decoded = decode(text)
            for inner in () if decoded is None else material(decoded, decodings + 1):
                if inner.value not in seen:
                    seen.add(inner.value)
                    yield scan.Material(0, inner.value)

    p.set(scan, "material", material)


@mutant("H8", "a text's decoded findings follow its own, wherever their gap starts")
def m_decoded_findings_after_the_texts_own(p: Patcher) -> None:
    p.set(scan, "in_order", list)


# ---------------------------------------------------------------------------------------------
# Running


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    rule: str
    killed_by: tuple[str, ...]  # the MUST cases that fail (in the diagnostics profile)
    error: str | None = None
    verdict_kills: int = 0  # of those, the cases that fail in the verdict profile too

    @property
    def killed(self) -> bool:
        return bool(self.killed_by)


_SUITE: Suite | None = None


def _suite() -> Suite:
    global _SUITE  # noqa: PLW0603 - one load per worker process
    if _SUITE is None:
        bundled = load_suite([VECTORS])
        _SUITE = make_suite(
            (*bundled.cases, *length_limit_cases()), bundled.version, bundled.sha256
        )
    return _SUITE


_LIMIT_BYTES: Final = 16 * 1024 * 1024  # SPEC E4.1


def length_limit_cases() -> tuple[Case, ...]:
    """The two cases of SPEC E4.1's length limit that no vector file carries (a 16 MiB vector
    would dwarf the suite: SPEC marks the limit tested outside vectors). Built here so that a
    reader measuring anything but UTF-8 bytes is killed too: the text is an envelope whose
    summary is made of two-byte characters, exactly at the limit, then one byte over it."""
    head = (
        '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,'
        '"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"'
    )
    tail = '"}],"encrypted_content":"c"}}'
    room = _LIMIT_BYTES - len(head.encode()) - len(tail.encode())
    text = "é" * (room // 2) + " " * (room % 2)  # UTF-8: two bytes a character
    at_limit = head + text + tail
    over = head + text + "x" + tail
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": text}],
        "encrypted_content": "c",
    }

    def case(name: str, input_text: str, expect: Expect) -> Case:
        return Case(
            id=f"read/generated/{name}",
            description=f"SPEC E4.1 length limit, generated by tools/suite_adequacy.py: {name}",
            spec="E4-limits",
            operation="read",
            level="MUST",
            tags=("limits", "generated"),
            input={"text": input_text},
            expect=expect,
            file="tools/suite_adequacy.py",
        )

    return (
        case("16-mib-of-two-byte-characters-accepted", at_limit, Expect(output={"item": item})),
        case("one-byte-over-16-mib-refused", over, Expect(code=Code.LIMIT_EXCEEDED.value)),
    )


@contextmanager
def applied(apply: Apply | None) -> Iterator[Patcher]:
    p = Patcher()
    try:
        statement_paths(p)
        if apply is not None:
            apply(p)
        yield p
    finally:
        p.undo()


@dataclass(frozen=True, slots=True)
class MutatedRun:
    wrong: tuple[str, ...]  # MUST cases answered wrongly (diagnostics profile)
    raised: tuple[str, ...]  # cases on which the reference raised (an error reply)
    wrong_verdicts: tuple[str, ...]  # MUST cases answered wrongly in the verdict profile


def mutated_run(apply: Apply | None) -> MutatedRun:
    """The suite against the reference with ``apply``'s change (none: unchanged)."""
    suite = _suite()
    with applied(apply) as p:
        impl = InProcessImplementation(p.dispatch, operations.OPERATIONS)
        run = run_cases(impl, suite, suite.cases)  # each reply judged in both profiles

    def wrong(view: RunResult) -> tuple[str, ...]:
        return tuple(
            r.case.id
            for r in view.results
            if r.case.level == "MUST"
            and r.unexpected
            and r.outcome is not CaseOutcome.ADAPTER_ERROR
        )

    verdict = next(v for v in run.profiles if v.profile is Profile.VERDICT)
    raised = tuple(r.case.id for r in run.results if r.outcome is CaseOutcome.ADAPTER_ERROR)
    return MutatedRun(wrong(run), raised, wrong(verdict))


def failing_must_cases(apply: Apply | None) -> tuple[str, ...]:
    """The cases that fail with ``apply``'s change: MUST cases answered wrongly, then any case
    the reference raises on."""
    found = mutated_run(apply)
    return found.wrong + found.raised


def run_mutant(name: str) -> Outcome:
    m = next(m for m in CATALOGUE if m.name == name)
    try:
        found = mutated_run(m.apply)
    except Exception as exc:  # a mutant that cannot even be applied is a tool bug: say so
        return Outcome(m.name, m.rule, (), f"{type(exc).__name__}: {exc}")
    verdict_kills = len(found.wrong_verdicts)
    if m.raises:
        return Outcome(m.name, m.rule, found.wrong + found.raised, None, verdict_kills)
    # A reading is a different answer, never a crash: a raise is a bug of the mutant itself,
    # and the case it raised on proves nothing about the suite.
    error = (
        f"raised on {len(found.raised)} case(s), e.g. {found.raised[0]}" if found.raised else None
    )
    return Outcome(m.name, m.rule, found.wrong, error, verdict_kills)


def identity(p: Patcher) -> None:
    """No change: the harness itself must leave the reference passing."""


def rules_tested(suite: Suite) -> set[str]:
    return {c.spec for c in suite.cases if c.level == "MUST"}


def report(
    outcomes: Sequence[Outcome], suite: Suite, *, whole: bool = True
) -> tuple[list[str], list[Outcome]]:
    """Per rule, the mutants killed; with ``whole`` (the whole catalogue ran), the rules that
    MUST vectors test and no mutant reads otherwise; and the failures: the survivors not in
    ``EQUIVALENT``, and the ``EQUIVALENT`` mutants that a vector kills."""
    by_rule: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_rule.setdefault(o.rule, []).append(o)
    lines = []
    for rule in sorted(by_rule, key=lambda r: (re.sub(r"\d.*", "", r), r)):
        killed = [o for o in by_rule[rule] if o.killed]
        lines.append(
            f"{rule:10} {len(killed)}/{len(by_rule[rule])} killed: "
            + ", ".join(f"{o.name} ({len(o.killed_by)}/{o.verdict_kills})" for o in killed)
        )
    uncovered = sorted(rules_tested(suite) - set(by_rule))
    if whole and uncovered:
        lines.append(f"rules with MUST vectors and no mutant: {', '.join(uncovered)}")
    failures = [o for o in outcomes if o.error is not None or o.killed == (o.name in EQUIVALENT)]
    return lines, failures


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return jobs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=2,
        help="worker processes, at most (default 2; never more than usable CPUs or mutants; "
        "1: in this process)",
    )
    parser.add_argument("-k", dest="names", action="append", default=[], metavar="NAME")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    if args.list:
        for m in CATALOGUE:
            print(f"{m.rule}\t{m.name}\t{m.reading}")
        return 0
    chosen = [m for m in CATALOGUE if not args.names or m.name in args.names]
    t0 = time.perf_counter()
    baseline = failing_must_cases(identity)
    if baseline:
        print(f"the unmutated reference fails {len(baseline)} MUST cases here: {baseline[:5]}")
        return 2
    names = [m.name for m in chosen]
    workers = worker_count(args.jobs, len(names), usable_cpus())
    if workers <= 1:  # in this process: what a test patches is what runs
        outcomes = [run_mutant(name) for name in names]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(run_mutant, names))
    lines, failures = report(outcomes, _suite(), whole=not args.names)
    print("\n".join(lines))
    killed = sum(o.killed and o.error is None for o in outcomes)
    for o in outcomes:
        if o.name in EQUIVALENT and not o.killed:
            print(f"EQUIVALENT {o.name}: {EQUIVALENT[o.name].describe()}")
    for o in failures:
        if o.error is not None:
            print(f"ERROR {o.name}: {o.error} (a bug of the mutant, not a verdict)")
        elif o.name in EQUIVALENT:
            print(f"STALE {o.name}: a MUST vector kills it; remove it from EQUIVALENT")
            continue
        m = next(m for m in CATALOGUE if m.name == o.name)
        print(f"SURVIVOR {o.name} [{o.rule}]: {m.reading}")
    equivalent = sum(1 for o in outcomes if o.name in EQUIVALENT and not o.killed)
    by_verdict = sum(1 for o in outcomes if o.killed and o.error is None and o.verdict_kills)
    print(
        f"score: {killed}/{len(outcomes)} mutants killed by MUST vectors"
        f" ({by_verdict} in the verdict profile too),"
        f" {equivalent} equivalent readings SPEC allows, {len(failures)} failures"
        f" ({time.perf_counter() - t0:.1f} s, {workers} jobs)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
