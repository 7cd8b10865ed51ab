"""reasoning_replay.suite.pytest_cases and assert_case: the vectors as pytest parameters for another
Python implementation. The reference plays that implementation here, called directly, as the
example in conformance/README.md does."""

from __future__ import annotations

import pytest
from reasoning_replay.operations import dispatch
from reasoning_replay.suite import PROFILES, assert_case, pytest_cases, vector_cases
from reasoning_replay.suite.cases import UnknownSelection
from reasoning_replay.suite.vectors import Case


@pytest.mark.parametrize("case", pytest_cases(profile="configuration-update-ordering"))
def test_the_reference_passes_every_plan_vector_through_pytest_cases(case: Case) -> None:
    result = dispatch(case.operation, case.input)

    if result.code is not None:
        assert_case(case, code=result.code)
    else:
        assert_case(case, output=result.output)


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_profile_selects_exactly_its_operations(profile: str) -> None:
    actual = {case.operation for case in vector_cases(profile=profile)}

    assert actual == set(PROFILES[profile])


def test_the_profiles_cover_every_operation_of_the_suite() -> None:
    every = {case.operation for case in vector_cases()}

    assert every == {operation for ops in PROFILES.values() for operation in ops}


def test_params_are_the_cases_with_their_ids_in_suite_order() -> None:
    params = pytest_cases(operation=["read", "capture"], levels=["MUST"])
    cases = vector_cases(operation=["read", "capture"], levels=["MUST"])

    assert [param.id for param in params] == [case.id for case in cases]
    assert [param.values for param in params] == [(case,) for case in cases]
    assert {case.level for case in cases} == {"MUST"}
    assert {case.operation for case in cases} == {"read", "capture"}


def test_an_operation_outside_the_profile_selects_nothing() -> None:
    assert vector_cases(operation="read", profile="stored-history") == ()


@pytest.mark.parametrize(
    "selection",
    [{"operation": "raed"}, {"profile": "records"}, {"levels": ["MUST", "must"]}],
    ids=["operation", "profile", "level"],
)
def test_an_unknown_selection_is_refused_with_the_known_names(selection: dict[str, object]) -> None:
    known = r"not in the suite: .*operations: .*read.*levels: MUST"
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
