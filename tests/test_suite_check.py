"""``conformance check`` catches each kind of suite defect (on small fixture suites)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from fakes.suite_fixture import SPEC, case, write_suite
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.suite.traceability import Traceability, load_traceability
from reasoning_replay.suite.vectors import bundle_text, load_vector_dirs

REPO: Final = Path(__file__).resolve().parents[1]


def good_cases() -> list[dict[str, Any]]:
    return [
        case("x/echo", spec="X1"),
        case("x/bad", reject="bad_value", spec="X2"),
        case("x/other", reject="other_code", spec="X2"),
    ]


def checked(
    tmp_path: Path, cases: list[dict[str, Any]], *, spec: str = SPEC, bundle: bool = True
) -> list[str]:
    conf = write_suite(tmp_path, {"x/a.yaml": cases}, spec=spec)
    if bundle:
        (conf / "vectors.bundle.json").write_text(bundle_text(load_vector_dirs([conf / "vectors"])))
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")
    return [p.kind for p in problems]


def test_spec_parsing_finds_anchors_must_rules_and_registry() -> None:
    doc = parse_spec(SPEC)
    assert doc.anchors == {"intro", "X1", "X2", "X3"}  # not the one in a code block
    assert doc.must_rules == ("X1", "X2")  # X3 is SHOULD; 'intro' is no rule
    assert [(e.code, e.anchor) for e in doc.registry] == [("bad_value", "X2"), ("other_code", "X2")]


def test_a_good_suite_has_no_problems(tmp_path: Path) -> None:
    assert checked(tmp_path, good_cases()) == []


def test_schema_violation(tmp_path: Path) -> None:
    bad = case("x/level", level="must")
    assert "schema" in checked(tmp_path, [*good_cases(), bad])


def test_duplicate_id_and_alias(tmp_path: Path) -> None:
    dup = case("x/two", aliases=["x/echo"])
    assert "duplicate_id" in checked(tmp_path, [*good_cases(), dup])


def test_unknown_anchor(tmp_path: Path) -> None:
    assert "unknown_anchor" in checked(tmp_path, [*good_cases(), case("x/y", spec="Q9")])


def test_unknown_code(tmp_path: Path) -> None:
    c = case("x/y", reject="not_registered", spec="X2")
    assert "unknown_code" in checked(tmp_path, [*good_cases(), c])


def test_unused_registry_code(tmp_path: Path) -> None:
    assert "unused_code" in checked(tmp_path, good_cases()[:2])


def test_uncovered_must_rule(tmp_path: Path) -> None:
    cases = [c for c in good_cases() if c["spec"] != "X1"]
    assert checked(tmp_path, cases) == ["uncovered_must"]


def test_description_with_should_or_too_long(tmp_path: Path) -> None:
    should = case("x/s", description="the reader should refuse this")
    long = case("x/l", description="x" * 150)
    kinds = checked(tmp_path, [*good_cases(), should, long])
    assert kinds.count("description") == 1 and "schema" in kinds  # length is in the schema


def test_bad_byte_member(tmp_path: Path) -> None:
    c = case("x/b")
    c["input"] = {"text_base64": "not base64!"}
    assert "byte_member" in checked(tmp_path, [*good_cases(), c])


def test_an_expected_output_with_members_its_profile_row_does_not_list(tmp_path: Path) -> None:
    # SPEC.md#profiles lists every member of a validate output; a new one must be placed there
    listed = {"findings": [], "counts": {}, "replays_as_stored": True, "provider_mismatch": 0}
    extra = case("x/validate-extra", operation="validate", expect={"output": {**listed, "n": 1}})
    short = case("x/validate-short", operation="validate", expect={"output": {"findings": []}})
    good = case("x/validate", operation="validate", expect={"output": listed})

    assert checked(tmp_path, [*good_cases(), good, extra, short]) == [
        "output_members",
        "output_members",
    ]


def test_stale_and_missing_bundle(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"x/a.yaml": good_cases()})
    (conf / "vectors.bundle.json").write_text(bundle_text(load_vector_dirs([conf / "vectors"])))
    (conf / "vectors" / "x" / "b.yaml").write_text(
        "description: later\ncases:\n- id: x/later\n  description: d\n  spec: X1\n"
        "  operation: echo\n  level: MUST\n  tags: [form:storage]\n  input: {}\n"
        "  expect: {output: {}}\n"
    )
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")
    assert [p.kind for p in problems] == ["bundle_stale"]
    assert checked(tmp_path / "other", good_cases(), bundle=False) == ["bundle_missing"]


def test_missing_spec_and_registry(tmp_path: Path) -> None:
    no_registry = SPEC.split("<!-- registry:start -->")[0]
    kinds = checked(tmp_path, good_cases(), spec=no_registry)
    assert "registry_missing" in kinds
    conf = write_suite(tmp_path / "s", {"x/a.yaml": good_cases()})
    problems, _ = check_suite(conf, tmp_path / "s" / "NOPE.md")
    assert "spec_missing" in [p.kind for p in problems]


# A rule tested outside the vectors says so in SPEC.md and links conformance/traceability.yaml,
# which names its tests; check finds each one next to SPEC.md.
OUTSIDE = SPEC.replace(
    "An implementation MUST echo the value.",
    "An implementation MUST echo the value. It is tested outside the vectors "
    "(`conformance/traceability.yaml`).",
)
TRACED_ECHO = """rules:
- rule: X1
  vectors: {vectors}
  why: echoing writes a file, which no operation shows
  tests: [{tests}]
