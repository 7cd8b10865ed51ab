"""The JSON Schemas of SPEC §11, loaded from ``schema/`` and resolvable offline."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .resources import data_path

# SPEC S1: names, not locations; nothing is ever fetched
SCHEMA_NAMESPACE: Final = "urn:reasoning-replay:schema:"
ENVELOPE_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-replay.v1"
ITEM_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-item.v1"
DIAGNOSTIC_VIEW_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-diagnostic-view.v1"
TELEMETRY_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "replay-telemetry.v1"
CONFIGURATION_UPDATE_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "configuration-update.v1"
CACHE_STATE_RECORD_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "cache-state-record.v1"
DIAGNOSTIC_CODES_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "diagnostic-codes.v1"
PROVIDER_NAMES_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "provider-names.v1"
BUNDLE_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-replay.v1.bundle"
BUNDLE_FILE_NAME: Final = "reasoning-replay.v1.bundle.json"
DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"


@cache
def schema_documents() -> Mapping[str, Mapping[str, Any]]:
    """Every schema in ``schema/``, by ``$id``."""
    documents = {}
    for path in sorted(data_path("schema").glob("*.schema.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        documents[document["$id"]] = document
    return documents


@cache
def schema_registry() -> Registry[Any]:
    """A ``referencing.Registry`` of every schema; nothing is ever retrieved from the network."""
    resources = [
        (schema_id, Resource.from_contents(document, default_specification=DRAFT202012))
        for schema_id, document in schema_documents().items()
    ]
    return Registry().with_resources(resources).crawl()


def bundle_document(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """SPEC S1: one compound document (JSON Schema 2020-12 §9.3) embedding every document
    unchanged under ``$defs``, keyed by its ``$id`` after the namespace; its root validates an
    envelope."""
    embedded = {
        schema_id.removeprefix(SCHEMA_NAMESPACE): dict(document)
        for schema_id, document in sorted(documents.items())
    }
    return {
        "$schema": DRAFT_2020_12,
        "$id": BUNDLE_SCHEMA_ID,
        "title": "Reasoning-replay schemas, version 1, in one document",
        "description": (
            "Every schema of schema/ embedded under $defs with its own $id (SPEC.md S1); the root "
            "validates an envelope. Generated from schema/*.schema.json by tools/release.py: "
            "do not edit."
        ),
        "$ref": ENVELOPE_SCHEMA_ID,
        "$defs": embedded,
    }


def bundle_text(documents: Mapping[str, Mapping[str, Any]]) -> str:
    """The bundle file's exact text: two-space indented JSON, UTF-8 as is, one final newline."""
    return json.dumps(bundle_document(documents), indent=2, ensure_ascii=False) + "\n"


def validator_for(schema_id: str) -> Draft202012Validator:
    """A draft 2020-12 validator for one of our schemas, ``$ref``s resolved by the registry."""
    return Draft202012Validator(schema_documents()[schema_id], registry=schema_registry())
