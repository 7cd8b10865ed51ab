"""The reference driven in-process (SPEC §13, PROTOCOL.md): no subprocess, no JSON lines.

It behaves exactly like the reference adapter program (both answer through :func:`call`) so that
an in-process run and ``--impl "python -m reasoning_replay.adapter"`` agree.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from . import protocol, runner_version
from .implementation import Exchange
from .protocol import (
    ErrorReply,
    Failure,
    ImplementationInfo,
    OutputReply,
    RejectReply,
    Reply,
    SkippedReply,
)
from .vectors import Case


class DispatchResult(Protocol):
    @property
    def output(self) -> Mapping[str, Any] | None: ...

    @property
    def code(self) -> str | None: ...


Dispatch = Callable[[str, Mapping[str, Any]], DispatchResult]

REFERENCE_NAME: Final = "reasoning-replay-reference"
REFERENCE_HISTORY_FORMATS: Final = ("channels", "items")


def reference_dispatch() -> tuple[Dispatch, tuple[str, ...]]:
    """The reference's dispatch function and operation names (imported late: the runner must
    work, e.g. for ``check`` and external adapters, even if the reference is broken)."""
    from reasoning_replay.operations import (  # noqa: PLC0415 - deliberately late
        OPERATIONS,
        dispatch,
    )

    return dispatch, tuple(OPERATIONS)


def reference_info(operations: Sequence[str]) -> ImplementationInfo:
    """The reference's handshake: it reads both history forms (SPEC CL3) and records an item's
    issuer per message (SPEC P4)."""
    return ImplementationInfo(
        name=REFERENCE_NAME,
        version=runner_version(),
        language="python",
        operations=tuple(operations),
        history_formats=REFERENCE_HISTORY_FORMATS,
        provenance="message",
    )


def call(
    dispatch: Dispatch, operations: Sequence[str], operation: str, input: Mapping[str, Any]
) -> Reply:
    """One request through ``dispatch``, as the reference adapter answers it."""
    if operation not in operations:
        return SkippedReply(f"operation {operation!r} is not implemented")
    try:
        # X_base64 members go through as they are: decoding them is the operation's job
        result = dispatch(operation, input)
    except Exception as exc:  # an input of the wrong shape, or a bug: never a verdict
        return ErrorReply(f"{type(exc).__name__}: {exc}", traceback.format_exc())
    if result.code is not None:
        return RejectReply(result.code)
    if result.output is None:
        return ErrorReply("dispatch returned neither an output nor a code")
    return OutputReply(result.output)


class InProcessImplementation:
    mode: Final = "in-process"

    def __init__(
        self, dispatch: Dispatch | None = None, operations: Sequence[str] | None = None
    ) -> None:
        self._dispatch = dispatch
        self._operations = tuple(operations) if operations is not None else None
        self.info: ImplementationInfo | None = None

    @property
    def command(self) -> None:
        return None

    @property
    def restarts(self) -> int:
        return 0

    @property
    def restart_causes(self) -> Mapping[str, int]:
        return {}

    def stderr_tail(self) -> str:
        return ""

    def start(self) -> ImplementationInfo | Failure:
        if self._dispatch is None:
            try:
                self._dispatch, ops = reference_dispatch()
            except Exception as exc:  # an import error in the reference is a start failure
                return protocol.Crash(f"cannot import the reference implementation: {exc!r}")
            if self._operations is None:
                self._operations = ops
        self.info = reference_info(self._operations or ())
        return self.info

    def run(self, seq: int, case: Case) -> Exchange:
        if self._dispatch is None:
            return Exchange(protocol.Crash("the reference implementation could not be loaded"))
        t0 = time.perf_counter()
        reply = call(self._dispatch, self._operations or (), case.operation, case.input)
        return Exchange(reply, duration_s=time.perf_counter() - t0)

    def run_batch(self, items: Iterable[tuple[int, Case]]) -> Iterator[Exchange]:
        for seq, case in items:
            yield self.run(seq, case)

    def close(self) -> None:
        return None
