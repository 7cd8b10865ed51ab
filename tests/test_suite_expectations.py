"""Expectations files: loading, matching through globs and aliases, staleness and updating."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from fakes.suite_fixture import case, write_suite
from reasoning_replay.suite.expectations import (
    Entry,
    Expectations,
    Judged,
    State,
    apply,
    dump_expectations,
    parse_expectations,
    stale_entries,
    updated,
)
from reasoning_replay.suite.outcomes import Detail, Outcome, Verdict
from reasoning_replay.suite.vectors import Case, load_vector_dirs


def cases(tmp_path: Path) -> tuple[Case, ...]:
    conf = write_suite(
        tmp_path,
        {
            "a.yaml": [
                case("read/legacy/one"),
                case("read/legacy/two"),
                case("read/version/new", aliases=["read/version-old"]),
            ]
        },
    )
    return load_vector_dirs([conf / "vectors"]).cases


def test_parse_valid_file() -> None:
    exp = parse_expectations(
        "implementation: x\nentries:\n"
        "  - {id: 'read/legacy/*', state: xfail, reason: r, link: 'https://e/1', code: c}\n",
        "f.yaml",
    )
    assert isinstance(exp, Expectations)
    assert exp.entries == (Entry("read/legacy/*", State.XFAIL, "r", "https://e/1", "c"),)


def test_invalid_file_gives_problems_with_pointers() -> None:
    got = parse_expectations("entries:\n  - {id: a, state: maybe}\n", "f.yaml")
    assert isinstance(got, list) and got
    assert all(p.path == "f.yaml" for p in got)
    assert any("reason" in p.message for p in got) or any("maybe" in p.message for p in got)


def test_reason_is_required() -> None:
    got = parse_expectations("entries:\n  - {id: a, state: xfail}\n", "f.yaml")
    assert isinstance(got, list) and "reason" in got[0].message


def test_globs_and_aliases_match(tmp_path: Path) -> None:
    one, two, new = cases(tmp_path)
    exp = Expectations.of(
        [
            Entry("read/legacy/*", State.XFAIL, "glob"),
            Entry("read/version-old", State.SKIP, "alias"),
            Entry("read/legacy/two", State.FLAKY, "exact beats glob"),
        ]
    )
    assert exp.lookup(one) == exp.entries[0]
    assert exp.lookup(two) == exp.entries[2]
    assert exp.lookup(new) == exp.entries[1]


def test_pinned_code_must_match_for_xfail() -> None:
    entry = Entry("a", State.XFAIL, "r", code="json_malformed")
    same = Verdict(Outcome.WRONG_CODE, Detail("m", expected_code="x", actual_code="json_malformed"))
    other = Verdict(Outcome.WRONG_CODE, Detail("m", expected_code="x", actual_code="else"))
    assert apply(same, entry).outcome is Outcome.XFAIL
    changed = apply(other, entry)
    assert changed.outcome is Outcome.WRONG_CODE
    assert changed.detail is not None and "the failure changed" in changed.detail.message


def test_xpass_when_an_xfail_passes() -> None:
    v = apply(Verdict(Outcome.PASS), Entry("a", State.XFAIL, "r"))
    assert v.outcome is Outcome.XPASS and v.underlying is Outcome.PASS


def test_stale_entries(tmp_path: Path) -> None:
    one, two, new = cases(tmp_path)
    exp = Expectations.of(
        [
            Entry("read/gone", State.XFAIL, "renamed away"),
            Entry("read/legacy/one", State.XFAIL, "fixed now"),
        ]
    )
    judged = [Judged(one, Verdict(Outcome.XPASS), exp.entries[1])]
    stale = stale_entries(exp, (one, two, new), judged)
    assert [(s.id, s.problem) for s in stale] == [
        ("read/gone", "matches_no_case"),
        ("read/legacy/one", "xpass"),
    ]


def test_update_adds_failures_drops_stale_and_keeps_reasons(tmp_path: Path) -> None:
    one, two, new = cases(tmp_path)
    exp = Expectations.of(
        [
            Entry("read/gone", State.XFAIL, "renamed away"),
            Entry("read/legacy/one", State.XFAIL, "fixed now"),
            Entry("read/version-old", State.XFAIL, "kept reason", code="old_code"),
        ],
        implementation="impl",
    )
    judged = [
        Judged(one, Verdict(Outcome.XPASS), exp.entries[1]),
        Judged(two, Verdict(Outcome.FALSE_REJECTION, Detail("got x", actual_code="x")), None),
        Judged(
            new, Verdict(Outcome.WRONG_CODE, Detail("m", actual_code="new_code")), exp.entries[2]
        ),
    ]
    new_exp = updated(exp, (one, two, new), judged, today=dt.date(2026, 1, 2))
    assert [(e.id, e.reason, e.code) for e in new_exp.entries] == [
        ("read/version-old", "kept reason", "new_code"),
        (
            "read/legacy/two",
            "recorded by --update-expectations on 2026-01-02: false_rejection got x",
            "x",
        ),
    ]
    again = parse_expectations(dump_expectations(new_exp), "round-trip")
    assert isinstance(again, Expectations) and again.entries == new_exp.entries
    with_reason = updated(exp, (one, two, new), judged[1:2], reason="tracked in #12")
    assert with_reason.entries[-1].reason == "tracked in #12"
