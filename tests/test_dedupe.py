"""Deduplication (SPEC §6, D1–D7): identity (provider, id, SHA-256 of ciphertext), xAI policy."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reasoning_replay import (
    REPLAY_CHANNEL,
    Code,
    ConflictPolicy,
    DedupeDecision,
    DedupeIdentity,
    Diagnostic,
    HistoryMessage,
    ReasoningReplayItem,
    ReplayTarget,
    build_replay_input,
    decide,
    history_from_json,
    reasoning_replay_dedupe_key,
    serialize_reasoning_replay_envelope,
)
from reasoning_replay.record import dedupe
from reasoning_replay.record.dedupe import decide_items
from reasoning_replay.record.history import HistoryShapeError

KEEP = DedupeDecision.KEEP
DROP = DedupeDecision.DROP_DUPLICATE
CONFLICT = DedupeDecision.KEEP_CONFLICT


def item(item_id: str, ciphertext: str, summary: tuple[str, ...] = ("s",)) -> ReasoningReplayItem:
    return ReasoningReplayItem(id=item_id, summary=summary, encrypted_content=ciphertext)


def block(replay_item: ReasoningReplayItem) -> dict[str, str]:
    return {"type": "text", "text": serialize_reasoning_replay_envelope(replay_item)}


def assistant(
    *items: ReasoningReplayItem,
    provider: str | None = None,
    own: list[dict[str, Any]] | None = None,
) -> HistoryMessage:
    return HistoryMessage(
        role="assistant",
        provider=provider,
        channels={REPLAY_CHANNEL: [block(i) for i in items]},
        items=own if own is not None else [],
    )


def reasoning_ids(built: Any) -> list[tuple[str, str]]:
    return [(i["id"], i["encrypted_content"]) for i in built.input if i["type"] == "reasoning"]


# --- identity (D1) ---------------------------------------------------------------------------


def test_dedupe_key_is_provider_id_and_lowercase_hex_sha256_of_utf8_ciphertext() -> None:
    ciphertext = "gAAAA-é-😀"

    actual = reasoning_replay_dedupe_key(item("rs_1", ciphertext), "openai")

    expected_hash = hashlib.sha256(ciphertext.encode("utf-8")).hexdigest()
    assert actual == DedupeIdentity("openai", "rs_1", expected_hash)
    assert actual.ciphertext_sha256 == actual.ciphertext_sha256.lower()
    assert len(actual.ciphertext_sha256) == 64


def test_dedupe_key_does_not_depend_on_summary_or_content() -> None:
    plain = item("rs_1", "c", ("a",))
    other = ReasoningReplayItem("rs_1", ("b", "c"), "c", ("x",))

    assert reasoning_replay_dedupe_key(plain, "p") == reasoning_replay_dedupe_key(other, "p")


def test_dedupe_key_contains_no_ciphertext() -> None:
    ciphertext = "SECRET-CIPHERTEXT-VALUE"

    actual = reasoning_replay_dedupe_key(item("rs_1", ciphertext), "openai")

    assert ciphertext not in repr(actual)


# --- decisions (D2–D5) -----------------------------------------------------------------------


def keys(*triples: tuple[str, str, str]) -> list[DedupeIdentity]:
    return [reasoning_replay_dedupe_key(item(i, c), p) for p, i, c in triples]


@pytest.mark.parametrize(
    ("triples", "expected"),
    [
        ([("p", "a", "1"), ("p", "a", "1")], [KEEP, DROP]),
        ([("p", "a", "1"), ("p", "a", "2")], [KEEP, CONFLICT]),
        ([("p", "a", "1"), ("p", "b", "1")], [KEEP, KEEP]),
        ([("p", "a", "1"), ("q", "a", "1")], [KEEP, KEEP]),
        (
            [("p", "a", "1"), ("p", "a", "2"), ("p", "a", "2"), ("p", "a", "1")],
            [KEEP, CONFLICT, DROP, DROP],
        ),
        ([("p", "a", "1"), ("p", "a", "2"), ("p", "a", "3")], [KEEP, CONFLICT, CONFLICT]),
        (
            [("p", "a", "1"), ("q", "a", "2"), ("p", "a", "1"), ("q", "a", "2")],
            [KEEP, KEEP, DROP, DROP],
        ),
        ([], []),
    ],
    ids=[
        "exact",
        "conflict",
        "same-ciphertext-new-id",
        "other-provider",
        "mixed",
        "two-conflicts",
        "providers-interleaved",
        "empty",
    ],
)
def test_decisions_follow_d2_to_d5(
    triples: list[tuple[str, str, str]], expected: list[DedupeDecision]
) -> None:
    actual = decide(keys(*triples))

    assert actual == expected


def test_decide_accepts_a_generator_and_is_deterministic() -> None:
    triples = [("p", "a", "1"), ("p", "a", "2"), ("p", "a", "1")]

    first = decide(k for k in keys(*triples))
    second = decide(keys(*triples))

    assert first == second == [KEEP, CONFLICT, DROP]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(["1", "2", "é"])), max_size=12))
def test_decide_items_is_decide_without_hashing_lone_ids(pairs: list[tuple[str, str]]) -> None:
    """The validator's shortcut (SPEC D1–D3): the same decisions as :func:`decide`."""
    items = [item(i, c) for i, c in pairs]

    assert decide_items(items, "p") == decide(keys(*(("p", i, c) for i, c in pairs)))


