"""The readings register (``conformance/readings/*.yaml``): each SPEC sentence found to read two
ways, the reading SPEC.md decided, and the MUST vectors that a program following the other reading
fails (SPEC §13, CL1: the suite decides).

``conformance check`` loads every file of the register, validates it against
``schemas/readings.schema.json`` and checks each entry against the suite: its rule is a rule of
SPEC.md, each case it names is a MUST vector, each test it names (a reading no operation can
show, such as a file's or a process's) exists, and the mutant it names, if any, is one of
``tools/suite_adequacy.py``. Tests and tools are looked for next to SPEC.md; an installed package
ships neither, so there only their names' form is checked, by the schema. Loading never raises
on bad data: every defect is a :class:`RegisterProblem`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from . import schemas
from .safe_yaml import load_yaml
from .vectors import MAX_VECTOR_FILE, Suite, first_non_json

READINGS_DIR: Final = "readings"  # beside vectors/, in the conformance directory
ADEQUACY_TOOL: Final = Path("tools", "suite_adequacy.py")  # relative to SPEC.md's directory
_MUTANT_DECORATOR: Final = "mutant"  # tools/suite_adequacy.py registers each mutant with it


@dataclass(frozen=True, slots=True)
class Reading:
    """One entry of the register: a sentence of ``rule``, its other reading, what SPEC decided,
    the MUST cases (or, where no operation shows the rule, the tests) that separate the two, and
    the mutant that implements the other reading."""

    rule: str
    sentence: str
    reading: str
    decided: str
    cases: tuple[str, ...]
    file: str
    index: int  # the entry's position in its file, from 0
    mutant: str | None = None
    tests: tuple[str, ...] = ()  # path::function, relative to SPEC.md's directory

    @property
    def where(self) -> str:
        return f"{self.file} #{self.index} [{self.rule}]"


@dataclass(frozen=True, slots=True)
class RegisterProblem:
    """One defect of the register. ``kind`` is a stable token (tests and tools filter on it)."""

    kind: str
    where: str
    message: str


def load_register(directory: Path) -> tuple[tuple[Reading, ...], tuple[RegisterProblem, ...]]:
    """Every entry of every ``*.yaml`` file under ``directory``, in file-name order, and the
    problems of the files that are unreadable, not YAML, or not of the register's schema (an
    entry that breaks the schema is left out). A missing directory is an empty register."""
    readings: list[Reading] = []
    problems: list[RegisterProblem] = []
    if not directory.is_dir():
        return (), ()
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    for path in files:
        rel = f"{READINGS_DIR}/{path.relative_to(directory).as_posix()}"
        entries, found = _read_file(path, rel)
        readings += entries
        problems += found
    return tuple(readings), tuple(problems)


def _read_file(path: Path, rel: str) -> tuple[list[Reading], list[RegisterProblem]]:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_VECTOR_FILE + 1)
    except OSError as exc:
        return [], [RegisterProblem("reading_io", rel, str(exc))]
    if len(data) > MAX_VECTOR_FILE:
        return [], [RegisterProblem("reading_io", rel, f"larger than {MAX_VECTOR_FILE} bytes")]
    try:
        doc = load_yaml(data)
    except yaml.YAMLError as exc:
        return [], [RegisterProblem("reading_yaml", rel, str(exc).replace("\n", " "))]
    bad = first_non_json(doc)
    if bad is not None:
        return [], [RegisterProblem("reading_yaml", rel, f"at {bad[0] or '/'}: {bad[1]}")]
    errors = schemas.all_errors(schemas.READINGS, doc)
    problems = [RegisterProblem("reading_schema", rel, str(error)) for error in errors]
    if not isinstance(doc, list):
        return [], problems
    bad_entries = {int(e.pointer.split("/")[1]) for e in errors if e.pointer.count("/") >= 1}
    entries = [
        _reading(raw, rel, index) for index, raw in enumerate(doc) if index not in bad_entries
    ]
    return entries, problems


def _reading(raw: dict[str, Any], file: str, index: int) -> Reading:
    return Reading(
        rule=raw["rule"],
        sentence=raw["sentence"],
        reading=raw["reading"],
        decided=raw["decided"],
        cases=tuple(raw["cases"]),
        file=file,
        index=index,
        mutant=raw.get("mutant"),
        tests=tuple(raw.get("tests", ())),
    )


def mutant_names(source: str) -> frozenset[str]:
    """The mutants ``tools/suite_adequacy.py`` defines: each function ``m_x_y`` decorated with
    ``@mutant(...)`` is the mutant ``x-y`` (the name the tool prints and takes with ``-k``)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(call, ast.Name) and call.id == _MUTANT_DECORATOR:
                names.add(node.name.removeprefix("m_").replace("_", "-"))
    return frozenset(names)


def adequacy_mutants(root: Path) -> frozenset[str] | RegisterProblem | None:
    """The mutant names of ``root/tools/suite_adequacy.py``; ``None`` where ``root`` has no
    ``tools`` directory (an installed package), a problem where the tool cannot be read."""
    if not (root / ADEQUACY_TOOL.parts[0]).is_dir():
        return None
    where = ADEQUACY_TOOL.as_posix()
    try:
        return mutant_names((root / ADEQUACY_TOOL).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return RegisterProblem("reading_mutants_unreadable", where, str(exc))
    except SyntaxError as exc:
        return RegisterProblem("reading_mutants_unreadable", where, f"not Python: {exc}")


def check_readings(
    readings: Iterable[Reading],
    rules: Collection[str],
    suite: Suite,
    mutants: Collection[str] | None,
    missing_test: Callable[[str], str | None] = lambda _test: None,
) -> list[RegisterProblem]:
    """Each entry's rule is one of ``rules``, each of its cases a MUST case of ``suite`` (by id
    or alias), each of its tests one that exists (``missing_test`` says why one does not), and
    its mutant one of ``mutants`` (not checked when ``mutants`` is ``None``)."""
    found: list[RegisterProblem] = []
    for reading in readings:
        where = reading.where
        if reading.rule not in rules:
            message = f"rule {reading.rule!r} is not a rule of SPEC.md"
            found.append(RegisterProblem("reading_rule_unknown", where, message))
        for name in reading.cases:
            case = suite.find(name)
            if case is None:
                message = f"case {name!r} is not a case of the suite"
                found.append(RegisterProblem("reading_case_missing", where, message))
            elif case.level != "MUST":
                message = f"case {name!r} is a {case.level} vector: only MUST vectors decide (CL1)"
                found.append(RegisterProblem("reading_case_not_must", where, message))
        for test in reading.tests:
            problem = missing_test(test)
            if problem is not None:
                found.append(RegisterProblem("reading_test_missing", where, problem))
        if reading.mutant is not None and mutants is not None and reading.mutant not in mutants:
            message = f"mutant {reading.mutant!r} is not a mutant of {ADEQUACY_TOOL.as_posix()}"
            found.append(RegisterProblem("reading_mutant_missing", where, message))
    return found
