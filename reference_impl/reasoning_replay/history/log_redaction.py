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
    from reasoning_replay.history.log_redaction import (
        ReplayRedactingFilter, ReplayRedactingJsonFormatter,
    )

    handler = logging.StreamHandler()
    handler.addFilter(ReplayRedactingFilter())
    handler.setFormatter(ReplayRedactingJsonFormatter())
    logging.getLogger().addHandler(handler)

    # or, for one logger and whatever handlers it has:
    logging.getLogger("my_agent.provider").addFilter(ReplayRedactingFilter())

What is redacted, and how: structured values by SPEC R2 (after turning pydantic-style SDK objects
into JSON with ``model_dump(mode="json")``), and every string in them, member names included, and
every message as a text, by the text redaction of SPEC H6 (:func:`redact_text`: what a leak scan
finds is replaced, every other character kept). Values of other types are left alone. When
redaction fails for any reason, the record keeps only :data:`REDACTION_FAILED` (SPEC H7): the
caller's logging call never raises, and nothing unredacted is written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from reasoning_replay.record.redaction import MAX_REDACTION_DEPTH, NESTING_REPLACEMENT, redact_value

from .text_redaction import redact_text

# Attributes every LogRecord has; anything else on a record came from ``extra=`` (or a filter).
_STANDARD_ATTRIBUTES: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime", "taskName"}
_EXCEPTION_FORMATTER: Final = logging.Formatter()
_COMPACT: Final = (",", ":")
# SPEC H7: what a record says when redacting it failed; nothing of the record is kept.
REDACTION_FAILED: Final = "[log record withheld: reasoning-replay redaction failed]"

__all__ = [
    "REDACTION_FAILED",
    "ReplayRedactingFilter",
    "ReplayRedactingJsonFormatter",
    "redact_record",
    "redact_structure",
    "redact_text",
    "to_json_value",
]


def to_json_value(value: object, depth: int = 0) -> object:
    """``value`` as plain JSON-like data: SDK objects dumped, mappings with string keys, tuples as
    lists; containers deeper than SPEC R2's bound replaced as R2 replaces them."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        value = model_dump(mode="json")
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_REDACTION_DEPTH:
        return {"redacted": NESTING_REPLACEMENT}
    if isinstance(value, Mapping):
        return {str(name): to_json_value(member, depth + 1) for name, member in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(element, depth + 1) for element in value]
    return value


def redact_structure(value: object) -> object:
    """SPEC H7: the R2 redaction of structured data bound for a log, every string in it (member
    names too) redacted as a text (SPEC H6)."""
    return redact_value(to_json_value(value), redact_text)


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


def redact_record_or_withhold(record: logging.LogRecord) -> None:
    """SPEC H7: :func:`redact_record`, and when that fails for any reason, a record that keeps
    nothing but :data:`REDACTION_FAILED`, so that the caller's logging goes on and no secret is
    written."""
    try:
        redact_record(record)
    except Exception:  # whatever broke, the record must not be written as it was
        for name in list(vars(record)):
            if name not in _STANDARD_ATTRIBUTES:
                delattr(record, name)
        record.msg, record.args = REDACTION_FAILED, ()
        record.exc_info = record.exc_text = record.stack_info = None


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
        redact_record_or_withhold(record)
        return True


class ReplayRedactingJsonFormatter(logging.Formatter):
    """One JSON object per record and line, redacted (SPEC H7): never a raw ``encrypted_content``.

    Members: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` (the formatted message,
    redacted), ``args`` (when they are a mapping, or a tuple with a structured element: redacted),
    every extra attribute of the record (redacted; values that are not JSON become their
    ``repr``, redacted as text), and ``exception`` / ``stack`` when present (redacted as text).
    """

    def format(self, record: logging.LogRecord) -> str:
        try:
            return self._format(record)
        except Exception:  # SPEC H7: a line that says so, never the record as it was
            document = {"level": record.levelname, "logger": record.name}
            return json.dumps({**document, "message": REDACTION_FAILED}, ensure_ascii=True)

    def _format(self, record: logging.LogRecord) -> str:
        redact_record_or_withhold(record)  # idempotent: no-op on a record already redacted
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