def test_decide_items_hashes_only_repeated_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[str] = []
    real = dedupe.ciphertext_sha256

    def spy(ciphertext: str) -> str:
        hashed.append(ciphertext)
        return real(ciphertext)

    monkeypatch.setattr(dedupe, "ciphertext_sha256", spy)
    items = [item("a", "1"), item("b", "2"), item("a", "3"), item("c", "4"), item("a", "1")]

    assert decide_items(items, "p") == [KEEP, KEEP, CONFLICT, KEEP, DROP]
    assert hashed == ["1", "3", "1"]


# --- building a request (D2–D6) ----------------------------------------------------------------


def test_same_provider_id_and_ciphertext_is_dropped_counted_and_reported() -> None:
    history = [assistant(item("rs_1", "c1")), assistant(item("rs_1", "c1"))]

    actual = build_replay_input(history, ReplayTarget(provider="openai"))

    assert reasoning_ids(actual) == [("rs_1", "c1")]
    assert actual.deduplicated_exact == 1
    assert actual.id_ciphertext_conflicts == 0
    assert actual.diagnostics == (Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, 1, 0),)
    assert actual.telemetry().replay_deduplicated_exact_count == 1


def test_exact_duplicate_within_one_message_keeps_the_first() -> None:
    history = [assistant(item("rs_1", "c1", ("first",)), item("rs_1", "c1", ("second",)))]

    actual = build_replay_input(history, ReplayTarget(provider="openai"))

    assert [i["summary"][0]["text"] for i in actual.input] == ["first"]
    assert actual.diagnostics == (Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, 0, 1),)


def test_same_id_different_ciphertext_is_kept_and_reported() -> None:
    history = [assistant(item("rs_1", "c1")), assistant(item("rs_1", "c2"))]

    actual = build_replay_input(history, ReplayTarget(provider="openai"))

    assert reasoning_ids(actual) == [("rs_1", "c1"), ("rs_1", "c2")]
    assert actual.id_ciphertext_conflicts == 1
    assert actual.deduplicated_exact == 0
    assert actual.rejected is None
    assert actual.diagnostics == (Diagnostic(Code.DEDUPE_ID_CIPHERTEXT_CONFLICT, 1, 0),)
    assert actual.telemetry().replay_id_ciphertext_conflict_count == 1


def test_conflict_policy_reject_rejects_the_whole_request() -> None:
    history = [assistant(item("rs_1", "c1")), assistant(item("rs_1", "c2"))]
    target = ReplayTarget(provider="openai", conflict_policy=ConflictPolicy.REJECT)

    actual = build_replay_input(history, target)

    assert actual.rejected is Code.DEDUPE_ID_CIPHERTEXT_CONFLICT
    assert actual.input == ()


def test_conflict_policy_reject_does_not_reject_exact_duplicates() -> None:
    history = [assistant(item("rs_1", "c1")), assistant(item("rs_1", "c1"))]
    target = ReplayTarget(provider="openai", conflict_policy=ConflictPolicy.REJECT)

    actual = build_replay_input(history, target)

    assert actual.rejected is None
    assert reasoning_ids(actual) == [("rs_1", "c1")]


def test_diagnostics_of_a_rejected_request_are_in_block_order() -> None:
    # SPEC P2: diagnostics are listed in block order (message index, then block index).
    history = [
        assistant(item("rs_1", "c1")),
        assistant(item("rs_1", "c2")),
        HistoryMessage(role="assistant", channels={REPLAY_CHANNEL: [{"type": "text", "text": ""}]}),
    ]
    target = ReplayTarget(provider="openai", conflict_policy=ConflictPolicy.REJECT)

    actual = build_replay_input(history, target)

    assert actual.rejected is Code.DEDUPE_ID_CIPHERTEXT_CONFLICT
    assert actual.diagnostics == (
        Diagnostic(Code.DEDUPE_ID_CIPHERTEXT_CONFLICT, 1, 0),
        Diagnostic(Code.JSON_MALFORMED, 2, 0),
    )


