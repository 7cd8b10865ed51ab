"""What the frameworks' reason tables share: a run's failures as expectations entries.

``tools/framework_reasons.py`` writes a framework's ``expectations.yaml`` from a run with this
module; each framework's module (``langchain_vercel_reasons.py``, ``pydantic_ai_reasons.py``,
``openai_agents_reasons.py``) gives its :class:`Framework`: its classes of difference, each with
the SPEC rules it breaks and the framework's function that makes it, and how a failing case's
output is sorted into them. Every failing case of the run gets one xfail entry whose reason
opens with ``SPEC <rules>: `` (the frameworks' tests require it); a case failing only in the
diagnostics profile gets ``profile: diagnostics``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[1]
if str(REPO / "reference_impl") not in sys.path:
    sys.path.insert(0, str(REPO / "reference_impl"))

from reasoning_replay.suite.vectors import Case, load_suite  # noqa: E402

#: the classes of difference of one framework: name → (the SPEC rules it breaks, ``/``-joined;
#: what the framework does, and where); reasons name the classes in the table's order
Differences = Mapping[str, tuple[str, str]]
#: the classes of difference between an expected and an actual value of one operation, given the
#: case's input as the adapter got it
Classify = Callable[[Any, Any, Mapping[str, Any]], set[str]]
#: a case's outcomes that make an entry (``xfail``: a run with expectations keeps its entries)
FAILED: Final = ("fail", "missed_rejection", "false_rejection", "wrong_code", "xfail")


@dataclass(frozen=True)
class Reason:
    """One entry's reason, whether a class of the table explains it, and the code it accepts."""

    text: str
    explained: bool = True
    code: str | None = None


@dataclass(frozen=True)
class Framework:
    """One framework's reasons: what its expectations file is written with."""

    name: str  # the expectations file's ``implementation``
    #: the reason of a case failing in the verdict profile, from the case and its report result
    verdict: Callable[[Case, Mapping[str, Any]], Reason]
    #: the reason of a case failing in the diagnostics profile only
    diagnostics: Callable[[Case, Mapping[str, Any]], Reason]
    #: only cases of this level get an entry (SPEC CL1: SHOULD and MAY are never pinned); None: all
    level: str | None = None


@dataclass(frozen=True)
class Classifiers:
    """How a framework sorts each operation's failing output into its classes."""

    input: Classify  # replay: expected input, actual input
    plan: Classify  # plan: expected request, actual request
    dedupe: Classify  # dedupe: expected output, actual output


def of_the_two_values(
    input: Callable[[Any, Any], set[str]], plan: Callable[[Any, Any], set[str]]
) -> Classifiers:
    """The classifiers of a framework whose classes depend on the expected and the actual value
    alone; a dedupe's, on its decisions (``decision_classes``)."""
    return Classifiers(
        input=lambda expected, actual, _: input(expected, actual),
        plan=lambda expected, actual, _: plan(expected, actual),
        dedupe=lambda expected, actual, _: decision_classes(expected, actual),
    )


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def output_classes(case: Case, detail: Mapping[str, Any], classify: Classifiers) -> set[str]:
    """The classes of a case whose output differs from the expected one (``defaults``: what is
    not set, SPEC P5)."""
    actual = json.loads(detail["response"])["output"]
    expected = case.expect.output or {}
    sent = json.loads(detail["request"])["input"]  # the case's input, as the adapter got it
    if case.operation == "plan":
        return classify.plan(expected["request"], actual["request"], sent)
    if case.operation == "dedupe":
        return classify.dedupe(expected, actual, sent)
    if case.operation == "defaults":
        return {"store"}
    return classify.input(expected["input"], actual["input"], sent)


def decision_classes(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> set[str]:
    """A dedupe's differing decisions: a duplicate kept, a conflict not kept, an item dropped."""
    found: set[str] = set()
    for want, got in zip(expected["decisions"], actual["decisions"], strict=True):
        if want == "drop_duplicate" and got != want:
            found.add("duplicate")
        elif want == "keep_conflict" and got != want:
            found.add("no-conflict")
        elif want != got:
            found.add("reasoning-missing")
    return found or {"no-conflict"}


def compose(differences: Differences, classes: Iterable[str], detail: Mapping[str, Any]) -> str:
    """``SPEC <rules>: <what>`` of the classes, in the table's order; a refusal adds the start of
    the framework's message."""
    ordered = [name for name in differences if name in set(classes)]
    rules: list[str] = []
    for name in ordered:
        for rule in differences[name][0].split("/"):
            if rule not in rules:
                rules.append(rule)
    text = "; ".join(differences[name][1] for name in ordered)
    if "refused" in ordered:
        message = json.loads(detail["response"]).get("reject", {}).get("message", "")
        text += f" ({message[:160]})"
    return f"SPEC {'/'.join(rules)}: {text}"


def no_diagnostics(differences: Differences) -> Callable[[Case, Mapping[str, Any]], Reason]:
    """The diagnostics reason of a framework that reports none: its ``no-diagnostics`` class,
    accepting the code it answered with."""

    def reason(case: Case, result: Mapping[str, Any]) -> Reason:
        detail = result["detail"]
        text = compose(differences, {"no-diagnostics"}, detail)
        return Reason(text, code=detail.get("actual_code") or None)

    return reason


def entries(
    framework: Framework, report: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The expectations entries of a run, and the cases no class explains."""
    suite = load_suite([REPO / "conformance" / "vectors"])
    cases = {case.id: case for case in suite.cases}
    out: list[dict[str, Any]] = []
    unexplained: list[str] = []
    for result in report["cases"]:
        verdict = result["profiles"]["verdict"]["outcome"]
        diagnostics = result["profiles"]["diagnostics"]["outcome"]
        if verdict not in FAILED and diagnostics not in FAILED:
            continue
        case = cases[result["id"]]
        if framework.level is not None and case.level != framework.level:
            continue
        entry: dict[str, Any] = {"id": result["id"], "state": "xfail"}
        if verdict in FAILED:
            reason = framework.verdict(case, result)
            entry["reason"] = reason.text
            if not reason.explained:
                unexplained.append(result["id"])
        else:
            reason = framework.diagnostics(case, result)
            entry["reason"] = reason.text
            entry["profile"] = "diagnostics"
        if reason.code:
            entry["code"] = reason.code
        out.append(entry)
    return out, unexplained
