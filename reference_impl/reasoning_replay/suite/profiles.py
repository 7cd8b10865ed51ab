"""Conformance profiles (SPEC.md#profiles): what a case's reply is compared on.

The *diagnostics* profile compares everything: the output exactly, a reject by its code. The
*verdict* profile compares what a provider and a user see: a reject of any code passes a reject
case, and an output is compared without the members that only carry diagnostic codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class OutputMembers:
    """One row of the table of SPEC.md#profiles: an operation's output members that the verdict
    profile compares exactly, and those it leaves out because they carry diagnostics only (what
    they locate is already visible in the members that stay). Together they are every member
    of the operation's output."""

    compared: frozenset[str]
    left_out: frozenset[str] = frozenset()
    # an array of findings compared entry by entry without each entry's ``code``
    coded_findings: str | None = None

    @property
    def members(self) -> frozenset[str]:
        return self.compared | self.left_out


def _members(*names: str) -> frozenset[str]:
    return frozenset(names)


# SPEC.md#profiles, row by row. `validate`'s provider_mismatch counts the blocks that would not
# replay to the file's provider: a verdict, so it is compared (tests/test_spec_citability.py
# checks this table against SPEC.md's).
OUTPUT_MEMBERS: Final[Mapping[str, OutputMembers]] = {
    "read": OutputMembers(_members("item")),
    "capture": OutputMembers(_members("envelope_text")),
    "replay": OutputMembers(_members("input", "counters"), _members("diagnostics")),
    "dedupe": OutputMembers(_members("decisions", "counters")),
    "redact": OutputMembers(_members("payload")),
    "telemetry": OutputMembers(_members("counters")),
    "plan": OutputMembers(_members("request", "record"), _members("diagnostics")),
    "defaults": OutputMembers(_members("request")),
    "validate": OutputMembers(
        _members("counts", "replays_as_stored", "provider_mismatch"), _members("findings")
    ),
    "export": OutputMembers(_members("history")),
    "scan": OutputMembers(_members("findings"), coded_findings="findings"),
}


def verdict_view(operation: str, output: Mapping[str, Any]) -> dict[str, Any]:
    """``output`` as the verdict profile compares it: without the members the operation's row
    leaves out, and its coded findings without their codes. Every other member, one the table
    does not name included, is compared as it is."""
    row = OUTPUT_MEMBERS.get(operation)
    if row is None:
        return dict(output)
    view = {k: v for k, v in output.items() if k not in row.left_out}
    coded = row.coded_findings
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
