"""Logging that never emits replay material (SPEC H7, R2, R3).

``encrypted_content`` is a bearer secret and reasoning text is private (SPEC R1): a log record may
show their structure, never their values. Two pieces, usable separately or together:

- :class:`ReplayRedactingFilter` rewrites each record in place before any handler formats it:
  structured ``args`` (a mapping, or a tuple whose elements are mappings, lists or SDK objects),
  every extra attribute that holds a mapping or a list (``logger.debug("req", extra={"data":
  body})``), and the message itself when it holds replay material as JSON text, whole or embedded
  (``"body: " + json.dumps(body)``).
- :class:`ReplayRedactingJsonFormatter` writes one JSON object per record, one per line, with the
  redacted message and redacted structured fields. It redacts by itself, so it is safe without
  the filter too.

Install them on the handlers that write somewhere (a filter on a handler sees every record that
reaches it, including records of child loggers; a filter on a logger sees only records logged
through that very logger)::

    import logging
    from reasoning_replay.log_redaction import (
        ReplayRedactingFilter, ReplayRedactingJsonFormatter,
    )

    handler = logging.StreamHandler()
    handler.addFilter(ReplayRedactingFilter())
    handler.setFormatter(ReplayRedactingJsonFormatter())
    logging.getLogger().addHandler(handler)

    # or, for one logger and whatever handlers it has:
    logging.getLogger("my_agent.provider").addFilter(ReplayRedactingFilter())

What is redacted, and how: structured values by SPEC R2 (:func:`reasoning_replay.redact`, after
turning pydantic-style SDK objects into JSON with ``model_dump(mode="json")``), and, at any depth,
strings that are JSON texts holding sensitive members (an envelope stored as a block text, say),
by :func:`redact_text`. Values of other types are left alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from .redaction import redact
from .scan import CIPHERTEXT_NAME, MAY_HOLD, EmbeddedFragment, EmbeddedValue, embedded_parts

# Attributes every LogRecord has; anything else on a record came from ``extra=`` (or a filter).
_STANDARD_ATTRIBUTES: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime", "taskName"}
_DECODER: Final = json.JSONDecoder()
_EXCEPTION_FORMATTER: Final = logging.Formatter()
_COMPACT: Final = (",", ":")


def _fragment_replacement(fragment: EmbeddedFragment) -> str:
    """The R2 replacement object for a fragment's value, as JSON text at the fragment's escape
    level (a truncated value cannot be measured: the plain ``{"redacted": ...}`` form)."""
    value = fragment.fragment.value
    if fragment.fragment.terminated and value is not None:
        text = _dump(redact({CIPHERTEXT_NAME: value})[CIPHERTEXT_NAME])  # type: ignore[index]
    else:
        text = _dump({"redacted": CIPHERTEXT_NAME})
    levels = (fragment.backslashes + 1).bit_length() - 1
    for _ in range(levels):
        text = json.dumps(text)[1:-1]
    return text


def to_json_value(value: object) -> object:
    """``value`` as plain JSON-like data: SDK objects dumped, mappings with string keys, tuples as
    lists; strings that hold replay material as JSON text redacted (:func:`redact_text`)."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        value = model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(name): to_json_value(member) for name, member in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(element) for element in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_structure(value: object) -> object:
    """SPEC H7: the R2 redaction of structured data bound for a log (JSON in strings included)."""
    return redact(to_json_value(value))


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_COMPACT)


def redact_text(text: str) -> str:
    """A text with the replay material in its JSON redacted (SPEC H7, R2); other text unchanged.

    A text that is one JSON value is redacted and dumped again (compact) when redaction changes
    it. Otherwise each JSON value embedded in it (from a ``{`` or ``[``) is replaced likewise, and
    the string value of each remaining ``"encrypted_content": "..."`` fragment, at any escape
    level, is replaced by its R2 replacement object written at that level (an unterminated one,
    up to the end of the text, by ``{"redacted": "encrypted_content"}``). A text without replay
    material is returned unchanged (the very same object).
    """
    if MAY_HOLD.search(text) is None:
        return text
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        return _redact_embedded(text)
    redacted = redact_structure(whole)
    return text if redacted == whole else _dump(redacted)


