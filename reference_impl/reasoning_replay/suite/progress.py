"""A one-line progress bar on stderr, only where a person watches (display only)."""

from __future__ import annotations

import time
from typing import Final, TextIO

from .runner import CaseResult

_WIDTH: Final = 30
_INTERVAL: Final = 0.1  # redraw at most ten times a second: drawing must not slow a fast run


class ProgressBar:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last = 0.0
        self._bad = 0
        self._drawn = False

    def __call__(self, done: int, total: int, result: CaseResult) -> None:
        if result.unexpected:
            self._bad += 1
        now = time.monotonic()
        if done != total and now - self._last < _INTERVAL:
            return
        self._last = now
        filled = _WIDTH * done // max(total, 1)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        note = f", {self._bad} unexpected" if self._bad else ""
        self._stream.write(f"\r[{bar}] {done}/{total}{note} {result.case.id[:40]:<40}")
        self._stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self._stream.write("\r" + " " * (_WIDTH + 80) + "\r")
            self._stream.flush()