def test_same_ciphertext_different_ids_are_both_kept() -> None:
    history = [assistant(item("rs_1", "shared"), item("rs_2", "shared"))]

    actual = build_replay_input(history, ReplayTarget(provider="openai"))

    assert reasoning_ids(actual) == [("rs_1", "shared"), ("rs_2", "shared")]
    assert actual.diagnostics == ()
    assert (actual.deduplicated_exact, actual.id_ciphertext_conflicts) == (0, 0)


def test_same_id_from_other_issuers_is_a_mismatch_not_a_duplicate_or_conflict() -> None:
    history = [
        assistant(item("rs_1", "c1"), provider="openai"),
        assistant(item("rs_1", "c1"), provider="azure"),
        assistant(item("rs_1", "c2"), provider="xai"),
    ]

    actual = build_replay_input(history, ReplayTarget(provider="openai"))

    assert reasoning_ids(actual) == [("rs_1", "c1")]
    assert actual.diagnostics == (
        Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 1, 0),
        Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 2, 0),
    )
    assert (actual.deduplicated_exact, actual.id_ciphertext_conflicts) == (0, 0)


def test_message_provider_defaults_to_the_target_provider() -> None:
    history = [
        assistant(item("rs_1", "c1"), provider="openai"),
        assistant(item("rs_1", "c1")),  # no provider recorded
    ]

    to_openai = build_replay_input(history, ReplayTarget(provider="openai"))
    to_azure = build_replay_input(history, ReplayTarget(provider="azure"))

    assert to_openai.deduplicated_exact == 1
    assert reasoning_ids(to_openai) == [("rs_1", "c1")]
    assert to_azure.deduplicated_exact == 0
    assert reasoning_ids(to_azure) == [("rs_1", "c1")]  # the openai one is another issuer's
    assert to_azure.diagnostics == (Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 0, 0),)


# --- determinism across save and resume (D6) ----------------------------------------------------


def history_to_json(history: list[HistoryMessage]) -> str:
    return json.dumps(
        {
            "messages": [
                {
                    "role": m.role,
                    **({"provider": m.provider} if m.provider is not None else {}),
                    "channels": {name: list(blocks) for name, blocks in m.channels.items()},
                    "items": [dict(i) for i in m.items],
                }
                for m in history
            ]
        },
        ensure_ascii=False,
    )


def resume_fixture() -> list[HistoryMessage]:
    return [
        HistoryMessage(role="user", items=[{"type": "message", "role": "user", "content": "q"}]),
        assistant(
            item("rs_1", "c1", ("é",)),
            item("rs_2", "c2"),
            provider="openai",
            own=[{"type": "message", "role": "assistant", "id": "m1", "content": []}],
        ),
        assistant(
            item("rs_1", "c1"),
            item("rs_1", "c9"),
            item("rs_3", "c2"),
            own=[{"type": "message", "role": "assistant", "id": "m1", "content": []}],
        ),
        assistant(item("rs_1", "c1"), provider="xai"),
        HistoryMessage(
            role="assistant", channels={REPLAY_CHANNEL: [{"type": "text", "text": "{"}]}
        ),
    ]


@pytest.mark.parametrize("provider", ["openai", "xai"])
def test_dedupe_is_stable_across_save_and_resume(provider: str) -> None:
    history = resume_fixture()
    target = ReplayTarget(provider=provider)
    expected = build_replay_input(history, target)

    resumed = history_from_json(json.loads(history_to_json(history)))
    actual = build_replay_input(resumed, target)
    resumed_twice = history_from_json(json.loads(history_to_json(list(resumed))))
    again = build_replay_input(resumed_twice, target)

    assert actual == expected
    assert again == expected
    assert json.dumps(actual.input) == json.dumps(expected.input)
    assert expected.deduplicated_exact >= 1
    assert expected.id_ciphertext_conflicts == 1


def test_dedupe_decisions_are_the_same_on_every_build() -> None:
    history = resume_fixture()
    target = ReplayTarget(provider="openai")

    builds = [build_replay_input(history, target) for _ in range(3)]

    assert builds[0] == builds[1] == builds[2]


# --- xAI policy (D7) -------------------------------------------------------------------------


