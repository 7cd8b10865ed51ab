"""schema/provider-names.v1.json, the provider-name registry as data (SPEC §18.2), against every
other statement of it: SPEC's table, the reference's ``PROVIDER_NAME_REGISTRY`` and the
JavaScript implementation's; and the mapping of SPEC P4 that uses it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay.record.providers import (
    PROVIDER_NAME_REGISTRY,
    REGISTRY_ONLY,
    ProviderNames,
    ProviderNamesError,
    provider_names_from_json,
    provider_names_from_pairs,
)
from reasoning_replay.schemas import PROVIDER_NAMES_SCHEMA_ID, validator_for

REPO = Path(__file__).resolve().parents[1]
DATA_FILE = "schema/provider-names.v1.json"
JS_FILE = "conformance/adapters/js/lib/providers.js"
TABLE = re.compile(r"<!-- provider-names:start -->(.*?)<!-- provider-names:end -->", re.DOTALL)


def data() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((REPO / DATA_FILE).read_text(encoding="utf-8"))
    return document


def spec_rows() -> list[tuple[str, str, str]]:
    block = TABLE.search((REPO / "SPEC.md").read_text(encoding="utf-8"))
    assert block is not None, "SPEC.md has no <!-- provider-names:start --> table (§18.2)"
    rows = []
    for line in block.group(1).strip().splitlines()[2:]:  # after the header and separator
        name, issuer, written_by = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows.append((name.strip("`"), issuer.strip("`"), written_by))
    return rows


def js_registry() -> list[tuple[str, str]]:
    text = (REPO / JS_FILE).read_text(encoding="utf-8")
    block = re.search(r"PROVIDER_NAME_REGISTRY = Object\.freeze\(\{(.*?)\}\);", text, re.DOTALL)
    assert block is not None, f"{JS_FILE}: no `PROVIDER_NAME_REGISTRY = Object.freeze({{...}});`"
    return re.findall(r"'([^']+)':\s*'([^']+)'", block.group(1))


def test_data_file_validates_against_its_schema() -> None:
    errors = [e.message for e in validator_for(PROVIDER_NAMES_SCHEMA_ID).iter_errors(data())]

    assert not errors, f"{DATA_FILE} breaks its schema: {errors}"


def test_data_file_equals_the_spec_table_row_by_row() -> None:
    actual = [(e["name"], e["issuer"], e["written_by"]) for e in data()["names"]]

    assert actual == spec_rows(), f"make {DATA_FILE} list SPEC §18.2's rows, in order"


def test_reference_and_javascript_registries_equal_the_data_file() -> None:
    expected = [(e["name"], e["issuer"]) for e in data()["names"]]

    assert list(PROVIDER_NAME_REGISTRY.items()) == expected
    assert js_registry() == expected


def test_each_name_is_listed_once_and_every_issuer_is_an_issuer_name() -> None:
    names = [name for name, _, _ in spec_rows()]
    issuers = {issuer for _, issuer, _ in spec_rows()}

    assert len(names) == len(set(names))
    assert all(PROVIDER_NAME_REGISTRY[issuer] == issuer for issuer in issuers)


def test_a_listed_name_maps_to_its_issuer_and_an_unlisted_one_to_itself() -> None:
    assert REGISTRY_ONLY.issuer_of("responses") == "openai"
    assert REGISTRY_ONLY.issuer_of("codexresponses") == "codex"
    assert REGISTRY_ONLY.issuer_of("azure") == "azure"


def test_the_caller_mapping_replaces_the_registry_entry_and_is_applied_once() -> None:
    names = ProviderNames({"responses": "azure", "gateway": "responses"})

    assert names.issuer_of("responses") == "azure"
    assert names.issuer_of("gateway") == "responses"  # not mapped again to openai
    assert names.issuer_of("codexresponses") == "codex"


@pytest.mark.parametrize(
    "value", [[], "x", {"": "openai"}, {"gateway": ""}, {"gateway": 1}, {"gateway": None}]
)
def test_a_malformed_mapping_is_refused(value: object) -> None:
    with pytest.raises(ProviderNamesError):
        provider_names_from_json(value)


@pytest.mark.parametrize("pairs", [["gateway"], ["=openai"], ["gateway="], ["a=b", "a=c"]])
def test_malformed_name_issuer_pairs_are_refused(pairs: list[str]) -> None:
    with pytest.raises(ProviderNamesError):
        provider_names_from_pairs(pairs)


def test_pairs_and_json_give_the_same_mapping() -> None:
    from_pairs = provider_names_from_pairs(["gateway=openai", "gateway=openai", "a=b=c"])

    assert from_pairs == provider_names_from_json({"gateway": "openai", "a": "b=c"})
    assert provider_names_from_json(None) is REGISTRY_ONLY
