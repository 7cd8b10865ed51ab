"""``conformance check`` catches each kind of suite defect (on small fixture suites)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes.suite_fixture import SPEC, case, write_suite
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.suite.vectors import bundle_text, load_vector_dirs


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


# A rule tested outside the vectors names its tests; check finds each one next to SPEC.md.
OUTSIDE = SPEC.replace(
    "An implementation MUST echo the value.",
    "An implementation MUST echo the value. <!-- tested-outside-vectors: {tests} -->",
)


def checked_outside(tmp_path: Path, tests: str) -> list[str]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_echo.py").write_text(
        "def test_echo_writes_the_file() -> None:\n    assert True\n"
    )
    cases = [c for c in good_cases() if c["spec"] != "X1"]
    return checked(tmp_path, cases, spec=OUTSIDE.replace("{tests}", tests))


def test_a_rule_whose_marker_names_an_existing_test_needs_no_vector(tmp_path: Path) -> None:
    assert checked_outside(tmp_path, "tests/test_echo.py::test_echo_writes_the_file") == []


def test_a_marker_that_names_no_test_is_a_problem(tmp_path: Path) -> None:
    bare = SPEC.replace(
        "An implementation MUST echo the value.",
        "An implementation MUST echo the value. <!-- tested-outside-vectors -->",
    )
    cases = [c for c in good_cases() if c["spec"] != "X1"]

    assert checked(tmp_path, cases, spec=bare) == ["outside_test_unnamed"]


def test_a_marker_word_that_is_not_a_test_reference_is_a_problem(tmp_path: Path) -> None:
    tests = "tests/test_echo.py::test_echo_writes_the_file somewhere"

    assert checked_outside(tmp_path, tests) == ["outside_test_unnamed"]


def test_a_named_test_that_does_not_exist_is_a_problem(tmp_path: Path) -> None:
    tests = "tests/test_echo.py::test_echo_is_gone tests/test_gone.py::test_echo_writes_the_file"

    assert checked_outside(tmp_path, tests) == ["outside_test_missing", "outside_test_missing"]


def test_a_named_test_under_a_directory_absent_next_to_spec_is_checked_for_form_only(
    tmp_path: Path,
) -> None:
    # An installed package ships SPEC.md without the repository's tests.
    tests = "tests/test_echo.py::test_echo_writes_the_file other/test_x.py::test_elsewhere"

    assert checked_outside(tmp_path, tests) == []


def test_spec_parsing_reads_the_tests_a_marker_names() -> None:
    doc = parse_spec(OUTSIDE.replace("{tests}", "tests/a.py::test_one,\n tests/b.py::test_two"))
    rule = next(r for r in doc.rules if r.anchor == "X1")

    assert doc.must_rules == ("X2",)
    assert [(t.path, t.function) for t in rule.outside_tests[0]] == [
        ("tests/a.py", "test_one"),
        ("tests/b.py", "test_two"),
    ]