def _redact_embedded(text: str) -> str:
    pieces: list[str] = []
    copied = 0
    for part in embedded_parts(text, _DECODER):
        if isinstance(part, EmbeddedValue):
            redacted = redact_structure(part.value)
            if redacted != part.value:
                pieces += (text[copied : part.start], _dump(redacted))
                copied = part.end
            continue
        opening_quote = part.value_start - part.backslashes - 1
        pieces += (text[copied:opening_quote], _fragment_replacement(part))
        copied = part.fragment.end  # an unterminated value: hidden up to the end of the text
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


def _is_structured(value: object) -> bool:
    return isinstance(value, Mapping | list | tuple) or (
        callable(getattr(value, "model_dump", None)) and not isinstance(value, type)
    )


def _redact_arg(value: object) -> object:
    if isinstance(value, str):
        return redact_text(value)
    return redact_structure(value) if _is_structured(value) else value


def redact_record(record: logging.LogRecord) -> None:
    """SPEC H7: redact a record in place: args, structured extras, message, traceback, stack.

    When the formatted message would still show replay material (say, an object whose ``str``
    prints its ciphertext), the record's message is replaced by its redacted formatted text and
    its args are cleared, so that every handler shows the redacted text.
    """
    if isinstance(record.args, Mapping):
        record.args = _redact_mapping_args(record.args)
    elif isinstance(record.args, tuple):
        record.args = tuple(_redact_arg(arg) for arg in record.args)
    # A string message is redacted once formatted, below: redacting the template itself could
    # change its placeholders.
    if not isinstance(record.msg, str) and _is_structured(record.msg):
        record.msg = redact_structure(record.msg)
    for name, value in list(vars(record).items()):
        if name not in _STANDARD_ATTRIBUTES and (_is_structured(value) or isinstance(value, str)):
            setattr(record, name, _redact_arg(value))
    if record.exc_info and not record.exc_text:
        # Formatters reuse a cached exc_text: render the traceback once, redacted.
        record.exc_text = _EXCEPTION_FORMATTER.formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact_text(record.exc_text)
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info)
    try:
        message = record.getMessage()
    except (TypeError, ValueError):
        # A broken format string: logging's error report would print the arguments verbatim.
        record.msg, record.args = redact_text(str(record.msg)), ()
        return
    redacted = redact_text(message)
    if redacted is not message:
        record.msg, record.args = redacted, ()


def _redact_mapping_args(args: Mapping[str, Any]) -> dict[str, Any]:
    # ``logger.info("%(user)s", {...})``: keep the mapping's keys so the format still works.
    redacted = redact_structure(args)
    assert isinstance(redacted, dict)
    return redacted


class ReplayRedactingFilter(logging.Filter):
    """A logging filter that redacts (SPEC R2, H7) every record it sees; it never drops one.

    Add it to a handler (``handler.addFilter(ReplayRedactingFilter())``) to cover everything that
    handler writes, or to a logger for the records logged through that logger. Records are
    changed in place, so every handler after it sees the redacted record.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


class ReplayRedactingJsonFormatter(logging.Formatter):
    """One JSON object per record and line, redacted (SPEC H7): never a raw ``encrypted_content``.

    Members: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` (the formatted message,
    redacted), ``args`` (when they are a mapping, or a tuple with a structured element: redacted),
    every extra attribute of the record (redacted; values that are not JSON become their
    ``repr``, redacted as text), and ``exception`` / ``stack`` when present (redacted as text).
    """

    def format(self, record: logging.LogRecord) -> str:
        redact_record(record)  # idempotent: a no-op on a record the filter already redacted
        document: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": redact_text(record.getMessage()),
        }
        if isinstance(record.args, Mapping) or (
            isinstance(record.args, tuple) and any(_is_structured(a) for a in record.args)
        ):
            document["args"] = _jsonable(record.args)
        for name, value in vars(record).items():
            if name not in _STANDARD_ATTRIBUTES and name not in document:
                document[name] = _jsonable(value)
        if record.exc_info:
            document["exception"] = redact_text(self.formatException(record.exc_info))
        if record.stack_info:
            document["stack"] = redact_text(self.formatStack(record.stack_info))
        return json.dumps(document, ensure_ascii=True, separators=_COMPACT)


def _jsonable(value: object) -> object:
    """Redacted, and JSON-serialisable whatever it was: foreign objects become their ``repr``."""
    plain = redact_structure(value)
    return json.loads(json.dumps(plain, default=lambda other: redact_text(repr(other))))
