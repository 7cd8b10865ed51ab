"""The traceability file, ``conformance/traceability.yaml`` (SPEC.md#conformance): each rule, or
part of a rule, that no operation of the vectors can show (files, processes, logs, the schemas,
the runner itself), with the reference's tests that check it instead and one line saying why.

SPEC.md names no test: a rule listed here says only that it is tested outside the vectors, and
where this file is. ``conformance check`` reads the file and verifies it against SPEC.md and the
repository's ``tests/`` (:mod:`reasoning_replay.suite.check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

import yaml

from . import schemas
from .safe_yaml import load_yaml

TRACEABILITY_NAME: Final = "traceability.yaml"


class VectorCoverage(StrEnum):
    """How much of a rule the vectors test."""

    NONE = "none"  # no operation shows the rule: it needs no vector
    PARTLY = "partly"  # the vectors test the rest of it, and are still required


@dataclass(frozen=True, slots=True)
class NamedTest:
    """One test: a file (relative to SPEC.md's directory) and a function in it."""

    path: str
    function: str

    @classmethod
    def parse(cls, word: str) -> NamedTest:
        """``path.py::function``, as the schema's pattern admits it."""
        path, _, function = word.partition("::")
        return cls(path, function)

    def __str__(self) -> str:
        return f"{self.path}::{self.function}"


@dataclass(frozen=True, slots=True)
class TracedRule:
    """One rule of the file: its anchor, how much the vectors test, why, and the tests."""

    rule: str
    vectors: VectorCoverage
    why: str
    tests: tuple[NamedTest, ...]


@dataclass(frozen=True, slots=True)
class Traceability:
    rules: tuple[TracedRule, ...] = ()

    @property
    def outside_only(self) -> frozenset[str]:
        """The rules that need no vector: no operation shows them."""
        return frozenset(r.rule for r in self.rules if r.vectors is VectorCoverage.NONE)


@dataclass(frozen=True, slots=True)
class TraceabilityProblem:
    """Why the file cannot be read: where (a JSON pointer into it) and what."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{'at ' + self.pointer + ': ' if self.pointer else ''}{self.message}"


def parse_traceability(text: str) -> Traceability | list[TraceabilityProblem]:
    """The file's rules, or every way it breaks ``traceability.schema.json``."""
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as exc:
        return [TraceabilityProblem("", str(exc).replace("\n", " "))]
    errs = schemas.all_errors(schemas.TRACEABILITY, doc)
    if errs:
        return [TraceabilityProblem(e.pointer, e.message) for e in errs]
    return Traceability(
        tuple(
            TracedRule(
                rule=raw["rule"],
                vectors=VectorCoverage(raw["vectors"]),
                why=raw["why"],
                tests=tuple(NamedTest.parse(word) for word in raw["tests"]),
            )
            for raw in doc["rules"]
        )
    )


def load_traceability(path: Path) -> Traceability | list[TraceabilityProblem]:
    """The file at ``path``; a suite without one traces no rule (each MUST rule then needs
    vectors, which ``conformance check`` reports)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Traceability()
    except (OSError, UnicodeDecodeError) as exc:
        return [TraceabilityProblem("", str(exc))]
    return parse_traceability(text)
