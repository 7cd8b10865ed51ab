"""Expectations files (SPEC §13): an implementation's known failures (xfail), cases never to
run (skip) and cases allowed either way (flaky), each with a required reason.

Entries match case ids *and aliases*, so renaming a case (keeping its old id as an alias) does
not orphan expectations. The runner reports stale entries: ones that match no case, xfails that
pass, and xfails whose pinned code changed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from . import schemas
from .outcomes import FAILING, Detail, Outcome, Verdict
from .profiles import PROFILES, Profile
from .safe_yaml import load_yaml
from .vectors import Case

_GLOB_CHARS: Final = frozenset("*?[")


class State(StrEnum):
    XFAIL = "xfail"
    SKIP = "skip"
    FLAKY = "flaky"


@dataclass(frozen=True, slots=True)
class Entry:
    id: str  # an id, an alias, or a glob over them
    state: State
    reason: str
    link: str | None = None
    code: str | None = None
    profile: Profile | None = None  # None: every profile (SPEC.md#profiles)

    @property
    def is_glob(self) -> bool:
        return not _GLOB_CHARS.isdisjoint(self.id)

    def matches(self, case: Case) -> bool:
        if self.is_glob:
            return any(fnmatchcase(n, self.id) for n in case.names)
        return self.id in case.names

    def applies_to(self, profile: Profile) -> bool:
        return self.profile is None or self.profile is profile

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"id": self.id, "state": str(self.state), "reason": self.reason}
        if self.link is not None:
            doc["link"] = self.link
        if self.code is not None:
            doc["code"] = self.code
        if self.profile is not None:
            doc["profile"] = str(self.profile)
        return doc


@dataclass(frozen=True, slots=True)
class Expectations:
    entries: tuple[Entry, ...] = ()
    implementation: str | None = None
    # (exact name, profile or None) -> first entry naming them; globs are tried in file order
    _exact: Mapping[tuple[str, Profile | None], Entry] = field(
        default_factory=dict, repr=False, compare=False
    )
    # the file they were read from, as given (recorded in JSON reports); None when built in code
    source: str | None = field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        entries: Iterable[Entry],
        implementation: str | None = None,
        *,
        source: str | None = None,
    ) -> Expectations:
        items = tuple(entries)
        exact: dict[tuple[str, Profile | None], Entry] = {}
        for e in items:
            if not e.is_glob:
                exact.setdefault((e.id, e.profile), e)
        return cls(items, implementation, exact, source)

    def lookup(self, case: Case, profile: Profile = Profile.DIAGNOSTICS) -> Entry | None:
        """The entry for a case in ``profile``: an exact id/alias entry wins over globs (one
        scoped to the profile over one for every profile); first glob wins."""
        for name in case.names:
            hit = self._exact.get((name, profile)) or self._exact.get((name, None))
            if hit is not None:
                return hit
        for e in self.entries:
            if e.is_glob and e.applies_to(profile) and e.matches(case):
                return e
        return None

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.implementation is not None:
            doc["implementation"] = self.implementation
        doc["entries"] = [e.to_document() for e in self.entries]
        return doc


NO_EXPECTATIONS: Final = Expectations.of(())


@dataclass(frozen=True, slots=True)
class ExpectationsProblem:
    path: str
    message: str
    pointer: str = ""

    def __str__(self) -> str:
        return f"{self.path}{' at ' + self.pointer if self.pointer else ''}: {self.message}"


def parse_expectations(text: str, path: str) -> Expectations | list[ExpectationsProblem]:
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as exc:
        return [ExpectationsProblem(path, str(exc).replace("\n", " "))]
    if doc is None:
        doc = {"entries": []}
    errs = schemas.errors(schemas.EXPECTATIONS, doc, limit=20)
    if errs:
        return [ExpectationsProblem(path, e.message, e.pointer) for e in errs]
    entries = [
        Entry(
            id=raw["id"],
            state=State(raw["state"]),
            reason=raw["reason"],
            link=raw.get("link"),
            code=raw.get("code"),
            profile=Profile(raw["profile"]) if "profile" in raw else None,
        )
        for raw in doc["entries"]
    ]
    return Expectations.of(entries, doc.get("implementation"), source=path)


def load_expectations(path: Path) -> Expectations | list[ExpectationsProblem]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [ExpectationsProblem(str(path), str(exc))]
    return parse_expectations(text, str(path))


def dump_expectations(expectations: Expectations) -> str:
    return yaml.safe_dump(
        expectations.to_document(), sort_keys=False, allow_unicode=True, width=100
    )


# ---------------------------------------------------------------------------------------------
# Applying expectations to a verdict


def apply(verdict: Verdict, entry: Entry | None) -> Verdict:
    """The verdict once an expectation entry is taken into account (skip entries never run)."""
    if entry is None or entry.state is State.SKIP:
        return verdict
    raw = verdict.outcome
    if entry.state is State.FLAKY:
        if raw in FAILING:
            return replace(verdict, outcome=Outcome.XFAIL, underlying=raw)
        return verdict
    # xfail
    if raw is Outcome.PASS:
        detail = Detail(
            f"passed, but expectation {entry.id!r} says it fails: remove or narrow the entry"
        )
        return Verdict(Outcome.XPASS, detail, underlying=raw)
    if raw not in FAILING:
        return verdict
    if entry.code is not None and code_given(verdict) != entry.code:
        # The known failure changed shape: that is news, so it stays unexpected.
        base = verdict.detail or Detail(str(raw))
        message = (
            f"{base.message} (expectation {entry.id!r} pins code {entry.code!r}; "
            "the failure changed)"
        )
        return replace(verdict, detail=replace(base, message=message))
    return replace(verdict, outcome=Outcome.XFAIL, underlying=raw)


def code_given(verdict: Verdict) -> str | None:
    return verdict.detail.actual_code if verdict.detail is not None else None


def skip_verdict(entry: Entry) -> Verdict:
    return Verdict(Outcome.SKIPPED, Detail(f"skipped by expectation {entry.id!r}: {entry.reason}"))


# ---------------------------------------------------------------------------------------------
# Staleness and updating

StaleProblem = Literal["matches_no_case", "xpass", "code_changed"]


@dataclass(frozen=True, slots=True)
class StaleEntry:
    id: str
    problem: StaleProblem
    cases: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.problem == "matches_no_case":
            return f"{self.id}: matches no case in the suite (renamed or removed?)"
        if self.problem == "xpass":
            return f"{self.id}: expected to fail but passed: {', '.join(self.cases)}"
        return f"{self.id}: pinned code no longer matches the failure: {', '.join(self.cases)}"


@dataclass(frozen=True, slots=True)
class Judged:
    """What expectation updating needs from a result."""

    case: Case
    verdict: Verdict
    entry: Entry | None
    profile: Profile = Profile.DIAGNOSTICS


def stale_entries(
    expectations: Expectations, all_cases: Sequence[Case], judged: Iterable[Judged]
) -> tuple[StaleEntry, ...]:
    stale: list[StaleEntry] = [
        StaleEntry(e.id, "matches_no_case")
        for e in expectations.entries
        if not any(e.matches(c) for c in all_cases)
    ]
    xpass: dict[str, list[str]] = {}
    changed: dict[str, list[str]] = {}
    for j in judged:
        if j.entry is None:
            continue
        if j.verdict.outcome is Outcome.XPASS:
            xpass.setdefault(j.entry.id, []).append(j.case.id)
        elif (
            j.entry.state is State.XFAIL
            and j.entry.code is not None
            and j.verdict.outcome in FAILING
        ):
            changed.setdefault(j.entry.id, []).append(j.case.id)
    stale += [StaleEntry(k, "xpass", tuple(v)) for k, v in xpass.items()]
    stale += [StaleEntry(k, "code_changed", tuple(v)) for k, v in changed.items()]
    return tuple(stale)


def recorded_reason(verdict: Verdict, today: dt.date) -> str:
    """A factual reason for an entry written without --reason (never placeholder text)."""
    what = verdict.detail.message if verdict.detail else ""
    what = what if len(what) <= 160 else what[:157] + "..."
    return f"recorded by --update-expectations on {today.isoformat()}: {verdict.outcome} {what}"


def updated(
    existing: Expectations,
    all_cases: Sequence[Case],
    judged: Sequence[Judged],
    *,
    reason: str | None = None,
    today: dt.date | None = None,
    implementation: str | None = None,
) -> Expectations:
    """The expectations file after a run: stale exact entries dropped (or narrowed to the
    profiles where they still fail), a pinned code refreshed, an xfail entry added for each
    unexpected failure (scoped to its profile when it fails in only some of the run's profiles).
    Existing reasons are kept."""
    day = today or dt.datetime.now(dt.UTC).date()
    run_profiles = {j.profile for j in judged}
    drop: set[Entry] = {e for e in existing.entries if not any(e.matches(c) for c in all_cases)}
    recode: dict[Entry, str | None] = {}
    passed_in: dict[Entry, set[Profile]] = {}
    failed_in: dict[Entry, set[Profile]] = {}
    failing: dict[str, list[Judged]] = {}  # case id -> its unexpected failures without an entry
    for j in judged:
        outcome = j.verdict.outcome
        if j.entry is not None:
            if outcome is Outcome.XPASS:
                passed_in.setdefault(j.entry, set()).add(j.profile)
            elif outcome is Outcome.XFAIL:
                failed_in.setdefault(j.entry, set()).add(j.profile)
            if (
                not j.entry.is_glob
                and j.entry.state is State.XFAIL
                and j.entry.code is not None
                and outcome in FAILING
            ):
                # the pinned failure changed: re-pin it (or unpin when no code was given)
                recode[j.entry] = code_given(j.verdict)
        elif outcome in FAILING:
            failing.setdefault(j.case.id, []).append(j)
    rescope: dict[Entry, Profile] = {}
    for entry, passed in passed_in.items():
        still = failed_in.get(entry, set())
        if Profile.DIAGNOSTICS not in passed:
            # the diagnostics profile, not judged in, may still need it (a pass there would
            # imply a pass in the verdict profile: SPEC CL2)
            still |= set(PROFILES) - run_profiles
        if entry.profile is None and len(still) == 1 and not still & passed:
            rescope[entry] = next(iter(still))
        elif not entry.is_glob:
            drop.add(entry)
    kept = [
        replace(e, code=recode.get(e, e.code), profile=rescope.get(e, e.profile))
        for e in existing.entries
        if e not in drop
    ]
    added = [_new_entry(js, run_profiles, reason, day) for js in failing.values()]
    return Expectations.of(kept + added, implementation or existing.implementation)


def _new_entry(
    judged: Sequence[Judged], run_profiles: set[Profile], reason: str | None, day: dt.date
) -> Entry:
    # the diagnostics profile's failure says the most (its code); a verdict failure is the same
    j = max(judged, key=lambda x: x.profile is Profile.DIAGNOSTICS)
    scoped = {x.profile for x in judged} != run_profiles
    return Entry(
        id=j.case.id,
        state=State.XFAIL,
        reason=reason or recorded_reason(j.verdict, day),
        code=code_given(j.verdict),
        profile=j.profile if scoped and len(judged) == 1 else None,
    )