"""


def checked_outside(
    tmp_path: Path,
    tests: str = "tests/test_echo.py::test_echo_writes_the_file",
    *,
    spec: str = OUTSIDE,
    vectors: str = "none",
    traceability: str = TRACED_ECHO,
    cases: list[dict[str, Any]] | None = None,
) -> list[str]:
    """The problem kinds of a suite whose rule X1 has no vector, with a traceability file."""
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / "tests" / "test_echo.py").write_text(
        "def test_echo_writes_the_file() -> None:\n    assert True\n"
    )
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "traceability.yaml").write_text(
        traceability.format(tests=tests, vectors=vectors)
    )
    if cases is None:
        cases = [c for c in good_cases() if c["spec"] != "X1"]
    return checked(tmp_path, cases, spec=spec)


def test_a_rule_the_traceability_file_names_with_existing_tests_needs_no_vector(
    tmp_path: Path,
) -> None:
    assert checked_outside(tmp_path) == []


def test_a_rule_tested_only_partly_outside_the_vectors_still_needs_one(tmp_path: Path) -> None:
    assert checked_outside(tmp_path / "a", vectors="partly") == ["uncovered_must"]
    assert checked_outside(tmp_path / "b", vectors="partly", cases=good_cases()) == []


def test_a_named_test_that_does_not_exist_is_a_problem(tmp_path: Path) -> None:
    tests = "tests/test_echo.py::test_echo_is_gone, tests/test_gone.py::test_echo_writes_the_file"

    assert checked_outside(tmp_path, tests) == ["outside_test_missing", "outside_test_missing"]


def test_a_named_test_under_a_directory_absent_next_to_spec_is_checked_for_form_only(
    tmp_path: Path,
) -> None:
    # An installed package ships SPEC.md without the repository's tests.
    tests = "tests/test_echo.py::test_echo_writes_the_file, other/test_x.py::test_elsewhere"

    assert checked_outside(tmp_path, tests) == []


def test_a_traceability_file_against_its_schema_is_a_problem(tmp_path: Path) -> None:
    # a test that is not path.py::function, and no reason given
    bad = TRACED_ECHO.replace("why: echoing writes a file, which no operation shows\n", "")

    kinds = checked_outside(tmp_path, "tests/test_echo.py", traceability=bad)

    assert "traceability" in kinds and "uncovered_must" in kinds  # nothing is traced


def test_a_traced_rule_that_spec_does_not_have_or_lists_twice_is_a_problem(
    tmp_path: Path,
) -> None:
    twice = TRACED_ECHO + TRACED_ECHO.removeprefix("rules:\n")
    unknown = TRACED_ECHO + TRACED_ECHO.removeprefix("rules:\n").replace("X1", "Q7")

    assert "traceability_duplicate" in checked_outside(tmp_path / "a", traceability=twice)
    assert checked_outside(tmp_path / "b", traceability=unknown) == ["traceability_unknown_rule"]


def test_spec_and_the_traceability_file_name_the_same_rules(tmp_path: Path) -> None:
    # X1 is traced but its text does not say so; X2 says so but is not traced
    unlinked = SPEC.replace(
        "An implementation MUST reject with the given code.",
        "An implementation MUST reject with the given code (`conformance/traceability.yaml`).",
    )

    assert checked_outside(tmp_path, spec=unlinked) == [
        "traceability_unlinked",
        "traceability_unlisted",
    ]


def test_a_tested_outside_vectors_marker_left_in_spec_is_a_problem(tmp_path: Path) -> None:
    marked = OUTSIDE.replace(
        "## Intro\n", "## Intro\n\n<!-- tested-outside-vectors: tests/test_echo.py::test_x -->\n"
    )
    in_a_code_block = OUTSIDE.replace("```\n<a", "```\n<!-- tested-outside-vectors -->\n<a")

    assert checked_outside(tmp_path / "a", spec=marked) == ["outside_marker_in_spec"]
    assert checked_outside(tmp_path / "b", spec=in_a_code_block) == []
    assert parse_spec(marked).outside_vectors_markers == (6,)


def test_a_suite_without_a_traceability_file_traces_no_rule(tmp_path: Path) -> None:
    cases = [c for c in good_cases() if c["spec"] != "X1"]

    assert checked(tmp_path, cases, spec=OUTSIDE) == ["uncovered_must", "traceability_unlisted"]


def test_the_repository_traceability_file_is_valid_and_complete() -> None:
    problems, _ = check_suite(REPO / "conformance", REPO / "SPEC.md")

    assert [str(p) for p in problems] == []
    traced = load_traceability(REPO / "conformance" / "traceability.yaml")
    assert isinstance(traced, Traceability)
    assert {"H5", "H7", "S1", "S3", "levels", "profiles"} <= traced.outside_only
