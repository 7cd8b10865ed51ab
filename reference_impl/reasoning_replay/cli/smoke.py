"""``conformance smoke``: check an adapter (handshake, messages, one case per operation) with
plain advice for adapter authors (conformance/PROTOCOL.md)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from typing import Any, TextIO

from reasoning_replay.suite import protocol
from reasoning_replay.suite.applicability import applicability, prepared_case
from reasoning_replay.suite.forms import HistoryFormat
from reasoning_replay.suite.governed import governed_reply
from reasoning_replay.suite.outcomes import Outcome, judge
from reasoning_replay.suite.protocol import (
    Crash,
    Failure,
    ImplementationInfo,
    ProtocolViolation,
    ReplyTooLong,
    Timeout,
)
from reasoning_replay.suite.runner import announced_formats, handshake_message
from reasoning_replay.suite.vectors import (
    Case,
    Suite,
)

from .options import (
    EXIT_OK,
    EXIT_UNEXPECTED,
    add_impl_options,
    add_vector_options,
    impl_from_args,
    repro_from_args,
    suite_from_args,
)


def add_smoke_parser(sub: Any) -> None:
    smoke = sub.add_parser(
        "smoke",
        help="check an adapter: handshake, messages, one case per op",
        description="Check an adapter program before a full run: the handshake, the shape of "
        "each message, and one case per operation it declares, with plain advice for each "
        "problem (conformance/PROTOCOL.md). Exit 0 when it speaks the protocol, 1 otherwise.",
    )
    add_vector_options(smoke)
    add_impl_options(smoke, required=True)


_ADVICE_TIMEOUT = (
    "no reply in time: write each reply as one line and flush stdout after it "
    "(Python: print(..., flush=True); Node: process.stdout.write is fine; "
    "Go/Rust/C: flush the buffered writer)"
)
_ADVICE_GARBAGE = "stdout must carry only protocol lines: send logs and debug output to stderr"


def _advice(failure: Failure) -> str:
    if isinstance(failure, Timeout):
        return _ADVICE_TIMEOUT
    if isinstance(failure, Crash):
        return "the program died: run it by hand with the request line below and read stderr"
    if isinstance(failure, ReplyTooLong):
        return f"a reply line may be at most {failure.limit} bytes (see PROTOCOL.md, Transport)"
    if isinstance(failure, ProtocolViolation):
        if "seq" in failure.message:
            return "copy the request's seq into the reply unchanged"
        if failure.desync:
            return _ADVICE_GARBAGE
        return "fix the message to match conformance/schemas/protocol/ (see PROTOCOL.md)"
    return ""


def _pick_smoke_cases(
    suite: Suite, operations: Sequence[str], formats: Sequence[HistoryFormat]
) -> list[tuple[Case, HistoryFormat | None]]:
    """One case per operation that applies to the implementation's history forms (SPEC CL4),
    preferring an accepted output (it exercises the most), with the form its history goes in."""
    picked = []
    for op in operations:
        of_op = [
            (c, applies.history_format)
            for c in suite.cases
            if c.operation == op and (applies := applicability(c, formats)).applies
        ]
        if of_op:
            picked.append(next((p for p in of_op if not p[0].expect.is_reject), of_op[0]))
    return picked


def _note_operations(out: TextIO, operations: Sequence[str], suite: Suite) -> None:
    unknown = sorted(set(operations) - set(suite.operations))
    missing = sorted(set(suite.operations) - set(operations))
    if unknown:
        out.write(f"     note: the suite has no operation {', '.join(unknown)}\n")
    if missing:
        out.write(f"     note: not supported, their cases will be skipped: {', '.join(missing)}\n")


def _write_stderr(out: TextIO, text: str) -> None:
    lines = text.strip().splitlines()[-15:]
    if lines:
        out.write("     stderr (tail):\n" + "".join(f"       {ln}\n" for ln in lines))


def cmd_smoke(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    suite = suite_from_args(args)
    impl = impl_from_args(args)
    problems = 0

    def say(ok: bool, text: str) -> None:
        nonlocal problems
        problems += 0 if ok else 1
        out.write(f"{'ok ' if ok else 'BAD'}  {text}\n")

    # From the start on, inside: a signal while it waits for the handshake stops the adapter too.
    try:
        info = impl.start()
        if isinstance(info, ImplementationInfo):
            say(True, f"handshake: {info.label()}, operations {', '.join(info.operations) or '-'}")
            operations = list(info.operations)
            formats = announced_formats(info)
            out.write(f"     history formats: {', '.join(formats)}\n")
            _note_operations(out, operations, suite)
        else:
            say(False, f"handshake: {handshake_message(info)}")
            start_cmd = f"echo '{protocol.START_LINE.decode().strip()}' | {args.impl}"
            out.write(f"     advice: {_advice(info)}\n     try: {start_cmd}\n")
            _write_stderr(out, impl.stderr_tail())
            if not args.oneshot:
                return EXIT_UNEXPECTED
            # one-shot: try every operation anyway, each case in the form it is written in
            operations = list(suite.operations)
            formats = tuple(HistoryFormat)
        repro = repro_from_args(args)
        picked = _pick_smoke_cases(suite, operations, formats)
        for seq, (vector, history_format) in enumerate(picked, start=1):
            case = prepared_case(vector, history_format, frozenset())
            ex = impl.run(seq, case)
            if isinstance(ex.reply, (Crash, Timeout, ProtocolViolation, ReplyTooLong)):
                say(False, f"{case.operation}: {case.id}: {handshake_message(ex.reply)}")
                out.write(f"     advice: {_advice(ex.reply)}\n")
                out.write(f"     try: {repro.request_command(case.id, history_format)}\n")
                _write_stderr(out, ex.stderr or "")
                continue
            verdict = judge(case.expect, governed_reply(case, ex.reply))
            if verdict.outcome is Outcome.ADAPTER_ERROR:
                msg = verdict.detail.message if verdict.detail else ""
                say(False, f"{case.operation}: {case.id}: {msg}")
                continue
            note = (
                ""
                if verdict.outcome is Outcome.PASS
                else (f" (protocol fine; the case's outcome is {verdict.outcome}: run the suite)")
            )
            say(True, f"{case.operation}: {case.id}: valid reply{note}")
    finally:
        impl.close()
    if problems:
        out.write(f"{problems} problem(s); see conformance/PROTOCOL.md\n")
        return EXIT_UNEXPECTED
    out.write(
        "the adapter speaks the protocol; now run: conformance run --impl "
        f"{shlex.quote(args.impl)}{' --oneshot' if args.oneshot else ''}\n"
    )
    return EXIT_OK
