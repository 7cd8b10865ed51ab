"""Vector files (SPEC §13): loading, validation, ids and aliases, and the JSON bundle.

A suite is a set of vector directories (``conformance/vectors`` by default). Each YAML file holds
cases; a case is an operation input plus exactly one expectation (an output object or a reject
code). Loading never raises on bad data: problems are collected as :class:`VectorProblem` values
so that ``conformance check`` can list them all and ``conformance run`` can refuse to start.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from . import jsontext, schemas
from .safe_yaml import YAMLDuplicateKeyError, load_yaml_any_escape

LEVELS: Final = ("MUST", "SHOULD", "MAY")
BUNDLE_FORMAT: Final = 1
BUNDLE_NAME: Final = "vectors.bundle.json"
UNVERSIONED: Final = "unversioned"

# A vector file is a handful of cases; the bundled ones are under 200 KB.
MAX_VECTOR_FILE: Final = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Expect:
    """Exactly one of: the output object the operation returns, or the code it rejects with."""

    output: Mapping[str, Any] | None = None
    code: str | None = None

    @property
    def is_reject(self) -> bool:
        return self.code is not None

    def to_document(self) -> dict[str, Any]:
        if self.code is not None:
            return {"reject": {"code": self.code}}
        return {"output": self.output}


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    description: str
    spec: str
    operation: str
    level: str
    tags: tuple[str, ...]
    input: Mapping[str, Any]
    expect: Expect
    file: str
    aliases: tuple[str, ...] = ()
    comment: str | None = None
    # Output members this run leaves out of the comparison (SPEC CL2: a plan's record in the
    # items form, replay counters without telemetry); set by
    # ``applicability.prepared_case``, never by a vector file.
    unjudged: frozenset[str] = frozenset()

    @property
    def names(self) -> tuple[str, ...]:
        """The id and every alias: what ``-k`` patterns and expectations match against."""
        return (self.id, *self.aliases)

    def to_document(self, *, with_file: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {"id": self.id}
        if self.aliases:
            doc["aliases"] = list(self.aliases)
        doc |= {
            "description": self.description,
            "spec": self.spec,
            "operation": self.operation,
            "level": self.level,
            "tags": list(self.tags),
            "input": self.input,
            "expect": self.expect.to_document(),
        }
        if self.comment is not None:
            doc["comment"] = self.comment
        if with_file:
            doc["file"] = self.file
        return doc


@dataclass(frozen=True, slots=True)
class VectorProblem:
    """Something wrong with the suite's files. ``kind`` is a stable token for tests and tools."""

    kind: str  # io | too_large | yaml | not_json | schema | duplicate_id | bundle
    file: str
    message: str
    case_id: str | None = None
    pointer: str = ""

    def __str__(self) -> str:
        where = self.file + (f" [{self.case_id}]" if self.case_id else "")
        at = f" at {self.pointer}" if self.pointer else ""
        return f"{where}: {self.kind}{at}: {self.message}"


@dataclass(frozen=True, slots=True)
class Suite:
    cases: tuple[Case, ...]
    version: str
    sha256: str
    problems: tuple[VectorProblem, ...] = ()
    # id and alias -> case; built by make_suite, so lookups never rescan
    index: Mapping[str, Case] = field(default_factory=dict, repr=False, compare=False)

    def find(self, name: str) -> Case | None:
        """The case with this id, or whose aliases include it (ids renamed since)."""
        return self.index.get(name)

    @property
    def operations(self) -> tuple[str, ...]:
        return tuple(sorted({c.operation for c in self.cases}))


def make_suite(
    cases: Iterable[Case],
    version: str,
    sha256: str,
    problems: Iterable[VectorProblem] = (),
) -> Suite:
    """Build a suite, adding a ``duplicate_id`` problem for each id or alias used twice."""
    all_cases = tuple(cases)
    found = list(problems)
    index: dict[str, Case] = {}
    for case in all_cases:
        for name in case.names:
            other = index.get(name)
            if other is not None:
                found.append(
                    VectorProblem(
                        "duplicate_id",
                        case.file,
                        f"{name!r} is already used by case {other.id!r} in {other.file}",
                        case.id,
                    )
                )
                continue
            index[name] = case
    return Suite(all_cases, version, sha256, tuple(found), index)


