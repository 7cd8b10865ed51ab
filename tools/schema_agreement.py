"""Check that the envelope schema and the read vectors agree, under three validators (SPEC S2).

For every ``read`` vector not tagged ``beyond-schema``, the expectation (an output means a
resumable block, a rejection means not) must equal the verdict of the envelope schema on the
block's JSON value under Python ``jsonschema``, ``jsonschema-rs`` and Ajv (draft 2020-12, run by
Node from the JavaScript implementation's dependencies). Vectors tagged ``beyond-schema`` depend on
the I-JSON text rules (SPEC E4) that no schema can see, and are only counted.

    python tools/schema_agreement.py [--vectors DIR] [--no-ajv]

Exit status: 0 when every validator agrees with every vector, 1 otherwise, 2 when a validator
cannot run (e.g. Node or Ajv missing and --no-ajv not given).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema_rs
import yaml
from reasoning_replay.resources import data_path
from reasoning_replay.schemas import ENVELOPE_SCHEMA_ID, schema_documents, validator_for

REPO = Path(__file__).resolve().parents[1]
AJV_SCRIPT = REPO / "tools" / "ajv_verdicts.mjs"
BEYOND_SCHEMA = "beyond-schema"


@dataclass(frozen=True)
class SchemaCase:
    """A read vector whose verdict a schema can see: its id, block value and expected verdict."""

    id: str
    text: str
    value: Any
    resumable: bool


def read_cases(vectors: Path) -> tuple[list[SchemaCase], int]:
    """The schema-visible read cases, and how many read cases are beyond any schema."""
    cases, beyond = [], 0
    for path in sorted(vectors.rglob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")).get("cases", []):
            if case.get("operation") != "read":
                continue
            if BEYOND_SCHEMA in case.get("tags", []) or "text" not in case["input"]:
                beyond += 1
                continue
            value = json.loads(case["input"]["text"])
            resumable = "output" in case["expect"]
            cases.append(SchemaCase(case["id"], case["input"]["text"], value, resumable))
    return cases, beyond


def python_jsonschema() -> Callable[[Any], bool]:
    return validator_for(ENVELOPE_SCHEMA_ID).is_valid


def rust_jsonschema() -> Callable[[Any], bool]:
    # jsonschema-rs takes each document as a dict; schema_documents gives read-only mappings
    documents = {uri: dict(document) for uri, document in schema_documents().items()}
    registry = jsonschema_rs.Registry(list(documents.items()))
    validator = jsonschema_rs.validator_for(
        documents[ENVELOPE_SCHEMA_ID], registry=registry, offline=True
    )
    return validator.is_valid


def ajv_verdicts(texts: list[str]) -> list[bool]:
    """Ajv's verdicts for all texts in one Node process (schemas passed by directory).

    Each text travels as a JSON string, so Node parses the block text itself: a value such as
    ``1e400`` has no JSON form once Python has read it as infinity.
    """
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH")
    lines = "".join(json.dumps(text) + "\n" for text in texts)
    result = subprocess.run(
        [node, str(AJV_SCRIPT), str(data_path("schema")), ENVELOPE_SCHEMA_ID],
        input=lines,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"ajv_verdicts.mjs failed: {result.stderr.strip()}")
    return [line == "true" for line in result.stdout.splitlines()]


def disagreements(
    cases: list[SchemaCase], verdicts: list[bool]
) -> Iterator[tuple[SchemaCase, bool]]:
    for case, verdict in zip(cases, verdicts, strict=True):
        if verdict != case.resumable:
            yield case, verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=Path, default=data_path("conformance", "vectors"))
    parser.add_argument("--no-ajv", action="store_true", help="skip the Node/Ajv validator")
    args = parser.parse_args(argv)

    cases, beyond = read_cases(args.vectors)
    values = [case.value for case in cases]
    results: dict[str, list[bool]] = {
        "jsonschema (Python)": [python_jsonschema()(v) for v in values],
        "jsonschema-rs": [rust_jsonschema()(v) for v in values],
    }
    if not args.no_ajv:
        try:
            results["Ajv 2020"] = ajv_verdicts([case.text for case in cases])
        except RuntimeError as error:
            print(f"cannot run Ajv: {error}", file=sys.stderr)
            return 2

    print(f"{len(cases)} schema-visible read vectors, {beyond} beyond-schema (not compared)")
    failed = False
    for name, verdicts in results.items():
        wrong = list(disagreements(cases, verdicts))
        print(f"  {name:22} {len(cases) - len(wrong)} agree, {len(wrong)} disagree")
        for case, verdict in wrong:
            failed = True
            print(f"    {case.id}: schema says {'valid' if verdict else 'invalid'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
