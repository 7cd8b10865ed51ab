"""Redaction (SPEC §7, R1–R2) and telemetry (SPEC §8, T1–T2): structure visible, secrets not."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from reasoning_replay import (
    REPLAY_CHANNEL,
    HistoryMessage,
    ReasoningReplayItem,
    ReplayTarget,
    build_replay_input,
    redact,
    redact_reasoning_replay_for_diagnostics,
    replay_telemetry,
    serialize_reasoning_replay_envelope,
    validator_for,
)
from reasoning_replay.schemas import DIAGNOSTIC_VIEW_SCHEMA_ID, TELEMETRY_SCHEMA_ID

CIPHERTEXT = "gAAAAB-SECRET-CIPHERTEXT-é-😀=="
CIPHERTEXT_2 = "gAAAAB-OTHER-SECRET-🔒"
SUMMARY_TEXTS = ["PRIVATE-SUMMARY-ONE ✓", "PRIVATE-SUMMARY-TWO 数据"]
CONTENT_TEXT = "PRIVATE-CONTENT-ü"
COMPACTION_SECRET = "COMPACTION-SECRET-BLOB"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def reasoning_item(**overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": t} for t in SUMMARY_TEXTS],
        "encrypted_content": CIPHERTEXT,
        "content": [{"type": "reasoning_text", "text": CONTENT_TEXT}],
    }
    item.update(overrides)
    return item


def request_payload() -> dict[str, Any]:
    return {
        "model": "gpt-x",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 1024,
        "headers": {"Authorization": "Bearer sk-SECRET", "X-Trace": "t-1"},
        "API_KEY": "sk-OTHER-SECRET",
        "metadata": {"author": "ada", "Password": "hunter2", "nested": [{"client_secret": "cs"}]},
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hello"}],
            },
            reasoning_item(),
            {"type": "compaction", "id": "cmp_1", "encrypted_content": COMPACTION_SECRET},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_1",
                "content": [{"type": "output_text", "text": "answer"}],
            },
            {
                "wrapper": {
                    "deep": [
                        reasoning_item(id="rs_2", encrypted_content=CIPHERTEXT_2, content=None)
                    ]
                }
            },
        ],
    }


# --- the diagnostic view (R1) ------------------------------------------------------------------


def test_diagnostic_view_has_the_exact_shape_and_values() -> None:
    actual = redact_reasoning_replay_for_diagnostics(reasoning_item())

    expected = {
        "type": "reasoning",
        "id": "rs_1",
        "fields": ["content", "encrypted_content", "id", "summary", "type"],
        "encrypted_content_bytes": utf8_len(CIPHERTEXT),
        "encrypted_content_sha256": sha256(CIPHERTEXT),
        "summary_parts": 2,
        "summary_bytes": sum(utf8_len(t) for t in SUMMARY_TEXTS),
        "content_parts": 1,
        "content_bytes": utf8_len(CONTENT_TEXT),
    }
    assert actual == expected
    assert list(actual) == list(expected)


def test_diagnostic_view_counts_utf8_bytes_not_characters() -> None:
    item = reasoning_item(
        encrypted_content="é😀", summary=[{"type": "summary_text", "text": "数据"}], content=None
    )

    actual = redact_reasoning_replay_for_diagnostics(item)

    assert actual["encrypted_content_bytes"] == 6
    assert actual["summary_bytes"] == 6
    assert actual["content_parts"] == 0
    assert actual["content_bytes"] == 0
    assert actual["encrypted_content_sha256"] == (hashlib.sha256("é😀".encode()).hexdigest())


def test_diagnostic_view_of_a_canonical_replay_item_equals_the_view_of_its_provider_input() -> None:
    replay_item = ReasoningReplayItem("rs_1", tuple(SUMMARY_TEXTS), CIPHERTEXT, (CONTENT_TEXT,))

    actual = redact_reasoning_replay_for_diagnostics(replay_item)

    assert actual == redact_reasoning_replay_for_diagnostics(reasoning_item())


def test_diagnostic_view_is_defined_for_non_canonical_items() -> None:
    item = {
        "type": "reasoning",
        "id": 7,
        "summary": "not a list",
        "encrypted_content": None,
        "content": [{"type": "reasoning_text", "text": 3}, "x", {"text": "ab"}],
        "status": "completed",
        "Zeta": 1,
    }

    actual = redact_reasoning_replay_for_diagnostics(item)

    assert actual == {
        "type": "reasoning",
        "id": None,
        "fields": ["Zeta", "content", "encrypted_content", "id", "status", "summary", "type"],
        "encrypted_content_bytes": None,
        "encrypted_content_sha256": None,
        "summary_parts": 0,
        "summary_bytes": 0,
        "content_parts": 3,
        "content_bytes": 2,
    }


def test_diagnostic_view_fields_are_sorted_by_code_point() -> None:
    item = {"type": "reasoning", "é": 1, "B": 2, "a": 3, "_": 4, "😀": 5, "\u00ff": 6}

    actual = redact_reasoning_replay_for_diagnostics(item)["fields"]

    assert actual == ["B", "_", "a", "type", "\u00e9", "\u00ff", "😀"]


@pytest.mark.parametrize(
    "item",
    [
        reasoning_item(),
        {"type": "reasoning"},
        {"type": "reasoning", "id": None, "summary": [None, 1], "encrypted_content": 5},
        reasoning_item(content=None, summary=[]),
    ],
)
def test_diagnostic_view_validates_against_its_schema(item: dict[str, Any]) -> None:
    actual = redact_reasoning_replay_for_diagnostics(item)

    validator_for(DIAGNOSTIC_VIEW_SCHEMA_ID).validate(actual)


# --- redacting a payload (R2) ------------------------------------------------------------------


def test_reasoning_items_anywhere_in_a_payload_become_diagnostic_views() -> None:
    payload = request_payload()

    actual: Any = redact(payload)

    assert actual["input"][1] == redact_reasoning_replay_for_diagnostics(reasoning_item())
    deep = actual["input"][4]["wrapper"]["deep"][0]
    original = payload["input"][4]["wrapper"]["deep"][0]
    assert deep == redact_reasoning_replay_for_diagnostics(original)
    assert deep["id"] == "rs_2"


def test_encrypted_content_outside_a_reasoning_item_is_replaced_by_size_and_hash() -> None:
    actual: Any = redact(request_payload())

    assert actual["input"][2] == {
        "type": "compaction",
        "id": "cmp_1",
        "encrypted_content": {
            "redacted": "encrypted_content",
            "bytes": utf8_len(COMPACTION_SECRET),
            "sha256": sha256(COMPACTION_SECRET),
        },
    }


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "AUTHORIZATION",
        "authorization",
        "API_KEY",
        "Api_Key",
        "password",
        "PassWord",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "id_token",
        "Private_Key",
        "auth_token",
        "github_token",
        "session_token",
        "openai_api_key",
        "apiKey",
        "x-api-key",
        "OpenAI-Api-Key",
        "token",
        "auth",
        "oauth",
        "secret_santa",
        "api_keys",
        "x_authorization",
        "authorization_header",
        "passwords",
        "Set-Cookie",
        "credentials",
        "ENCRYPTED_CONTENT_BYTES",
        "token_value",
        "tokenId",
        "auth_header",
        "authentication",
        "authInfo",
        "oauth_state",
        "tokens",
        "private key",
        "api.key",
        "author",
        "max_output_tokens",
        "input_tokens",
    ],
)
def test_sensitive_names_contain_a_fragment_of_the_normal_form(name: str) -> None:
    actual = redact({name: "value-that-must-not-leak", "other": 1})

    assert actual == {name: {"redacted": name}, "other": 1}


@pytest.mark.parametrize(
    "name",
    ["prompt_cache_key", "keyword", "key", "api1key", "to\u212aen_count", "pass", "cache"],
)
def test_names_without_a_fragment_stay_visible(name: str) -> None:
    payload = {name: "visible", "nested": {name: [1, 2]}}

    actual = redact(payload)

    assert actual == payload


def test_sensitive_value_of_any_kind_is_replaced_whole() -> None:
    payload = {"secret": {"nested": ["x"]}, "Password": 12, "api_key": None}

    actual = redact(payload)

    assert actual == {
        "secret": {"redacted": "secret"},
        "Password": {"redacted": "Password"},
        "api_key": {"redacted": "api_key"},
    }


def test_redaction_keeps_member_order_and_non_sensitive_values() -> None:
    payload = request_payload()

    actual: Any = redact(payload)

    assert list(actual) == list(payload)
    assert list(actual["metadata"]) == ["author", "Password", "nested"]
    # The seed's rule (SPEC R2): a name containing "auth" or "token" is sensitive, so are these.
    assert actual["metadata"]["author"] == {"redacted": "author"}
    assert actual["max_output_tokens"] == {"redacted": "max_output_tokens"}
    assert actual["headers"] == {"Authorization": {"redacted": "Authorization"}, "X-Trace": "t-1"}
    assert actual["API_KEY"] == {"redacted": "API_KEY"}
    assert actual["metadata"]["nested"] == [{"client_secret": {"redacted": "client_secret"}}]
    assert actual["input"][0] == payload["input"][0]
    assert actual["input"][3] == payload["input"][3]


def test_redaction_does_not_modify_its_input() -> None:
    payload = request_payload()
    original = copy.deepcopy(payload)

    redact(payload)

    assert payload == original


@pytest.mark.parametrize("value", [None, True, 0, 1.5, "text", [], {}, [[{"a": "b"}]]])
def test_values_without_sensitive_material_are_returned_unchanged(value: Any) -> None:
    assert redact(value) == value


def test_redaction_of_a_payload_with_reasoning_items_is_idempotent() -> None:
    payload = {k: v for k, v in request_payload().items() if k != "input"}
    payload["input"] = [reasoning_item(), {"wrapper": [reasoning_item(id="rs_2")]}]
    once = redact(payload)

    actual = redact(once)

    assert actual == once


def test_redaction_is_idempotent_on_encrypted_content_outside_reasoning_items() -> None:
    # SPEC R2 step 1 says redaction is idempotent; this pins it for a compaction item too.
    once = redact(request_payload())

    actual = redact(once)

    assert actual == once


def test_diagnostic_view_is_left_as_it_is() -> None:
    view = redact_reasoning_replay_for_diagnostics(reasoning_item())

    actual = redact({"input": [view]})

    assert actual == {"input": [view]}


def test_no_ciphertext_or_reasoning_text_appears_in_a_redacted_payload() -> None:
    secrets = [
        CIPHERTEXT,
        CIPHERTEXT_2,
        *SUMMARY_TEXTS,
        CONTENT_TEXT,
        COMPACTION_SECRET,
        "sk-SECRET",
        "sk-OTHER-SECRET",
        "hunter2",
    ]

    for ensure_ascii in (True, False):
        actual = json.dumps(redact(request_payload()), ensure_ascii=ensure_ascii)

        for secret in secrets:
            assert secret not in actual
            assert json.dumps(secret, ensure_ascii=ensure_ascii)[1:-1] not in actual
            for fragment in ("SECRET-CIPHERTEXT", "PRIVATE-SUMMARY", "PRIVATE-CONTENT"):
                assert fragment not in actual


def test_redacted_payload_is_json_serializable_and_deterministic() -> None:
    first = json.dumps(redact(request_payload()))
    second = json.dumps(redact(request_payload()))

    assert first == second


# --- telemetry (T1–T2) -------------------------------------------------------------------------


def item_for_history(
    item_id: str, ciphertext: str, summary: tuple[str, ...], content: tuple[str, ...] | None = None
) -> dict[str, str]:
    replay_item = ReasoningReplayItem(item_id, summary, ciphertext, content)
    return {"type": "text", "text": serialize_reasoning_replay_envelope(replay_item)}


def telemetry_history() -> list[HistoryMessage]:
    return [
        HistoryMessage(
            role="user",
            items=[{"type": "message", "role": "user", "content": "encrypted_content? ✓"}],
        ),
        HistoryMessage(
            role="assistant",
            channels={
                REPLAY_CHANNEL: [
                    item_for_history("rs_1", CIPHERTEXT, tuple(SUMMARY_TEXTS)),
                    item_for_history("rs_2", CIPHERTEXT_2, ("",), ("c1 ü", 'c2 "q" \\ \n')),
                    item_for_history("rs_1", CIPHERTEXT, tuple(SUMMARY_TEXTS)),  # exact duplicate
                    item_for_history("rs_2", "gAAAA-new", ()),  # same id, new ciphertext
                ]
            },
            items=[
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "not reasoning ✓"}],
                }
            ],
        ),
    ]


def utf8_lengths_in_serialized_request(request: dict[str, Any]) -> dict[str, int]:
    """Counters measured on the JSON text of the request, as it travels on the wire."""
    wire = json.loads(json.dumps(request, ensure_ascii=False).encode("utf-8"))
    counters = dict.fromkeys(
        ("items", "encrypted", "summary_parts", "summary_bytes", "content_parts", "content_bytes"),
        0,
    )
    for element in wire["input"]:
        if element.get("type") != "reasoning":
            continue
        counters["items"] += 1
        counters["encrypted"] += len(element["encrypted_content"].encode("utf-8"))
        counters["summary_parts"] += len(element["summary"])
        counters["summary_bytes"] += sum(len(p["text"].encode("utf-8")) for p in element["summary"])
        counters["content_parts"] += len(element.get("content", []))
        counters["content_bytes"] += sum(
            len(p["text"].encode("utf-8")) for p in element.get("content", [])
        )
    return counters


def test_telemetry_counters_equal_the_utf8_lengths_of_the_serialized_request() -> None:
    built = build_replay_input(telemetry_history(), ReplayTarget(provider="openai"))
    request = {"model": "gpt-x", "input": list(built.input)}
    measured = utf8_lengths_in_serialized_request(request)

    actual = built.telemetry().to_json()

    assert actual == {
        "reasoning_replay_item_count": measured["items"],
        "reasoning_replay_encrypted_bytes": measured["encrypted"],
        "reasoning_replay_summary_parts": measured["summary_parts"],
        "reasoning_replay_summary_bytes": measured["summary_bytes"],
        "reasoning_replay_content_parts": measured["content_parts"],
        "reasoning_replay_content_bytes": measured["content_bytes"],
        "replay_deduplicated_exact_count": 1,
        "replay_id_ciphertext_conflict_count": 1,
        "canonical_schema_version": 1,
    }


def test_telemetry_counters_have_the_expected_literal_values() -> None:
    built = build_replay_input(telemetry_history(), ReplayTarget(provider="openai"))

    actual = built.telemetry().to_json()

    assert actual["reasoning_replay_item_count"] == 3
    assert actual["reasoning_replay_encrypted_bytes"] == (
        utf8_len(CIPHERTEXT) + utf8_len(CIPHERTEXT_2) + len("gAAAA-new")
    )
    assert actual["reasoning_replay_summary_parts"] == 3
    assert actual["reasoning_replay_summary_bytes"] == sum(utf8_len(t) for t in SUMMARY_TEXTS)
    assert actual["reasoning_replay_content_parts"] == 2
    assert actual["reasoning_replay_content_bytes"] == utf8_len("c1 ü") + utf8_len('c2 "q" \\ \n')


def test_telemetry_validates_against_the_telemetry_schema() -> None:
    built = build_replay_input(telemetry_history(), ReplayTarget(provider="openai"))

    actual = built.telemetry().to_json()

    validator_for(TELEMETRY_SCHEMA_ID).validate(actual)


def test_telemetry_of_an_empty_request_is_all_zero_with_version_one() -> None:
    actual = replay_telemetry([]).to_json()

    validator_for(TELEMETRY_SCHEMA_ID).validate(actual)
    assert actual == {
        "reasoning_replay_item_count": 0,
        "reasoning_replay_encrypted_bytes": 0,
        "reasoning_replay_summary_parts": 0,
        "reasoning_replay_summary_bytes": 0,
        "reasoning_replay_content_parts": 0,
        "reasoning_replay_content_bytes": 0,
        "replay_deduplicated_exact_count": 0,
        "replay_id_ciphertext_conflict_count": 0,
        "canonical_schema_version": 1,
    }


def test_telemetry_counts_missing_or_non_string_values_as_zero() -> None:
    request_input = [
        {"type": "reasoning", "id": "rs_x", "encrypted_content": None, "summary": "x"},
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": 5}, "junk"],
            "content": None,
        },
        {"type": "message", "encrypted_content": "not a reasoning item"},
        "not an object",
    ]

    actual = replay_telemetry(request_input).to_json()

    assert actual["reasoning_replay_item_count"] == 2
    assert actual["reasoning_replay_encrypted_bytes"] == 0
    assert actual["reasoning_replay_summary_parts"] == 2
    assert actual["reasoning_replay_summary_bytes"] == 0
    assert actual["reasoning_replay_content_parts"] == 0


def test_telemetry_never_contains_ciphertext_or_reasoning_text() -> None:
    built = build_replay_input(telemetry_history(), ReplayTarget(provider="openai"))

    actual = json.dumps(built.telemetry().to_json(), ensure_ascii=False)

    for secret in [CIPHERTEXT, CIPHERTEXT_2, "gAAAA-new", *SUMMARY_TEXTS, "c1 ü", "rs_1"]:
        assert secret not in actual
    schema: Any = validator_for(TELEMETRY_SCHEMA_ID).schema
    assert set(json.loads(actual)) == set(schema["required"])
    assert all(isinstance(v, int) and not isinstance(v, bool) for v in json.loads(actual).values())
