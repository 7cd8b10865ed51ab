"""History exports (SPEC H6) and redacted records (SPEC H2): a history value in, its export out.

Pure functions only; reading and writing files is the CLI's job (``conformance export``).

Where SPEC H2/H6 leave a choice, this module decides it as follows (the export vectors pin each):

* The shape of SPEC H1 is checked as the validator checks it (:mod:`.history_files`): a history
  that does not have it is ``history_malformed``, in either mode.
* The view of a replay block is computed only when its text passes E6 steps 1–5 (it then has a
  JSON value): the envelope's ``item`` when that is an object, else the value itself when it is
  an object with ``encrypted_content``, else ``null``.
* A replay block that is not a text block becomes a text block holding the redacted record
  ``was: "block_not_text"``, ``view: null``. A text block keeps its other members, redacted (R2).
* A replay block that already reads as ``redacted_record`` stays a redacted record: its value is
  redacted (R2) and written compactly, so exporting a redacted export changes nothing.
* In the other channels, a text is "a JSON object" when it passes E6 steps 1–5 (an I-JSON text,
  the reader's own definition) and its value is an object whose numbers are all finite binary64
  values; every other text is kept verbatim. The display channel ``reasoning`` is kept verbatim
  (its blocks redacted structurally, which never changes a text) unless dropped; dropping removes
  the ``reasoning`` member of ``channels``. Message ``content`` texts are never parsed.
* Everything else is redacted by R2 member by member: each message's members other than
  ``channels`` and the top-level members other than ``messages`` (a sensitive name is replaced,
  any other member redacted recursively; a message is never itself taken for a reasoning item).
* Compact text (redacted records, redacted channel texts): no whitespace, members in order,
  strings escaped as SPEC C3 escapes them, numbers as ECMAScript's ``Number::toString`` writes
  their binary64 value (RFC 8785 §3.2.2.3).
* The marker member ``reasoning_replay_export`` is always last; one found in the input (an export
  exported again) is replaced. ``drop_display_reasoning`` applies to redacted mode only: a
  resumable export is the history as stored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

from .diagnostics import Code
from .envelope import DISPLAY_CHANNEL, REDACTED_SCHEMA_NAME, REPLAY_CHANNEL
from .history_files import HistoryFileProblem, history_from_value
from .jsontext import TextRefused, parse_strict
from .reader import parse_reasoning_replay_envelope
from .redaction import redact, redact_reasoning_replay_for_diagnostics


class ExportMode(StrEnum):
    """SPEC H6: the two export modes."""

    RESUMABLE = "resumable"
    REDACTED = "redacted"


EXPORT_MARKER: Final = "reasoning_replay_export"  # SPEC H6
RESUMABLE_WARNING: Final = (
    "This file contains resumable encrypted provider reasoning state (bearer-capable). "
    "Keep it private."
)  # SPEC H6
REDACTED_NOTE: Final = "Reasoning replay state was removed; this history is not resumable."


def export_marker(mode: ExportMode) -> dict[str, str]:
    """SPEC H6: the value of the top-level member ``reasoning_replay_export``."""
    if mode is ExportMode.RESUMABLE:
        return {"mode": "resumable", "warning": RESUMABLE_WARNING}
    return {"mode": "redacted", "note": REDACTED_NOTE}


# --- compact text -----------------------------------------------------------------------------


class _NotJsonNumber(ValueError):
    """A number binary64 cannot hold (an overflowing literal): the text is kept verbatim."""


def _es_number(number: int | float) -> str:
    """ECMAScript ``Number::toString`` of the binary64 value of ``number`` (RFC 8785 §3.2.2.3)."""
    if isinstance(number, int) and -(2**53) <= number <= 2**53:
        return str(number)
    try:
        value = float(number)
    except OverflowError:
        raise _NotJsonNumber from None
    if not math.isfinite(value):
        raise _NotJsonNumber
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript requires.
    decimal = Decimal(repr(abs(value))).normalize()
    _, digit_tuple, exponent = decimal.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k  # value = 0.digits × 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def compact_json(value: object) -> str:
    """Compact JSON text of a JSON value: SPEC C3 string escapes, ECMAScript number forms.

    Raises ``ValueError`` for a number binary64 cannot hold.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        # Python's encoder escapes exactly what SPEC C3 escapes (see writer.canonical_json).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return _es_number(value)
    if isinstance(value, Mapping):
        members = (f"{compact_json(name)}:{compact_json(member)}" for name, member in value.items())
        return "{" + ",".join(members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(compact_json(element) for element in value) + "]"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


# --- SPEC H2 redacted records -----------------------------------------------------------------


def _redact_member(name: str, value: object) -> object:
    """SPEC R2 rule 2 for one member of an object that is redacted member by member.

    A one-member object without ``type`` is never a reasoning item, so its redaction replaces a
    sensitive member and redacts any other, exactly as in the object the member belongs to.
    """
    if name == "type":
        return redact(value)
    redacted = redact({name: value})
    assert isinstance(redacted, dict)
    return redacted[name]


def _is_text_block(block: object) -> bool:
    """SPEC P2: an object whose ``type`` is ``"text"`` and whose ``text`` is a string."""
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _view_of_value(value: object) -> dict[str, Any] | None:
    """SPEC H2: the diagnostic view of a block value's reasoning item, or ``None``."""
    if not isinstance(value, dict):
        return None
    item = value.get("item")
    if isinstance(item, dict):
        return redact_reasoning_replay_for_diagnostics(item)
    if "encrypted_content" in value:
        return redact_reasoning_replay_for_diagnostics(value)
    return None


def redacted_record(was: str, view: dict[str, Any] | None) -> dict[str, Any]:
    """SPEC H2: the redacted record object."""
    return {"schema": REDACTED_SCHEMA_NAME, "version": 1, "was": was, "view": view}


def redacted_record_text(text: str) -> str:
    """SPEC H2: the text replacing a replay block whose text is ``text``."""
    verdict = parse_reasoning_replay_envelope(text)
    if verdict.item is not None:
        return compact_json(
            redacted_record("resumable", redact_reasoning_replay_for_diagnostics(verdict.item))
        )
    assert verdict.code is not None
    value = parse_strict(text)
    if isinstance(value, TextRefused):  # E6 steps 1–5: no JSON value, so no view
        return compact_json(redacted_record(verdict.code.value, None))
    if verdict.code is Code.REDACTED_RECORD:
        # Already a redacted record (a redacted export exported again): keep it, redacted.
        try:
            return compact_json(redact(value))
        except ValueError:
            return compact_json(redacted_record(verdict.code.value, None))
    return compact_json(redacted_record(verdict.code.value, _view_of_value(value)))


def _redact_replay_block(block: object) -> object:
    if not _is_text_block(block):
        record = compact_json(redacted_record(Code.BLOCK_NOT_TEXT.value, None))
        return {"type": "text", "text": record}
    assert isinstance(block, dict)
    return {
        name: redacted_record_text(member) if name == "text" else _redact_member(name, member)
        for name, member in block.items()
    }


# --- SPEC H6 redacted mode --------------------------------------------------------------------


def _redacted_text(text: str) -> str:
    """R2 for a channel text: the compact redaction of a JSON object text, else the text."""
    value = parse_strict(text)
    if not isinstance(value, dict):
        return text
    try:
        return compact_json(redact(value))
    except ValueError:  # a number binary64 cannot hold: not an I-JSON value after all
        return text


def _redact_channel_block(block: object) -> object:
    if not _is_text_block(block):
        return redact(block)
    assert isinstance(block, dict)
    return {
        name: _redacted_text(member) if name == "text" else _redact_member(name, member)
        for name, member in block.items()
    }


def _redact_channels(channels: dict[str, Any], *, drop_display_reasoning: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, blocks in channels.items():
        if name == REPLAY_CHANNEL:
            out[name] = [_redact_replay_block(block) for block in blocks]
        elif name == DISPLAY_CHANNEL:
            if not drop_display_reasoning:
                out[name] = redact(blocks)  # R2 never changes a string: the text is kept
        else:
            out[name] = [_redact_channel_block(block) for block in blocks]
    return out


def _redact_message(message: dict[str, Any], *, drop_display_reasoning: bool) -> dict[str, Any]:
    return {
        name: _redact_channels(member, drop_display_reasoning=drop_display_reasoning)
        if name == "channels" and isinstance(member, dict)
        else _redact_member(name, member)
        for name, member in message.items()
    }


def export_history(
    history: object, mode: ExportMode, *, drop_display_reasoning: bool = False
) -> dict[str, Any] | Code:
    """SPEC H6: the export of a history in ``mode``, or ``history_malformed`` (not SPEC H1).

    Member order is the input's, with the marker ``reasoning_replay_export`` last.
    """
    if isinstance(history_from_value(history), HistoryFileProblem):  # SPEC H1, H3
        return Code.HISTORY_MALFORMED
    assert isinstance(history, dict)
    exported: dict[str, Any] = {}
    for name, member in history.items():
        if name == EXPORT_MARKER:
            continue  # an export exported again gets the new marker, last
        if mode is ExportMode.RESUMABLE:
            exported[name] = member
        elif name == "messages":
            exported[name] = [
                _redact_message(message, drop_display_reasoning=drop_display_reasoning)
                for message in member
            ]
        else:
            exported[name] = _redact_member(name, member)
    exported[EXPORT_MARKER] = export_marker(mode)
    return exported
