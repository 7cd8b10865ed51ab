"""schema/reasoning-replay.v1.bundle.json (SPEC S1): every schema of schema/ in one compound
document, generated without drift, that validators given only that file use offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from reasoning_replay.schemas import (
    BUNDLE_FILE_NAME,
    BUNDLE_SCHEMA_ID,
    ENVELOPE_SCHEMA_ID,
    bundle_text,
    schema_documents,
    validator_for,
)

REPO = Path(__file__).resolve().parents[1]
BUNDLE_PATH = REPO / "schema" / BUNDLE_FILE_NAME
GOLDEN_TEXT = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":'
    '"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],'
    '"encrypted_content":"c"}}'
)
# A proxy nothing listens on: any download a tool tries fails instead of reaching the network.
NO_NETWORK = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}


def bundle() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BUNDLE_PATH.read_text(encoding="utf-8"))
    return document


def test_bundle_file_is_exactly_what_the_generator_makes_from_schema() -> None:
    expected = bundle_text(schema_documents())

    assert BUNDLE_PATH.read_text(encoding="utf-8") == expected, (
        f"{BUNDLE_PATH.relative_to(REPO)} is stale: run `python tools/release.py --sync`"
    )


def test_bundle_embeds_every_schema_unchanged_under_its_own_id() -> None:
    embedded = bundle()["$defs"]

    assert {document["$id"] for document in embedded.values()} == set(schema_documents())
    for document in embedded.values():
        assert document == schema_documents()[document["$id"]]


def test_bundle_is_a_draft_2020_12_schema_whose_root_is_the_envelope() -> None:
    document = bundle()

    Draft202012Validator.check_schema(document)
    assert document["$id"] == BUNDLE_SCHEMA_ID
    assert document["$ref"] == ENVELOPE_SCHEMA_ID


@pytest.mark.parametrize(
    "value",
    [
        json.loads(GOLDEN_TEXT),
        {**json.loads(GOLDEN_TEXT), "version": True},
        {**json.loads(GOLDEN_TEXT), "item": {"type": "reasoning"}},
        {**json.loads(GOLDEN_TEXT), "extra": 1},
        [],
    ],
    ids=["golden", "version-true", "item-incomplete", "extra-member", "not-object"],
)
def test_bundle_alone_gives_the_envelope_schemas_verdict(value: object) -> None:
    # No registry: every reference resolves inside the one document.
    alone = Draft202012Validator(bundle())

    assert alone.is_valid(value) == validator_for(ENVELOPE_SCHEMA_ID).is_valid(value)


def check_jsonschema() -> str:
    beside_python = Path(sys.executable).parent / "check-jsonschema"
    found = shutil.which("check-jsonschema") or str(beside_python)
    if not Path(found).exists():
        pytest.fail("check-jsonschema is missing: install the test extras (README's test command)")
    return found


@pytest.mark.parametrize(
    ("text", "status"),
    [(GOLDEN_TEXT, 0), (GOLDEN_TEXT.replace('"version":1', '"version":2'), 1)],
    ids=["golden-valid", "version-2-invalid"],
)
def test_check_jsonschema_validates_a_record_with_the_bundle_and_no_flag_offline(
    tmp_path: Path, text: str, status: int
) -> None:
    record = tmp_path / "record.json"
    record.write_text(text, encoding="utf-8")

    completed = subprocess.run(
        [check_jsonschema(), "--schemafile", str(BUNDLE_PATH), str(record)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, **NO_NETWORK},
        timeout=120,
    )

    assert completed.returncode == status, completed.stdout + completed.stderr
