"""Request and stream captures for debugging, redacted by default (SPEC H7, R3).

A capture is a file that shows what was sent to, or streamed from, a provider. By default it is
written in its redacted form (SPEC R2: reasoning items become their diagnostic view, every
``encrypted_content`` a length and a digest, other secrets their name), so it holds structure
only and can be attached to a bug report. A raw capture holds resumable, bearer-capable state
(SPEC H6) and needs an explicit opt-in:

- ``CaptureWriter(directory, unsafe_raw=True)``, or
- the environment variable ``REASONING_REPLAY_UNSAFE_RAW_CAPTURE=1`` (exactly ``1``; any other
  value, ``true`` included, means no) when ``unsafe_raw`` is not given. An explicit
  ``unsafe_raw=False`` wins over the variable.

Either way every file is written with
:func:`reasoning_replay.history.persistence.write_private_atomic` (mode 0600, atomic) in a
directory created with mode 0700 (SPEC H4, H5). Raw captures also say so in the file
(``"raw": true``), and the writer warns (:class:`UnsafeRawCaptureWarning` when it
is made, and a log warning per raw file).

Files, numbered per writer in the order written (use one directory per writer):

- ``NNNN-LABEL.request.json``: ``{"capture": "request", "label": ..., "raw": false, "payload":
  ...}``, indented;
- ``NNNN-LABEL.events.jsonl``: a header line ``{"capture": "events", "label": ..., "raw": false}``
  then one line per event.

Labels are reduced to ``[A-Za-z0-9._-]`` (anything else becomes ``_``), so a label never names
another directory.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from .log_redaction import redact_structure, redact_text
from .persistence import make_session_directory, write_private_atomic

UNSAFE_RAW_ENV: Final = "REASONING_REPLAY_UNSAFE_RAW_CAPTURE"
RAW_WARNING: Final = (
    "Raw capture: these files contain resumable encrypted provider reasoning state "
    "(bearer-capable). Keep them private and delete them when done."
)
_UNSAFE_LABEL_CHARS: Final = re.compile(r"[^A-Za-z0-9._-]")
_LOG: Final = logging.getLogger(__name__)


class UnsafeRawCaptureWarning(UserWarning):
    """A capture writer will write raw replay material (SPEC H7 opt-in)."""


def raw_capture_enabled(unsafe_raw: bool | None, environ: Mapping[str, str] | None = None) -> bool:
    """SPEC H7: whether captures are raw: ``unsafe_raw`` if given, else the variable is ``1``."""
    if unsafe_raw is not None:
        return unsafe_raw
    return (os.environ if environ is None else environ).get(UNSAFE_RAW_ENV) == "1"


def safe_label(label: str) -> str:
    """A file-name-safe form of ``label``: never empty, never ``.``/``..``, no separator."""
    cleaned = _UNSAFE_LABEL_CHARS.sub("_", label).strip(".") or "capture"
    return cleaned[:80]


def capture_payload(payload: object, *, raw: bool) -> object:
    """What a capture stores of ``payload``: its R2 redaction, or (raw) its JSON form as is."""
    return to_json_value_raw(payload) if raw else redact_structure(payload)


def to_json_value_raw(value: object) -> object:
    """``value`` as JSON-like data without any redaction (SDK objects dumped)."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        value = model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(name): to_json_value_raw(member) for name, member in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value_raw(element) for element in value]
    return value


def _redacted_repr(value: object) -> str:
    return redact_text(repr(value))  # a foreign object's repr may print its ciphertext


class CaptureWriter:
    """Writes request and stream captures to ``directory`` (SPEC H7, R3).

    ``unsafe_raw`` is resolved once, when the writer is made (see the module documentation).
    """

    __slots__ = ("_counter", "directory", "raw")

    def __init__(self, directory: Path, *, unsafe_raw: bool | None = None) -> None:
        self.directory: Final = Path(directory)
        self.raw: Final = raw_capture_enabled(unsafe_raw)
        self._counter = itertools.count(1)
        if self.raw:
            warnings.warn(
                f"{RAW_WARNING} ({self.directory})", UnsafeRawCaptureWarning, stacklevel=2
            )

    def _header(self, kind: str, label: str) -> dict[str, object]:
        header: dict[str, object] = {"capture": kind, "label": label, "raw": self.raw}
        if self.raw:
            header["warning"] = RAW_WARNING
        return header

    def _dumps(self, value: object, *, indent: int | None = None) -> str:
        # ensure_ascii: a line never holds U+2028 or other characters that split lines elsewhere.
        return json.dumps(
            value,
            ensure_ascii=True,
            indent=indent,
            separators=None if indent else (",", ":"),
            default=repr if self.raw else _redacted_repr,
        )

    def _write(self, name: str, data: str) -> Path:
        make_session_directory(self.directory)  # 0700 when created (SPEC H5)
        path = self.directory / f"{next(self._counter):04d}-{name}"
        write_private_atomic(path, data.encode("utf-8"))  # 0600, atomic (SPEC H5)
        if self.raw:
            _LOG.warning("raw capture written (contains replay state): %s", path)
        return path

    def write_request(self, label: str, payload: object) -> Path:
        """Write one request (or response) body; returns the file written."""
        document = self._header("request", label)
        document["payload"] = capture_payload(payload, raw=self.raw)
        text = self._dumps(document, indent=2) + "\n"
        return self._write(f"{safe_label(label)}.request.json", text)

    def write_events(self, label: str, events: Iterable[object]) -> Path:
        """Write stream events as JSON lines after a header line; returns the file written."""
        lines = [self._dumps(self._header("events", label))]
        lines += (self._dumps(capture_payload(event, raw=self.raw)) for event in events)
        return self._write(f"{safe_label(label)}.events.jsonl", "\n".join(lines) + "\n")