def xai_history() -> list[HistoryMessage]:
    return [
        HistoryMessage(
            role="user",
            items=[{"type": "message", "role": "user", "id": "msg_user", "content": "q"}],
        ),
        assistant(
            item("rs_1", "c1"),
            own=[
                {"type": "message", "role": "assistant", "id": "msg_dup", "content": []},
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "c",
                    "name": "f",
                    "arguments": "{}",
                },
            ],
        ),
        assistant(
            item("rs_1", "c1"),
            item("rs_2", "c2"),
            own=[{"type": "message", "role": "assistant", "id": "msg_dup", "content": []}],
        ),
    ]


def test_xai_target_strips_id_from_own_assistant_message_items() -> None:
    actual = build_replay_input(xai_history(), ReplayTarget(provider="xai"))

    assistant_messages = [
        i for i in actual.input if i["type"] == "message" and i["role"] == "assistant"
    ]
    assert len(assistant_messages) == 2
    assert all("id" not in m for m in assistant_messages)


def test_xai_target_keeps_ids_of_reasoning_user_and_tool_items() -> None:
    actual = build_replay_input(xai_history(), ReplayTarget(provider="xai"))

    assert reasoning_ids(actual) == [("rs_1", "c1"), ("rs_2", "c2")]
    user_message = next(i for i in actual.input if i.get("role") == "user")
    assert user_message["id"] == "msg_user"
    function_call = next(i for i in actual.input if i["type"] == "function_call")
    assert function_call["id"] == "fc_1"


def test_xai_target_dedupes_reasoning_by_the_d1_identity() -> None:
    actual = build_replay_input(xai_history(), ReplayTarget(provider="xai"))

    assert actual.deduplicated_exact == 1
    assert actual.diagnostics == (Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, 2, 0),)


@pytest.mark.parametrize("provider", ["openai", "azure", "XAI", "xai-compatible"])
def test_other_providers_keep_assistant_message_ids(provider: str) -> None:
    actual = build_replay_input(xai_history(), ReplayTarget(provider=provider))

    ids = [i.get("id") for i in actual.input if i["type"] == "message"]
    assert ids == ["msg_user", "msg_dup", "msg_dup"]


def test_xai_stripping_does_not_modify_the_stored_history() -> None:
    history = xai_history()

    build_replay_input(history, ReplayTarget(provider="xai"))

    assert history[1].items[0]["id"] == "msg_dup"
    assert history[2].items[0]["id"] == "msg_dup"


# --- the issuer before dedupe (P4) -------------------------------------------------------------


def test_items_of_another_issuer_take_no_part_in_dedupe_even_under_the_reject_policy() -> None:
    history = [
        assistant(item("rs_1", "c1"), provider="xai"),
        assistant(item("rs_1", "c1"), provider="xai"),  # would be an exact duplicate
        assistant(item("rs_1", "c2"), provider="xai"),  # would be a conflict
    ]
    target = ReplayTarget(provider="openai", conflict_policy=ConflictPolicy.REJECT)

    actual = build_replay_input(history, target)

    assert actual.rejected is None
    assert [d.code for d in actual.diagnostics] == [Code.REPLAY_PROVIDER_MISMATCH] * 3
    assert (actual.deduplicated_exact, actual.id_ciphertext_conflicts) == (0, 0)


def test_history_provider_is_the_issuer_of_messages_that_record_none() -> None:
    replay_block = block(item("rs_1", "c1"))
    document = {
        "provider": "xai",
        "messages": [
            {
                "role": "assistant",
                "provider": "openai",
                "channels": {REPLAY_CHANNEL: [replay_block]},
            },
            {"role": "assistant", "provider": "", "channels": {REPLAY_CHANNEL: [replay_block]}},
            {"role": "assistant", "channels": {REPLAY_CHANNEL: [replay_block]}},
        ],
    }

    messages = history_from_json(document)

    assert [m.provider for m in messages] == ["openai", "xai", "xai"]
    to_xai = build_replay_input(messages, ReplayTarget(provider="xai"))
    assert reasoning_ids(to_xai) == [("rs_1", "c1")]
    assert [d.code for d in to_xai.diagnostics] == [
        Code.REPLAY_PROVIDER_MISMATCH,
        Code.DEDUPE_EXACT_DUPLICATE,
    ]


@pytest.mark.parametrize("provider", ["", 7, ["xai"], True])
def test_a_history_provider_that_is_not_a_non_empty_string_is_a_shape_error(
    provider: object,
) -> None:
    with pytest.raises(HistoryShapeError):
        history_from_json({"provider": provider, "messages": []})


def test_a_null_history_provider_records_none() -> None:
    document = {"provider": None, "messages": [{"role": "assistant"}]}

    assert history_from_json(document)[0].provider is None
