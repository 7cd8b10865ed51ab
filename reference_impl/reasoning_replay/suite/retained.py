"""What a run keeps of each case for its reports (SPEC §13): bounded, whatever the adapter sends.

A run of thousands of cases must not hold every reply line: a passing case keeps no line at all,
and any other case keeps at most :data:`KEEP` bytes of each line, text and compared value, cut
with a marker that gives the whole's size and SHA-256 (so two runs can still be told apart).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from . import jsontext
from .compare import ABSENT

KEEP: Final = 64 * 1024  # bytes of each line, text or value kept per case


def _marker(size: int, sha256: str) -> str:
    return f"... [truncated: {size} bytes in all, sha256 {sha256}]"


@dataclass(frozen=True, slots=True)
class Kept:
    """At most :data:`KEEP` bytes of a line or text; ``sha256`` (of the whole) only when cut."""

    head: str
    size: int  # UTF-8 bytes of the whole
    sha256: str | None = None

    @classmethod
    def of(cls, data: bytes | str, keep: int = KEEP) -> Kept:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        if len(raw) <= keep:
            return cls(raw.decode("utf-8", "replace"), len(raw))
        # "ignore": a character cut in two at the boundary is dropped, not shown as U+FFFD
        head = raw[:keep].decode("utf-8", "ignore")
        return cls(head, len(raw), hashlib.sha256(raw).hexdigest())

    @property
    def complete(self) -> bool:
        return self.sha256 is None

    def render(self, limit: int = KEEP) -> str:
        """The text, cut to ``limit`` characters with the marker when it is longer (or was)."""
        if self.complete and len(self.head) <= limit:
            return self.head
        sha256 = self.sha256 or hashlib.sha256(self.head.encode("utf-8", "replace")).hexdigest()
        return self.head[:limit] + _marker(self.size, sha256)


def clip_text(text: str, keep: int = KEEP) -> str:
    """A message or traceback as kept: itself when short, else its head and the marker."""
    return text if len(text) <= keep // 4 else Kept.of(text, keep).render()


def bounded_value(value: Any, keep: int = KEEP) -> Any:
    """A compared JSON value as kept: itself when its JSON text fits, else that text cut, as a
    string with the marker (a report shows it; nothing compares it again)."""
    if value is None or value is ABSENT or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str) and len(value) <= keep // 4:
        return value
    text = jsontext.dumps_str(value)
    if len(text) <= keep // 4:
        return value
    kept = Kept.of(text, keep)
    return value if kept.complete else kept.render()