# ---------------------------------------------------------------------------------------------
# Loading YAML vector directories


def suite_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 over path + NUL + bytes + NUL of every file, in sorted relative-path order."""
    h = hashlib.sha256()
    for rel, data in sorted(files, key=lambda f: f[0]):
        h.update(rel.encode("utf-8"))
        h.update(b"\0")
        h.update(data)
        h.update(b"\0")
    return h.hexdigest()


def read_suite_version(vectors_dir: Path) -> str:
    """``VERSION`` beside the vectors directory (``conformance/VERSION``)."""
    try:
        return (vectors_dir.parent / "VERSION").read_text(encoding="utf-8").strip() or UNVERSIONED
    except OSError:
        return UNVERSIONED


def vector_files(vectors_dir: Path) -> list[tuple[str, Path]]:
    """(relative path as recorded in bundles and hashes, file), e.g. ``vectors/read/x.yaml``."""
    found = [p for p in vectors_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(
        ((f"{vectors_dir.name}/{p.relative_to(vectors_dir).as_posix()}", p) for p in found),
        key=lambda item: item[0],
    )


def read_vector_files(dirs: Sequence[Path]) -> tuple[list[tuple[str, bytes]], list[VectorProblem]]:
    """(relative path, bytes) of every vector file under the directories, in order."""
    contents: list[tuple[str, bytes]] = []
    problems: list[VectorProblem] = []
    for directory in dirs:
        if not directory.is_dir():
            problems.append(VectorProblem("io", str(directory), "not a directory"))
            continue
        for rel, path in vector_files(directory):
            try:
                with path.open("rb") as f:
                    data = f.read(MAX_VECTOR_FILE + 1)
            except OSError as exc:
                problems.append(VectorProblem("io", rel, str(exc)))
                continue
            if len(data) > MAX_VECTOR_FILE:
                message = f"larger than {MAX_VECTOR_FILE} bytes (the limit for a vector file)"
                problems.append(VectorProblem("too_large", rel, message))
                continue
            contents.append((rel, data))
    return contents, problems


def load_vector_dirs(dirs: Sequence[Path]) -> Suite:
    """Load every ``*.yaml`` under each directory; the suite version comes from the first one."""
    contents, problems = read_vector_files(dirs)
    return _parse_all(contents, problems, dirs)


def _parse_all(
    contents: list[tuple[str, bytes]], problems: list[VectorProblem], dirs: Sequence[Path]
) -> Suite:
    cases: list[Case] = []
    for rel, data in contents:
        file_cases, file_problems = parse_vector_file(rel, data)
        cases.extend(file_cases)
        problems.extend(file_problems)
    version = read_suite_version(dirs[0]) if dirs else UNVERSIONED
    return make_suite(cases, version, suite_hash(contents), problems)


def load_suite(dirs: Sequence[Path]) -> Suite:
    """Like :func:`load_vector_dirs`, but read the cases from ``vectors.bundle.json`` beside a
    single vector directory when the bundle's hash equals the files' hash.

    Parsing and validating the YAML dominates start-up; a bundle with the same hash was written
    by ``conformance bundle`` from exactly these bytes (``conformance check`` compares it in full),
    so its cases are the same and the files need not be parsed again."""
    contents, problems = read_vector_files(dirs)
    if len(dirs) == 1 and not problems:
        digest = suite_hash(contents)
        bundle = dirs[0].parent / BUNDLE_NAME
        try:
            doc = jsontext.loads(bundle.read_bytes())
        except (OSError, jsontext.JSONTextError):
            doc = None
        if (
            isinstance(doc, dict)
            and doc.get("format") == BUNDLE_FORMAT
            and doc.get("sha256") == digest
            and doc.get("suite_version") == read_suite_version(dirs[0])
        ):
            try:
                cases = [case_from_document(raw, raw["file"]) for raw in doc["cases"]]
            except (KeyError, TypeError):
                pass  # not what `conformance bundle` writes: use the files
            else:
                return make_suite(cases, doc["suite_version"], digest)
    return _parse_all(contents, problems, dirs)


def parse_vector_file(rel: str, data: bytes) -> tuple[list[Case], list[VectorProblem]]:
    """Cases of one file plus its problems; a case with schema errors is left out."""
    try:
        doc = load_yaml_any_escape(data)
    except YAMLDuplicateKeyError as exc:
        return [], [VectorProblem("duplicate_key", rel, str(exc))]
    except yaml.YAMLError as exc:
        return [], [VectorProblem("yaml", rel, str(exc).replace("\n", " "))]
    bad = first_non_json(doc)
    if bad is not None:
        pointer, what = bad
        return [], [VectorProblem("not_json", rel, what, pointer=pointer)]
    errors = schemas.all_errors(schemas.VECTOR_FILE, doc)
    problems: list[VectorProblem] = []
    bad_cases: set[int] = set()
    file_level = False
    for err in errors:
        parts = err.pointer.split("/")
        if len(parts) >= 3 and parts[1] == "cases" and parts[2].isdigit():
            index = int(parts[2])
            bad_cases.add(index)
            case_id = _case_id_at(doc, index)
            problems.append(VectorProblem("schema", rel, err.message, case_id, err.pointer))
        else:
            file_level = True
            problems.append(VectorProblem("schema", rel, err.message, None, err.pointer))
    if file_level:
        return [], problems
    cases = [
        case_from_document(raw, rel) for i, raw in enumerate(doc["cases"]) if i not in bad_cases
    ]
    return cases, problems


def _case_id_at(doc: Any, index: int) -> str | None:
    try:
        value = doc["cases"][index]["id"]
    except (KeyError, IndexError, TypeError):
        return None
    return value if isinstance(value, str) else None


def case_from_document(raw: Mapping[str, Any], file: str) -> Case:
    """A case from a schema-valid document (vector file entry or bundle entry)."""
    expect_doc = raw["expect"]
    if "reject" in expect_doc:
        expect = Expect(code=expect_doc["reject"]["code"])
    else:
        expect = Expect(output=expect_doc["output"])
    return Case(
        id=raw["id"],
        description=raw["description"],
        spec=raw["spec"],
        operation=raw["operation"],
        level=raw["level"],
        tags=tuple(raw["tags"]),
        input=raw["input"],
        expect=expect,
        file=file,
        aliases=tuple(raw.get("aliases", ())),
        comment=raw.get("comment"),
    )


def first_non_json(value: Any, pointer: str = "") -> tuple[str, str] | None:
    """Where YAML produced something JSON cannot hold (dates, binary, non-string keys, NaN)."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (pointer, f"{value} is not a JSON number")
    if isinstance(value, list):
        for i, item in enumerate(value):
            bad = first_non_json(item, f"{pointer}/{i}")
            if bad is not None:
                return bad
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                kind = type(key).__name__
                return (pointer, f"member name {key!r} is a YAML {kind}, not a string")
            bad = first_non_json(item, f"{pointer}/{escape_pointer(key)}")
            if bad is not None:
                return bad
        return None
    return (pointer, f"YAML {type(value).__name__} value {value!r} has no JSON form (quote it)")


def escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


# ---------------------------------------------------------------------------------------------
# The bundle


def bundle_document(suite: Suite) -> dict[str, Any]:
    return {
        "format": BUNDLE_FORMAT,
        "suite_version": suite.version,
        "sha256": suite.sha256,
        "cases": [case.to_document() for case in suite.cases],
    }


def bundle_text(suite: Suite) -> str:
    return jsontext.dumps_pretty(bundle_document(suite)) + "\n"


def load_bundle(path: Path) -> Suite:
    """A suite from ``vectors.bundle.json`` (problems if it is unreadable or invalid)."""
    rel = path.name
    try:
        doc = jsontext.loads(path.read_bytes())
    except (OSError, jsontext.JSONTextError) as exc:
        return make_suite((), UNVERSIONED, "0" * 64, [VectorProblem("bundle", rel, str(exc))])
    errors = schemas.errors(schemas.VECTORS_BUNDLE, doc)
    if errors:
        problems = [VectorProblem("bundle", rel, e.message, pointer=e.pointer) for e in errors]
        return make_suite((), UNVERSIONED, "0" * 64, problems)
    cases = [case_from_document(raw, raw["file"]) for raw in doc["cases"]]
    return make_suite(cases, doc["suite_version"], doc["sha256"])
