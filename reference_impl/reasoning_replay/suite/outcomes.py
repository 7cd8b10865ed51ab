"""Per-case outcomes (SPEC §13) and the pure function that judges a reply by its expectation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .compare import Mismatch, first_difference
from .protocol import (
    Crash,
    ErrorReply,
    Failure,
    OutputReply,
    ProtocolViolation,
    RejectReply,
    Reply,
    ReplyTooLong,
    SkippedReply,
    Timeout,
)
from .vectors import Expect


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # accepted, wrong output
    WRONG_CODE = "wrong_code"  # rejected with another code
    MISSED_REJECTION = "missed_rejection"  # expected a reject, got an output
    FALSE_REJECTION = "false_rejection"  # expected an output, got a reject
    ADAPTER_ERROR = "adapter_error"  # error reply, invalid message, wrong seq, garbage line
    REPLY_TOO_LONG = "reply_too_long"  # a reply line over the protocol's 16 MiB limit
    CRASH = "crash"  # the process died
    TIMEOUT = "timeout"  # no reply in time
    SKIPPED = "skipped"  # unsupported operation, skipped reply, or expectation skip
    NOT_APPLICABLE = "not_applicable"  # a history form the implementation does not read (CL4)
    XFAIL = "xfail"  # failed, as the expectations file says
    XPASS = "xpass"  # passed although the expectations file says it fails


ORDER: Final = tuple(Outcome)

# Outcomes that fail a run. A crash or timeout is never a correct rejection.
UNEXPECTED: Final = frozenset(
    {
        Outcome.FAIL,
        Outcome.WRONG_CODE,
        Outcome.MISSED_REJECTION,
        Outcome.FALSE_REJECTION,
        Outcome.ADAPTER_ERROR,
        Outcome.REPLY_TOO_LONG,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.XPASS,
    }
)
# Raw outcomes that an xfail or flaky expectation may absorb.
FAILING: Final = UNEXPECTED - {Outcome.XPASS}


@dataclass(frozen=True, slots=True)
class Detail:
    """Why a case did not simply pass; every field is optional except the message."""

    message: str
    mismatch: Mismatch | None = None
    expected_code: str | None = None
    actual_code: str | None = None
    traceback: str | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    detail: Detail | None = None
    # for xfail / xpass: the outcome the implementation actually produced
    underlying: Outcome | None = None


PASSED: Final = Verdict(Outcome.PASS)


def output_differs(mismatch: Mismatch) -> str:
    """The message of a ``fail``."""
    return f"output differs {mismatch.describe()}"


def judge(expect: Expect, reply: Reply | Failure) -> Verdict:
    """The outcome of one case, before expectations are applied."""
    match reply:
        case OutputReply(output):
            if expect.code is not None:
                return Verdict(
                    Outcome.MISSED_REJECTION,
                    Detail(
                        f"expected reject {expect.code!r}, got an output",
                        expected_code=expect.code,
                    ),
                )
            mismatch = first_difference(expect.output, output)
            if mismatch is None:
                return PASSED
            return Verdict(Outcome.FAIL, Detail(output_differs(mismatch), mismatch=mismatch))
        case RejectReply(code):
            if expect.code is None:
                return Verdict(
                    Outcome.FALSE_REJECTION,
                    Detail(f"expected an output, got reject {code!r}", actual_code=code),
                )
            if code == expect.code:
                return PASSED
            return Verdict(
                Outcome.WRONG_CODE,
                Detail(
                    f"expected reject {expect.code!r}, got reject {code!r}",
                    expected_code=expect.code,
                    actual_code=code,
                ),
            )
        case SkippedReply(reason):
            return Verdict(Outcome.SKIPPED, Detail(f"skipped by the adapter: {reason}"))
        case ErrorReply(message, tb):
            return Verdict(Outcome.ADAPTER_ERROR, Detail(f"adapter error: {message}", traceback=tb))
        case ProtocolViolation(message):
            return Verdict(Outcome.ADAPTER_ERROR, Detail(message))
        case ReplyTooLong():
            return Verdict(Outcome.REPLY_TOO_LONG, Detail(reply.message))
        case Crash(message):
            return Verdict(Outcome.CRASH, Detail(message))
        case Timeout(seconds):
            return Verdict(
                Outcome.TIMEOUT,
                Detail(
                    f"no reply within {seconds:g} s; the process was killed and restarted "
                    "(raise --timeout if this is not a hang; check that the adapter flushes "
                    "stdout after each line)"
                ),
            )
