"""The rule families of the results page, and a run report's MUST cases counted by family.

Each column of ``docs/implementations.md`` is a family of SPEC rules. A case belongs to the family
of its ``spec`` rule (the rule the vector pins, as the report records it), so the counts are
computed from each report's cases and never typed. Every rule in no family is counted under
``other``, so the families of one report add up to its MUST cases.

Only MUST cases are counted: they alone decide conformance (SPEC.md#levels); SHOULD and MAY
cases are listed in the HTML report with their level, never counted. A case *applies* when its
history form is one the implementation reads (else it is ``not_applicable``, SPEC.md#CL4) and its
operation is one the implementation declares (operations are conformance classes, SPEC.md §13:
an undeclared one is not claimed); a case of a declared operation that the implementation
skipped applies and did not pass.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

PROFILES: Final = ("verdict", "diagnostics")  # SPEC.md#profiles
PASS: Final = "pass"
NOT_APPLICABLE: Final = "not_applicable"
SKIPPED: Final = "skipped"
XFAIL: Final = "xfail"
MUST: Final = "MUST"


@dataclass(frozen=True, slots=True)
class Family:
    """A column of the page: a name, the SPEC rules (anchors) it counts, what they decide."""

    key: str
    title: str
    rules: tuple[str, ...]
    decides: str


FAMILIES: Final = (
    Family(
        "order",
        "order/P1",
        ("P1", "P2", "ST1", "CL3"),
        "each replay item exactly as stored, message by message, in output order, in either "
        "history form",
    ),
    Family("dedupe", "dedupe D1–D5", ("D1", "D2", "D3", "D4", "D5"), "reasoning deduplication"),
    Family("issuer", "issuer P4", ("P4",), "no item sent to a provider that did not issue it"),
    Family(
        "transports",
        "transports P3, F9",
        ("P3", "F9"),
        "the same input over HTTP/SSE and WebSocket; continuations",
    ),
    Family("xai", "xAI D7", ("D7",), "the xAI provider policy"),
    Family(
        "effort",
        "effort §9",
        ("F1", "F2", "F3", "F4", "F5", "F6", "F7", "F10", "F11", "F12"),
        "mid-conversation reasoning effort: baseline, where updates go, records, compaction",
    ),
    Family("key", "cache key K1–K4", ("K1", "K2", "K3", "K4"), "`prompt_cache_key`"),
    Family(
        "defaults",
        "P5 defaults",
        ("P5",),
        "`store: false` and the `include` entry, also with no configuration (the defaults probe)",
    ),
)
OTHER: Final = Family("other", "other rules", (), "every rule in no column above")
COLUMNS: Final = (*FAMILIES, OTHER)
_BY_RULE: Final = {rule: family for family in FAMILIES for rule in family.rules}


def family_of(rule: str) -> Family:
    """The family a case's ``spec`` rule belongs to (``other`` for a rule in no column)."""
    return _BY_RULE.get(rule, OTHER)


@dataclass(frozen=True, slots=True)
class Tally:
    """MUST cases of one family in one profile."""

    applicable: int = 0
    passed: int = 0
    skipped: int = 0
    xfail: int = 0  # failures the implementation's expectations file records
    unexpected: int = 0  # every other result that fails the run

    def plus(self, outcome: str, unexpected: bool) -> Tally:
        if outcome == NOT_APPLICABLE:
            return self
        return Tally(
            applicable=self.applicable + 1,
            passed=self.passed + (outcome == PASS),
            skipped=self.skipped + (outcome == SKIPPED),
            xfail=self.xfail + (outcome == XFAIL),
            unexpected=self.unexpected + unexpected,
        )


@dataclass(frozen=True, slots=True)
class ProfileTally:
    """One profile of one report: a tally per family key, and over all families."""

    families: Mapping[str, Tally] = field(default_factory=dict)
    total: Tally = Tally()

    def of(self, family: Family) -> Tally:
        return self.families.get(family.key, Tally())


def is_counted(case: Mapping[str, Any]) -> bool:
    return bool(case["level"] == MUST)


def tally(
    cases: Iterable[Mapping[str, Any]], profile: str, declared: Collection[str] | None = None
) -> ProfileTally:
    """A report's MUST cases counted per family in ``profile`` (each case's own outcome there);
    ``declared``: the operations the implementation declares (None: every operation)."""
    families: dict[str, Tally] = {}
    total = Tally()
    for case in cases:
        judged = case["profiles"].get(profile)
        if judged is None or not is_counted(case):
            continue
        if declared is not None and case["operation"] not in declared:
            continue
        key = family_of(case["spec"]).key
        unexpected = bool(judged["unexpected"])
        families[key] = families.get(key, Tally()).plus(judged["outcome"], unexpected)
        total = total.plus(judged["outcome"], unexpected)
    return ProfileTally(families, total)


def suite_counts(cases: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """MUST cases of the suite per family key (whatever their outcome)."""
    counts = dict.fromkeys((family.key for family in COLUMNS), 0)
    for case in cases:
        if is_counted(case):
            counts[family_of(case["spec"]).key] += 1
    return counts


def rules_outside(cases: Iterable[Mapping[str, Any]]) -> set[str]:
    """The rules of a report's MUST cases that no named family holds (the ``other`` column)."""
    return {case["spec"] for case in cases if is_counted(case) and case["spec"] not in _BY_RULE}


@dataclass(frozen=True, slots=True)
class CountedRun:
    """One implementation's run report, counted by family in every profile it was judged in."""

    key: str  # the report's file name without .json
    directory: str  # where the implementation lives, relative to the repository
    report: Mapping[str, Any]
    profiles: Mapping[str, ProfileTally]  # profile name -> tally; a profile not run is absent

    @property
    def name(self) -> str:
        info = self.report["implementation"]
        return self.key if info is None else str(info["name"])

    @property
    def version(self) -> str:
        info = self.report["implementation"]
        return "—" if info is None else str(info["version"])

    @property
    def language(self) -> str:
        info = self.report["implementation"]
        return "—" if info is None else str(info["language"])


def declared_operations(report: Mapping[str, Any]) -> frozenset[str] | None:
    """The operations the handshake declares; None when the handshake failed."""
    info = report["implementation"]
    return None if info is None else frozenset(info["operations"])


def counted(key: str, directory: str, report: Mapping[str, Any]) -> CountedRun:
    declared = declared_operations(report)
    profiles = {p: tally(report["cases"], p, declared) for p in PROFILES if p in report["profiles"]}
    return CountedRun(key, directory, report, profiles)
