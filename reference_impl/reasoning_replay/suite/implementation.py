"""What the runner drives (SPEC §13): an implementation, in-process or behind an adapter program."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from .protocol import Failure, ImplementationInfo, Reply
from .vectors import Case


@dataclass(frozen=True, slots=True)
class Exchange:
    """What happened for one request: the reply (or the failure observed instead) plus the raw
    lines for reports. ``stderr`` is what the adapter logged while handling this request."""

    reply: Reply | Failure
    request: bytes | None = None
    response: bytes | None = None
    stderr: str | None = None
    duration_s: float | None = None


class Implementation(Protocol):
    @property
    def mode(self) -> str:
        """``in-process``, ``persistent`` or ``oneshot`` (recorded in reports)."""
        ...

    @property
    def command(self) -> tuple[str, ...] | None: ...

    @property
    def restarts(self) -> int: ...

    @property
    def restart_causes(self) -> Mapping[str, int]:
        """Why the adapter was restarted: each cause with how many restarts it led to (their
        sum is ``restarts``)."""
        ...

    def start(self) -> ImplementationInfo | Failure:
        """Handshake: the implementation's metadata, or why it could not be had."""
        ...

    def run(self, seq: int, case: Case) -> Exchange: ...

    def run_batch(self, items: Iterable[tuple[int, Case]]) -> Iterator[Exchange]:
        """One exchange per item, in order (an implementation may overlap them)."""
        ...

    def close(self) -> None: ...

    def stderr_tail(self) -> str: ...
