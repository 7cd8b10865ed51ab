"""The readings register (conformance/readings/*.yaml) and its check in ``conformance check``:
every entry names a rule of SPEC.md, MUST cases of the suite and, if any, a mutant of
tools/suite_adequacy.py; a bad entry fails the check (on small fixture suites), and the
repository's register passes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.suite_fixture import case, write_suite
from reasoning_replay.cli.main import main
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.readings import (
    READINGS_DIR,
    adequacy_mutants,
    load_register,
    mutant_names,
)
from reasoning_replay.suite.vectors import bundle_text, load_vector_dirs

REPO = Path(__file__).resolve().parents[1]

ADEQUACY = """
def mutant(rule, reading):
    return lambda apply: apply


@mutant("X1", "the value is echoed twice")
def m_echo_twice(p):
    pass


@mutant(
    "X2",
    "any code rejects",
)
def m_any_code(p):
    pass


def m_not_registered(p):
    pass
"""


def entry(**changes: Any) -> dict[str, Any]:
    """A register entry that passes the check against the fixture suite of :func:`checked`."""
    good: dict[str, Any] = {
        "rule": "X1",
        "sentence": "An implementation MUST echo the value.",
        "reading": "the value is echoed twice",
        "decided": "the value is echoed once",
        "cases": ["x/echo"],
        "mutant": "echo-twice",
    }
    good.update(changes)
    return {name: value for name, value in good.items() if value is not None}


def checked(tmp_path: Path, register: object, *, tools: bool = True) -> list[str]:
    """The kinds of problem ``conformance check`` finds in a fixture suite with ``register`` as
    its one readings file (and a tools/suite_adequacy.py beside SPEC.md unless ``tools`` is
    false)."""
    cases = [
        case("x/echo", spec="X1"),
        case("x/bad", reject="bad_value", spec="X2"),
        case("x/other", reject="other_code", spec="X2"),
        case("x/quick", spec="X3", level="SHOULD"),
    ]
    conf = write_suite(tmp_path, {"x/a.yaml": cases})
    (conf / "vectors.bundle.json").write_text(bundle_text(load_vector_dirs([conf / "vectors"])))
    (conf / READINGS_DIR).mkdir()
    (conf / READINGS_DIR / "branch.yaml").write_text(yaml.safe_dump(register, sort_keys=False))
    if tools:
        (tmp_path / "tools").mkdir()
        (tmp_path / "tools" / "suite_adequacy.py").write_text(ADEQUACY)
        (tmp_path / "tests").mkdir()
        (tmp_path / "tests" / "test_files.py").write_text(
            "def test_a_crash_leaves_nothing() -> None:\n    assert True\n"
        )
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")
    return [p.kind for p in problems]


def test_a_good_register_has_no_problems(tmp_path: Path) -> None:
    register = [entry(), entry(rule="X2", cases=["x/bad", "x/other"], mutant="any-code")]
    assert checked(tmp_path, register) == []


def test_the_mutant_is_optional(tmp_path: Path) -> None:
    assert checked(tmp_path, [entry(mutant=None)]) == []


def test_a_reading_no_vector_shows_names_its_tests_instead(tmp_path: Path) -> None:
    outside = entry(cases=[], tests=["tests/test_files.py::test_a_crash_leaves_nothing"])
    assert checked(tmp_path, [outside]) == []


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (entry(rule="X9"), "reading_rule_unknown"),
        (entry(rule="intro"), "reading_rule_unknown"),  # an anchor, but no rule
        (entry(cases=["x/echo", "x/nowhere"]), "reading_case_missing"),
        (entry(cases=["x/quick"]), "reading_case_not_must"),
        (entry(mutant="echo-thrice"), "reading_mutant_missing"),
        (entry(mutant="not-registered"), "reading_mutant_missing"),  # no @mutant decorator
        (entry(cases=[]), "reading_schema"),  # no case and no test: nothing pins it
        (entry(cases=[], tests=["tests/test_files.py::test_gone"]), "reading_test_missing"),
        (entry(tests=["tests/test_none.py::test_a_crash_leaves_nothing"]), "reading_test_missing"),
        (entry(tests=["not a test"]), "reading_schema"),
        (entry(decided=None), "reading_schema"),
        (entry(extra="member"), "reading_schema"),
        (entry(mutant="Echo_Twice"), "reading_schema"),
    ],
)
def test_a_bad_entry_fails_the_check(tmp_path: Path, bad: dict[str, Any], kind: str) -> None:
    assert checked(tmp_path, [entry(), bad]) == [kind]


def test_a_register_file_that_is_no_list_of_entries_is_a_problem(tmp_path: Path) -> None:
    assert checked(tmp_path, {"readings": [entry()]}) == ["reading_schema"]


def test_a_register_file_that_is_not_yaml_is_a_problem(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"x/a.yaml": [case("x/echo")]})
    (conf / READINGS_DIR).mkdir()
    (conf / READINGS_DIR / "broken.yaml").write_text("- rule: [unclosed\n")
    _, problems = load_register(conf / READINGS_DIR)
    assert [p.kind for p in problems] == ["reading_yaml"]


def test_without_tools_beside_spec_the_mutant_is_not_looked_up(tmp_path: Path) -> None:
    """An installed package ships SPEC.md and the register but not tools/: only the form of a
    mutant's name is checked there."""
    assert checked(tmp_path, [entry(mutant="echo-thrice")], tools=False) == []


def test_an_unreadable_adequacy_tool_is_one_problem(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "suite_adequacy.py").write_text("def broken(:\n")
    found = adequacy_mutants(tmp_path)
    assert not isinstance(found, frozenset) and found is not None
    assert found.kind == "reading_mutants_unreadable"


def test_mutant_names_are_the_decorated_functions_with_dashes() -> None:
    assert mutant_names(ADEQUACY) == {"echo-twice", "any-code"}


def test_conformance_check_exits_1_on_a_bad_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checked(tmp_path, [entry(cases=["x/nowhere"])])
    status = main(["check", "--suite", str(tmp_path / "conformance")])
    out = capsys.readouterr().out
    assert status == 1
    assert "[reading_case_missing]" in out and "readings/branch.yaml #0 [X1]" in out


def test_the_repository_register_is_complete_and_checked() -> None:
    readings, problems = load_register(REPO / "conformance" / READINGS_DIR)
    assert problems == ()
    assert {"E4-limits", "U1", "F12", "F9", "H1", "H3", "ST3"} <= {r.rule for r in readings}
    mutants = adequacy_mutants(REPO)
    assert isinstance(mutants, frozenset)
    assert all(r.mutant in mutants for r in readings if r.mutant is not None)
    problems_of_check, _ = check_suite(REPO / "conformance", REPO / "SPEC.md")
    assert [p for p in problems_of_check if p.kind.startswith("reading")] == []
