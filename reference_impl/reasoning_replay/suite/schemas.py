"""The conformance JSON Schemas (SPEC §13), loaded and compiled once per process.

Every schema lives in ``conformance/schemas/`` (found through :func:`data_path`). Validation runs
per protocol message, so compiled validators are cached: never compile per case.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasoning_replay.resources import data_path

from . import jsontext

if TYPE_CHECKING:  # jsonschema is imported on first use: a run from the bundle never needs it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

VECTOR_FILE = "vector-file.schema.json"
VECTORS_BUNDLE = "vectors-bundle.schema.json"
EXPECTATIONS = "expectations.schema.json"
REPORT = "report.schema.json"
READINGS = "readings.schema.json"
VALIDATE_REPORT = "validate-report.schema.json"
SCAN_REPORT = "scan-report.schema.json"
START_REQUEST = "protocol/start-request.schema.json"
START_RESPONSE = "protocol/start-response.schema.json"
RUN_REQUEST = "protocol/run-request.schema.json"
RUN_RESPONSE = "protocol/run-response.schema.json"
STOP_REQUEST = "protocol/stop-request.schema.json"
TRACEABILITY = "traceability.schema.json"
ITEMS_HISTORY = "protocol/items-history.schema.json"

ALL = (
    VECTOR_FILE,
    VECTORS_BUNDLE,
    EXPECTATIONS,
    REPORT,
    READINGS,
    VALIDATE_REPORT,
    SCAN_REPORT,
    START_REQUEST,
    START_RESPONSE,
    RUN_REQUEST,
    RUN_RESPONSE,
    STOP_REQUEST,
    TRACEABILITY,
    ITEMS_HISTORY,
)


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One way an instance fails a schema: where (a JSON pointer) and why."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


def schemas_dir() -> Path:
    return data_path("conformance", "schemas")


@cache
def _documents() -> dict[str, dict[str, Any]]:
    root = schemas_dir()
    return {name: jsontext.loads((root / name).read_bytes()) for name in ALL}


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource  # noqa: PLC0415 - see TYPE_CHECKING above

    resources = [(doc["$id"], Resource.from_contents(doc)) for doc in _documents().values()]
    return Registry().with_resources(resources)


def document(name: str) -> dict[str, Any]:
    return _documents()[name]


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - see TYPE_CHECKING above

    return Draft202012Validator(_documents()[name], registry=_registry())


def _pointer(error: ValidationError) -> str:
    parts = (str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)
    return "".join("/" + p for p in parts)


def errors(name: str, instance: Any, limit: int = 5) -> tuple[SchemaError, ...]:
    """The most relevant schema errors (at most ``limit``), empty when the instance is valid."""
    from jsonschema.exceptions import best_match  # noqa: PLC0415 - see TYPE_CHECKING above

    v = validator(name)
    if v.is_valid(instance):
        return ()
    found = list(_take(v.iter_errors(instance), 200))
    best = best_match(found)
    ordered = [best] + [e for e in found if e is not best]
    return tuple(SchemaError(_pointer(e), e.message) for e in ordered[:limit])


def all_errors(name: str, instance: Any) -> tuple[SchemaError, ...]:
    """Every schema error, in the validator's order (for linting whole files)."""
    v = validator(name)
    if v.is_valid(instance):
        return ()
    return tuple(SchemaError(_pointer(e), e.message) for e in v.iter_errors(instance))


def _take(it: Iterator[ValidationError], n: int) -> Iterator[ValidationError]:
    for i, item in enumerate(it):
        if i >= n:
            return
        yield item
