"""A file's path as output text (SPEC H7): what the history tools print and report for a path.

Above both file safety (:mod:`.safe_files`) and redaction (:mod:`.text_redaction`): a path is
redacted as any text is.
"""

from __future__ import annotations

import os
from pathlib import Path

from .text_redaction import redact_text


def display_path(path: Path | str) -> str:
    """A path as text that any output can carry: bytes that are not UTF-8 (file names are
    bytes on POSIX) are written as ``\\xNN`` escapes, and a secret in the name (``token=...``,
    a ciphertext) is redacted as any text is (SPEC H7: no output echoes one)."""
    raw = os.fsencode(path)
    return redact_text(raw.decode("utf-8", errors="backslashreplace"))
