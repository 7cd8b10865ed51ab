"""The JSON Schemas of SPEC §9, loaded from ``schema/`` and resolvable offline."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .resources import data_path

SCHEMA_NAMESPACE: Final = "https://reasoning-replay.dev/schema/"  # SPEC S1
ENVELOPE_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-replay.v1.schema.json"
ITEM_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-item.v1.schema.json"
DIAGNOSTIC_VIEW_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "reasoning-diagnostic-view.v1.schema.json"
TELEMETRY_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "replay-telemetry.v1.schema.json"
CONFIGURATION_UPDATE_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "configuration-update.v1.schema.json"
CACHE_STATE_RECORD_SCHEMA_ID: Final = SCHEMA_NAMESPACE + "cache-state-record.v1.schema.json"


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


def validator_for(schema_id: str) -> Draft202012Validator:
    """A draft 2020-12 validator for one of our schemas, ``$ref``s resolved by the registry."""
    return Draft202012Validator(schema_documents()[schema_id], registry=schema_registry())
