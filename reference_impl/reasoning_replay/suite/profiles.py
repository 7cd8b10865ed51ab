"""Conformance profiles (SPEC.md#profiles): what a case's reply is compared on.

The *diagnostics* profile compares everything: the output exactly, a reject by its code. The
*verdict* profile compares what a provider and a user see: a reject of any code passes a reject
case, and an output is compared without the members that only carry diagnostic codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from .compare import first_difference
from .outcomes import PASSED, Detail, Outcome, Verdict, judge
from .protocol import Failure, OutputReply, RejectReply, Reply
from .vectors import Expect


class Profile(StrEnum):
    VERDICT = "verdict"
    DIAGNOSTICS = "diagnostics"


PROFILES: Final = (Profile.VERDICT, Profile.DIAGNOSTICS)

# Per operation, the output members the verdict profile leaves out (SPEC.md#profiles): each
# holds diagnostics, and what they locate is already visible in the members that stay.
_DIAGNOSTIC_MEMBERS: Final[Mapping[str, frozenset[str]]] = {
    "replay": frozenset({"diagnostics"}),
    "plan": frozenset({"diagnostics"}),
    "validate": frozenset({"findings"}),
}
# Per operation, the array of findings whose entries keep everything but their code.
_CODED_FINDINGS: Final[Mapping[str, str]] = {"scan": "findings"}


def verdict_view(operation: str, output: Mapping[str, Any]) -> dict[str, Any]:
    """``output`` as the verdict profile compares it."""
    dropped = _DIAGNOSTIC_MEMBERS.get(operation, frozenset())
    view = {k: v for k, v in output.items() if k not in dropped}
    coded = _CODED_FINDINGS.get(operation)
    if coded is not None and isinstance(view.get(coded), list):
        view[coded] = [
            {k: v for k, v in f.items() if k != "code"} if isinstance(f, dict) else f
            for f in view[coded]
        ]
    return view


def judge_in(profile: Profile, operation: str, expect: Expect, reply: Reply | Failure) -> Verdict:
    """The outcome of one case in ``profile``, before expectations are applied."""
    if profile is Profile.DIAGNOSTICS:
        return judge(expect, reply)
    if isinstance(reply, RejectReply) and expect.code is not None:
        return PASSED  # any code: the verdict is "not accepted"
    if isinstance(reply, OutputReply) and expect.output is not None:
        mismatch = first_difference(
            verdict_view(operation, expect.output), verdict_view(operation, reply.output)
        )
        if mismatch is None:
            return PASSED
        message = f"output differs {mismatch.describe()}"
        return Verdict(Outcome.FAIL, Detail(message, mismatch=mismatch))
    return judge(expect, reply)
