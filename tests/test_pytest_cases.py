"""reasoning_replay.suite.pytest_cases and assert_case: the vectors as pytest parameters for another
Python implementation. The reference plays that implementation here, called directly, as the
example in conformance/README.md does."""

from __future__ import annotations

import pytest
from reasoning_replay.operations import dispatch
from reasoning_replay.suite import PARTS, assert_case, pytest_cases, vector_cases
from reasoning_replay.suite.cases import UnknownSelection
from reasoning_replay.suite.vectors import LEVELS, Case


@pytest.mark.parametrize("case", pytest_cases(part="configuration-update-ordering"))
def test_the_reference_passes_every_plan_vector_through_pytest_cases(case: Case) -> None:
    result = dispatch(case.operation, case.input)

    if result.code is not None:
        assert_case(case, code=result.code)
    else:
        assert_case(case, output=result.output)


@pytest.mark.parametrize("part", list(PARTS))
def test_a_part_selects_exactly_its_operations(part: str) -> None:
    actual = {case.operation for case in vector_cases(part=part)}

    assert actual == set(PARTS[part])


def test_the_parts_cover_every_operation_of_the_suite() -> None:
    every = {case.operation for case in vector_cases()}

    assert every == {operation for ops in PARTS.values() for operation in ops}


@pytest.mark.parametrize(
    ("selector", "one", "several"),
    [
        ("levels", "MUST", ["MUST", "SHOULD"]),
        ("operation", "read", ["read", "plan"]),
        ("part", "record", ["record", "stored-history"]),
        ("forms", "neutral", ["neutral", "storage"]),
        ("history_formats", "items", ["items", "channels"]),
    ],
)
def test_every_selector_takes_one_name_as_a_string_or_several_as_a_list(
    selector: str, one: str, several: list[str]
) -> None:
    by_string = vector_cases(**{selector: one})  # type: ignore[arg-type]
    by_list = vector_cases(**{selector: [one]})  # type: ignore[arg-type]
    by_tuple = vector_cases(**{selector: (*several,)})  # type: ignore[arg-type]
    by_both = vector_cases(**{selector: several})  # type: ignore[arg-type]

    assert by_string == by_list
    assert 0 < len(by_string) < len(by_both)
    assert by_tuple == by_both


def test_a_level_string_is_one_level_not_its_characters() -> None:
    params = pytest_cases(operation="read", levels="MUST")

    assert {param.values[0].level for param in params} == {"MUST"}  # type: ignore[union-attr]
    assert len(params) == len(vector_cases(operation="read", levels=["MUST"]))


def test_the_old_profile_keyword_still_selects_a_part_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="part="):
        old = pytest_cases(profile="stored-history")

    assert [p.id for p in old] == [p.id for p in pytest_cases(part="stored-history")]
    with pytest.warns(DeprecationWarning, match="PARTS"):
        from reasoning_replay.suite import PROFILES  # noqa: PLC0415

    assert PROFILES is PARTS


def test_a_conformance_profile_given_to_the_selection_points_to_assert_case() -> None:
    with pytest.raises(UnknownSelection, match=r"assert_case\(\.\.\., profile=\.\.\.\)"):
        pytest_cases(profile="verdict")
    with pytest.raises(TypeError, match="part= only"):
        vector_cases(part="record", profile="record")


def test_params_are_the_cases_with_their_ids_in_suite_order() -> None:
    params = pytest_cases(operation=["read", "capture"], levels=["MUST"])
    cases = vector_cases(operation=["read", "capture"], levels=["MUST"])

    assert [param.id for param in params] == [case.id for case in cases]
    assert [param.values for param in params] == [(case,) for case in cases]
    assert {case.level for case in cases} == {"MUST"}
    assert {case.operation for case in cases} == {"read", "capture"}


def test_an_operation_outside_the_part_selects_nothing() -> None:
    assert vector_cases(operation="read", part="stored-history") == ()


@pytest.mark.parametrize(
    "selection",
    [{"operation": "raed"}, {"part": "records"}, {"levels": ["MUST", "must"]}, {"levels": "M"}],
    ids=["operation", "part", "level", "level-string"],
)
def test_an_unknown_selection_is_refused_with_the_known_names(selection: dict[str, object]) -> None:
    known = r"not in the suite: .*operations: .*read.*levels: MUST.*parts: record"
    with pytest.raises(UnknownSelection, match=known):
        vector_cases(**selection)  # type: ignore[arg-type]


def first_case(*, rejects: bool) -> Case:
    return next(c for c in vector_cases(operation="read") if c.expect.is_reject == rejects)


def test_assert_case_names_the_case_rule_and_first_difference_of_a_wrong_output() -> None:
    case = first_case(rejects=False)
    wrong = {"item": {**case.expect.output["item"], "id": "other"}} if case.expect.output else {}

    with pytest.raises(AssertionError) as failed:
        assert_case(case, output=wrong)

    assert case.id in str(failed.value)
    assert case.spec in str(failed.value)
    assert "/item/id" in str(failed.value)


def test_assert_case_reports_a_wrong_code_and_a_missed_rejection() -> None:
    case = first_case(rejects=True)

    with pytest.raises(AssertionError, match="got reject 'not_a_code'"):
        assert_case(case, code="not_a_code")
    with pytest.raises(AssertionError, match="got an output"):
        assert_case(case, output={"item": {}})


def test_assert_case_wants_exactly_one_of_output_and_code() -> None:
    case = first_case(rejects=True)

    with pytest.raises(TypeError):
        assert_case(case)
    with pytest.raises(TypeError):
        assert_case(case, output={}, code="json_malformed")


def test_assert_case_takes_any_rejection_in_verdict_and_only_its_code_in_diagnostics() -> None:
    case = first_case(rejects=True)

    assert_case(case, code="not_a_code", profile="verdict")
    with pytest.raises(AssertionError, match=r", diagnostics\]: expected reject"):
        assert_case(case, code="not_a_code", profile="diagnostics")
    with pytest.raises(AssertionError, match=r", verdict\]: expected reject .*got an output"):
        assert_case(case, output={"item": {}}, profile="verdict")


def test_assert_case_leaves_out_diagnostics_members_in_the_verdict_profile() -> None:
    case = next(
        c
        for c in vector_cases(operation="replay", levels="MUST")
        if c.expect.output is not None and c.expect.output.get("diagnostics")
    )
    assert case.expect.output is not None
    other_diagnostics = {**case.expect.output, "diagnostics": []}

    assert_case(case, output=other_diagnostics, profile="verdict")
    with pytest.raises(AssertionError, match="/diagnostics"):
        assert_case(case, output=other_diagnostics)


def test_assert_case_refuses_an_unknown_profile() -> None:
    case = first_case(rejects=True)

    with pytest.raises(UnknownSelection, match="profiles: verdict, diagnostics"):
        assert_case(case, code=case.expect.code, profile="verdicts")


def test_the_levels_default_to_all_three() -> None:
    assert {case.level for case in vector_cases()} == set(LEVELS)
