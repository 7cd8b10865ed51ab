"""The JSON Schemas (SPEC §9, S1–S3): valid draft 2020-12, stable $ids, resolvable offline."""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from reasoning_replay import (
    canonicalize_completed_reasoning_output_item,
    parse_reasoning_replay_envelope,
    redact_reasoning_replay_for_diagnostics,
    schema_registry,
    validator_for,
)
from reasoning_replay.schemas import (
    CACHE_STATE_RECORD_SCHEMA_ID,
    CONFIGURATION_UPDATE_SCHEMA_ID,
    DIAGNOSTIC_CODES_SCHEMA_ID,
    DIAGNOSTIC_VIEW_SCHEMA_ID,
    ENVELOPE_SCHEMA_ID,
    ITEM_SCHEMA_ID,
    PROVIDER_NAMES_SCHEMA_ID,
    SCHEMA_NAMESPACE,
    TELEMETRY_SCHEMA_ID,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMA_DIR = REPO / "schema"
SCHEMA_FILES = sorted(SCHEMA_DIR.glob("*.schema.json"))
NAMESPACE = "urn:reasoning-replay:schema:"

GOLDEN_TEXT = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":'
    '"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],'
    '"encrypted_content":"c"}}'
)
EXPECTED_IDS = {
    NAMESPACE + "reasoning-replay.v1",
    NAMESPACE + "reasoning-item.v1",
    NAMESPACE + "reasoning-diagnostic-view.v1",
    NAMESPACE + "replay-telemetry.v1",
    NAMESPACE + "configuration-update.v1",
    NAMESPACE + "cache-state-record.v1",
    NAMESPACE + "diagnostic-codes.v1",
    NAMESPACE + "provider-names.v1",
}


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def refs_in(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for name, member in value.items():
            if name == "$ref" and isinstance(member, str):
                yield member
            else:
                yield from refs_in(member)
    elif isinstance(value, list):
        for element in value:
            yield from refs_in(element)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a schema lookup tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_schema_directory_holds_exactly_the_documents_of_s1() -> None:
    actual = {load(path)["$id"] for path in SCHEMA_FILES}

    assert actual == EXPECTED_IDS
    assert len(SCHEMA_FILES) == len(EXPECTED_IDS)


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_schema_is_a_valid_draft_2020_12_schema(path: Path) -> None:
    document = load(path)

    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_schema_id_is_under_the_namespace_and_matches_its_file_name(path: Path) -> None:
    actual = load(path)["$id"]

    assert actual.startswith(NAMESPACE)
    assert actual == NAMESPACE + path.name.removesuffix(".schema.json")


def test_module_constants_name_the_schema_ids() -> None:
    assert SCHEMA_NAMESPACE == NAMESPACE
    assert {
        ENVELOPE_SCHEMA_ID,
        ITEM_SCHEMA_ID,
        DIAGNOSTIC_VIEW_SCHEMA_ID,
        TELEMETRY_SCHEMA_ID,
        CONFIGURATION_UPDATE_SCHEMA_ID,
        CACHE_STATE_RECORD_SCHEMA_ID,
        DIAGNOSTIC_CODES_SCHEMA_ID,
        PROVIDER_NAMES_SCHEMA_ID,
    } == EXPECTED_IDS


@pytest.mark.usefixtures("no_network")
def test_registry_holds_every_schema_by_id() -> None:
    registry = schema_registry()

    for schema_id in EXPECTED_IDS:
        resource = registry.get_or_retrieve(schema_id).value
        assert resource.contents["$id"] == schema_id


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_registry_resolves_every_ref_offline(path: Path) -> None:
    document = load(path)
    resolver = schema_registry().resolver(base_uri=document["$id"])
    refs = list(refs_in(document))

    for ref in refs:
        resolved = resolver.lookup(ref)
        assert isinstance(resolved.contents, dict)


def test_envelope_schema_refers_to_the_item_schema_by_its_id() -> None:
    envelope = load(SCHEMA_DIR / "reasoning-replay.v1.schema.json")

    assert list(refs_in(envelope)) == [ITEM_SCHEMA_ID]


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_reference_is_local_or_an_absolute_id_that_invites_no_fetch(path: Path) -> None:
    # SPEC S1: a URN cannot be a base for relative references, so a reference between
    # documents names the other document's $id whole.
    ids = {load(other)["$id"] for other in SCHEMA_FILES}

    for ref in refs_in(load(path)):
        assert ref.startswith("#") or ref.partition("#")[0] in ids, ref


@pytest.mark.usefixtures("no_network")
def test_envelope_schema_accepts_the_golden_example() -> None:
    validator = validator_for(ENVELOPE_SCHEMA_ID)

    errors = list(validator.iter_errors(json.loads(GOLDEN_TEXT)))

    assert errors == []


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize(
    "mutate",
    [
        lambda e: e.update(version=True),
        lambda e: e.update(version="1"),
        lambda e: e.update(version=2),
        lambda e: e["item"].update(status="completed"),
        lambda e: e["item"].update(content=None),
        lambda e: e["item"].update(content=[]),
        lambda e: e["item"].update(id=""),
        lambda e: e["item"]["summary"][0].update(annotations=[]),
        lambda e: e.update(extra=1),
    ],
)
def test_envelope_schema_rejects_what_the_reader_rejects(mutate: Any) -> None:
    envelope = json.loads(GOLDEN_TEXT)
    mutate(envelope)

    assert not validator_for(ENVELOPE_SCHEMA_ID).is_valid(envelope)
    assert not parse_reasoning_replay_envelope(json.dumps(envelope)).resumable


def test_envelope_schema_accepts_version_written_as_a_float() -> None:
    envelope = json.loads(GOLDEN_TEXT)
    envelope["version"] = 1.0

    assert validator_for(ENVELOPE_SCHEMA_ID).is_valid(envelope)


@pytest.mark.usefixtures("no_network")
def test_item_schema_accepts_the_provider_input_of_a_captured_item() -> None:
    captured = canonicalize_completed_reasoning_output_item(
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [],
            "encrypted_content": "c",
            "content": [{"type": "reasoning_text", "text": "t"}],
            "status": None,
        },
        source="response.completed",
    )
    assert captured.item is not None

    actual = captured.item.to_provider_input()

    validator_for(ITEM_SCHEMA_ID).validate(actual)


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize(
    "item",
    [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "é"}],
            "encrypted_content": "c",
            "content": [{"type": "reasoning_text", "text": "x"}],
        },
        {"type": "reasoning"},
        {
            "type": "reasoning",
            "id": 3,
            "summary": {"a": 1},
            "encrypted_content": ["x"],
            "content": "nope",
            "status": "in_progress",
            "extra": None,
        },
        {"type": "reasoning", "summary": [1, None, {"text": "abc"}], "content": []},
    ],
)
def test_diagnostic_view_schema_accepts_redaction_outputs(item: dict[str, Any]) -> None:
    actual = redact_reasoning_replay_for_diagnostics(item)

    validator_for(DIAGNOSTIC_VIEW_SCHEMA_ID).validate(actual)


def test_diagnostic_view_schema_rejects_a_view_carrying_the_ciphertext() -> None:
    view = redact_reasoning_replay_for_diagnostics(json.loads(GOLDEN_TEXT)["item"])
    view["encrypted_content"] = "c"

    assert not validator_for(DIAGNOSTIC_VIEW_SCHEMA_ID).is_valid(view)
