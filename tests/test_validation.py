"""Validation of stored history files (SPEC H1–H4): findings, order, counts, permissions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reasoning_replay.diagnostics import Code
from reasoning_replay.history.history_files import (
    HistoryFile,
    HistoryFileProblem,
    history_from_value,
    parse_history_file,
    parse_json_file,
    parse_json_file_exhaustively,
    read_message_channels,
)
from reasoning_replay.history.validation import Finding, Severity, severity_of, validate_history

SCHEMA = "fast-agent.openai-responses.reasoning-replay"
REPLAY = "openai-reasoning-encrypted"
CACHE = "fast-agent-responses-cache-state"
REDACTED = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay.redacted","version":1,'
    '"was":"resumable","view":null}'
)
MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_old"}'
RAW = '{"id":"rs_raw","type":"reasoning","status":"completed","summary":[],"encrypted_content":"c"}'


def envelope(item_id: str = "rs_a", cipher: str = "cipher-a") -> str:
    item = {"type": "reasoning", "id": item_id, "summary": [], "encrypted_content": cipher}
    return json.dumps({"schema": SCHEMA, "version": 1, "item": item}, separators=(",", ":"))


def user() -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def assistant(*blocks: object, cache: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    channels: dict[str, Any] = {
        REPLAY: [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks]
    }
    if cache is not None:
        channels[CACHE] = cache
    return {"role": "assistant", "content": [], "channels": channels, **extra}


def history(*messages: dict[str, Any]) -> str:
    return json.dumps({"messages": list(messages)})


def codes(text: str | bytes, **kwargs: Any) -> list[tuple[str, int | None, int | None]]:
    report = validate_history(text, **kwargs)
    return [(f.code.value, f.message_index, f.block_index) for f in report.findings]


# --- severities (SPEC H3) ----------------------------------------------------------------------


def test_severities_are_exactly_those_of_h3() -> None:
    warnings = {
        Code.LEGACY_MINIMAL_RECORD,
        Code.RAW_SDK_SNAPSHOT,
        Code.DEDUPE_EXACT_DUPLICATE,
        Code.DEDUPE_ID_CIPHERTEXT_CONFLICT,
        Code.BLOCK_NOT_TEXT,
        Code.REPLAY_CHANNEL_MISPLACED,
        Code.DISPLAY_REPLAY_MISMATCH,
    }
    for code in Code:
        expected = (
            Severity.NOTE
            if code is Code.REDACTED_RECORD
            else Severity.WARNING
            if code in warnings
            else Severity.ERROR
        )
        assert severity_of(code) is expected
    assert Finding(Code.JSON_MALFORMED, 1, 0).to_json() == {
        "code": "json_malformed",
        "severity": "error",
        "message_index": 1,
        "block_index": 0,
    }
    assert Finding(Code.HISTORY_MALFORMED).to_json() == {
        "code": "history_malformed",
        "severity": "error",
    }


# --- blocks ------------------------------------------------------------------------------------


def test_clean_history_replays_as_stored() -> None:
    report = validate_history(history(user(), assistant(envelope()), user()))
    assert report.findings == ()
    assert report.counts.to_json() == {"resumable": 1, "legacy": 0, "redacted": 0, "malformed": 0}
    assert report.replays_as_stored and not report.has_error


def test_every_kind_of_block_is_counted_and_reported_in_order() -> None:
    text = history(
        user(),
        assistant(envelope(), "{", {"type": "image"}),
        user(),
        assistant(MINIMAL, RAW, REDACTED, envelope("rs_b", "cipher-b")),
    )
    report = validate_history(text)
    assert [(f.code.value, f.message_index, f.block_index) for f in report.findings] == [
        ("json_malformed", 1, 1),
        ("block_not_text", 1, 2),
        ("legacy_minimal_record", 3, 0),
        ("raw_sdk_snapshot", 3, 1),
        ("redacted_record", 3, 2),
    ]
    assert report.counts.to_json() == {"resumable": 2, "legacy": 2, "redacted": 1, "malformed": 2}
    assert not report.replays_as_stored
    assert report.has_error


def test_legacy_and_redacted_alone_are_not_errors() -> None:
    report = validate_history(history(user(), assistant(MINIMAL, REDACTED)))
    assert [f.severity for f in report.findings] == [Severity.WARNING, Severity.NOTE]
    assert not report.has_error and not report.replays_as_stored


def test_user_message_replay_blocks_are_misplaced_and_not_read() -> None:
    """SPEC H3, P2: each block of a user message's replay channel is reported, never read, and
    the file does not replay as stored; the display channel is never read either."""
    misplaced = {
        "role": "user",
        "content": [],
        "channels": {REPLAY: [{"type": "text", "text": "{"}, {"type": "image"}]},
    }
    shown = assistant(envelope())
    shown["channels"]["reasoning"] = [{"type": "text", "text": "{not json"}]
    report = validate_history(history(misplaced, shown))
    found = [(f.code.value, f.message_index, f.block_index) for f in report.findings]
    assert found == [("replay_channel_misplaced", 0, 0), ("replay_channel_misplaced", 0, 1)]
    assert [f.severity for f in report.findings] == [Severity.WARNING, Severity.WARNING]
    assert report.counts.resumable == 1 and report.counts.total == 1
    assert not report.has_error and not report.replays_as_stored


# --- dedupe (D1-D4) ----------------------------------------------------------------------------


def test_duplicates_conflicts_and_distinct_ids() -> None:
    a, a2, c = envelope(), envelope(cipher="cipher-a-2"), envelope("rs_c", "cipher-a")
    assert codes(history(assistant(a), assistant(a))) == [("dedupe_exact_duplicate", 1, 0)]
    assert codes(history(assistant(a, a))) == [("dedupe_exact_duplicate", 0, 1)]
    assert codes(history(assistant(a), assistant(c))) == []
    conflict = validate_history(history(assistant(a), assistant(a2)))
    assert [f.code for f in conflict.findings] == [Code.DEDUPE_ID_CIPHERTEXT_CONFLICT]
    assert conflict.replays_as_stored  # kept: nothing dropped (D3)
    assert not conflict.has_error  # a warning (H3): a valid xAI history holds such conflicts
    dropped = validate_history(history(assistant(a), assistant(a)))
    assert not dropped.replays_as_stored and not dropped.has_error


def test_the_configured_provider_applies_to_every_message() -> None:
    a = envelope()
    text = history(assistant(a), assistant(a))
    assert codes(text, provider="xai") == codes(text) == [("dedupe_exact_duplicate", 1, 0)]


# --- cache-state records (F6) ------------------------------------------------------------------


def record(model: str, effort: str | None, key: str = "k") -> list[dict[str, str]]:
    text = json.dumps({"model": model, "key": key, "effort": effort})
    return [{"type": "text", "text": text}]


@pytest.mark.parametrize(
    ("cache", "bad"),
    [
        (record("gpt-6-astra", "high"), False),
        (record("gpt-6-astra", "max"), False),
        (record("gpt-5", None), False),
        (record("gpt-6-astra", "minimal"), True),
        (record("gpt-6-astra", None), True),
        (record("gpt-5", "high"), True),
        (record("gpt-6-astra", "low", key=""), True),
        (record("gpt-6-astra", "low") * 2, True),
        ([{"type": "image"}], True),
        ([{"type": "text", "text": '{"model":"m","key":"k","effort":null,"x":1}'}], True),
        ([{"type": "text", "text": "not json"}], True),
        ([], False),
    ],
)
def test_cache_state_records(cache: list[Any], bad: bool) -> None:
    found = codes(history(user(), assistant(envelope(), cache=cache)))
    assert found == ([("cache_state_invalid", 1, 0)] if bad else [])


def test_repeated_cache_state_records_are_each_reported() -> None:
    bad = record("gpt-6-astra", "none")
    text = history(assistant(cache=bad), assistant(cache=bad), assistant(cache=record("m", None)))
    assert codes(text) == [("cache_state_invalid", 0, 0), ("cache_state_invalid", 1, 0)]


def test_cache_state_findings_sit_at_block_0_in_h3_order() -> None:
    a = envelope()
    text = history(assistant(a), assistant(a, "{", cache=[{"type": "text", "text": "null"}]))
    assert codes(text) == [
        ("cache_state_invalid", 1, 0),
        ("dedupe_exact_duplicate", 1, 0),
        ("json_malformed", 1, 1),
    ]
    text = history(assistant("{", "[]", cache=[{"type": "text", "text": "null"}]))
    assert codes(text) == [
        ("json_malformed", 0, 0),
        ("cache_state_invalid", 0, 0),
        ("json_not_object", 0, 1),
    ]


# --- files that are not histories (H1, H3) -----------------------------------------------------


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xff\xfe", "history_unreadable"),
        (
            b'{"messages":[{"role":"user","content":[{"type":"text","text":"caf\xe9"}]}]}',
            "history_unreadable",
        ),
        ("\ud800", "history_unreadable"),
        (b"", "history_malformed"),
        (b"{", "history_malformed"),
        (b'{"messages":[]} []', "history_malformed"),
        (b'{"messages":[],"x":NaN}', "history_malformed"),
        (b'\xef\xbb\xbf{"messages":[]}', "history_malformed"),
        (b"[]", "history_malformed"),
        (b'{"messages":null}', "history_malformed"),
        (b'{"messages":[null]}', "history_malformed"),
        (b'{"messages":[{"role":"tool","content":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":["user"],"content":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user"}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":{}}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[],"tool_calls":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[],"tool_results":1}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[],"channels":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[],"channels":{"a":{}}}]}', "history_malformed"),
        (b"[" * 100_000, "history_malformed"),
        (b'{"messages":[],"messages":[{"role":"user","content":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","role":"user","content":[]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[{"a":{"b":1,"b":1}}]}]}', "history_malformed"),
        (b'{"messages":[{"role":"user","content":[],"x":{"n":NaN}}]}', "history_malformed"),
        ('\ufeff{"messages":[]}', "history_malformed"),
    ],
)
def test_broken_files_are_one_file_level_finding(data: str | bytes, code: str) -> None:
    report = validate_history(data, file_mode=0o644, directory_mode=0o700)
    assert [(f.code.value, f.message_index) for f in report.findings] == [
        (code, None),
        ("file_mode_too_open", None),
    ]
    assert report.counts.total == 0 and not report.replays_as_stored
    assert report.findings[0].detail  # says why, for people


@pytest.mark.parametrize(
    "data",
    [
        b'{"messages":[],"saved_by":"x"}',
        b'{"messages":[{"role":"user","content":[],"x_meta":{"a":[NaN]}}]}'.replace(b"NaN", b"1"),
        b'{"messages":[{"role":"user","content":[],"tool_calls":null,"channels":null}]}',
        b'{"messages":[{"role":"user","content":[],"tool_results":null,"provider":null}]}',
        b'{"messages":[{"role":"user","content":[{"type":"text","text":"\\ud800"}]}]}',
    ],
)
def test_lenient_about_what_h1_does_not_name(data: bytes) -> None:
    assert validate_history(data).findings == ()


def test_a_lone_surrogate_escape_is_the_blocks_problem_not_the_files() -> None:
    block = {"type": "text", "text": "\ud800"}
    text = json.dumps({"messages": [assistant(block)]})  # ensure_ascii: written as an escape
    assert codes(text) == [("json_invalid_unicode", 0, 0)]


def test_unknown_members_are_ignored_and_the_messages_are_the_values() -> None:
    base = {"messages": [user(), assistant(envelope(), cache=record("gpt-5", None))]}
    extra = {**base, "unknown": 1}
    plain, ignoring = parse_history_file(json.dumps(base)), parse_history_file(json.dumps(extra))
    assert isinstance(plain, HistoryFile) and isinstance(ignoring, HistoryFile)
    assert plain == ignoring == history_from_value(base)


@pytest.mark.parametrize(
    "data",
    [
        '{"messages":[]}',
        '{"messages":[],"messages":[]}',
        '{"messages":[{"role":"user","content":[{"a":1,"\\u0061":2}]}]}',
        '{"messages":[{"role":"user","content":[{"type":"text","text":"\\ud800"}]}]}',
        '\ufeff{"messages":[]}',
        '{"messages":[],"x":NaN}',
        '{"messages":[],"x":' + "[" * 600 + "]" * 600 + "}",
        '{"messages":[],"x":' + '{"a":' * 600 + '{"b":1,"b":1}' + "}" * 601,
        '{"messages":[]} x',
    ],
)
def test_the_c_reading_of_a_file_is_the_exhaustive_one(data: str) -> None:
    """SPEC H1: the C parser answers what the exhaustive reading answers, or leaves the file to
    it (escaped lone surrogates, a byte-order mark, NaN, nesting past its depth, bad grammar)."""
    exhaustive = parse_json_file_exhaustively(data)
    for form in (data, data.encode("utf-8")):
        found = parse_json_file(form)
        if isinstance(exhaustive, HistoryFileProblem):
            assert isinstance(found, HistoryFileProblem) and found.code is exhaustive.code
        else:
            assert found == exhaustive


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"]), "content": json_values},
    optional={
        "tool_calls": json_values,
        "tool_results": json_values,
        "channels": st.none()
        | st.dictionaries(st.sampled_from([REPLAY, "reasoning", "x"]), json_values),
        "timestamp": json_values,
        "provider": st.sampled_from(["openai", "xai", ""]) | json_values,
        "other": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries({"messages": st.lists(messages, max_size=3)}, optional={"x": json_values})
)
def test_both_readings_give_one_verdict(value: dict[str, Any]) -> None:
    text = json.dumps(value)
    fast_or_slow = parse_history_file(text)
    slow = history_from_value(parse_json_file_exhaustively(text))
    if isinstance(slow, HistoryFileProblem):
        assert isinstance(fast_or_slow, HistoryFileProblem) and fast_or_slow.code is slow.code
    else:
        assert fast_or_slow == slow
    validate_history(text)  # never raises (E4.2)
    # The validator's lighter reading: the same messages, as (role, channels, provider) triples.
    triples = read_message_channels(text)
    if isinstance(triples, HistoryFileProblem):
        assert isinstance(slow, HistoryFileProblem) and triples == slow
    else:
        assert isinstance(slow, HistoryFile)
        assert [(r, dict(c), p) for r, c, p in triples] == [
            (m.role, dict(m.channels), m.provider) for m in slow.messages
        ]


# --- permissions (H4) and session.json (H1) ----------------------------------------------------


@pytest.mark.parametrize(
    ("file_mode", "directory_mode", "expected"),
    [
        (0o600, 0o700, []),
        (0o400, 0o500, []),
        (None, None, []),
        (0o644, 0o700, ["file_mode_too_open"]),
        (0o601, None, ["file_mode_too_open"]),
        (0o600, 0o755, ["directory_mode_too_open"]),
        (0o100640, 0o40710, ["file_mode_too_open", "directory_mode_too_open"]),
    ],
)
def test_permission_findings(
    file_mode: int | None, directory_mode: int | None, expected: list[str]
) -> None:
    report = validate_history(
        history(assistant(MINIMAL)), file_mode=file_mode, directory_mode=directory_mode
    )
    assert [f.code.value for f in report.findings] == [*expected, "legacy_minimal_record"]


def test_session_json_is_checked_for_permissions_only() -> None:
    report = validate_history(b"not json", file_name="dir/session.json", file_mode=0o644)
    assert [f.code for f in report.findings] == [Code.FILE_MODE_TOO_OPEN]
    assert report.counts.total == 0 and report.replays_as_stored
    assert validate_history(b"not json", file_name="session.json.bak").findings[0].code is (
        Code.HISTORY_MALFORMED
    )


# --- blocks another provider issued (H3, P4) ---------------------------------------------------


def _assistant_with(provider: object, *texts: str) -> dict[str, Any]:
    blocks = [{"type": "text", "text": text} for text in texts]
    return {"role": "assistant", "content": [], "provider": provider, "channels": {REPLAY: blocks}}


def test_blocks_of_another_issuer_are_counted_and_take_no_part_in_dedupe() -> None:
    same = envelope("rs_1", "c1")
    text = json.dumps({"messages": [_assistant_with("xai", same), _assistant_with("xai", same)]})

    to_openai = validate_history(text, provider="openai")
    to_xai = validate_history(text, provider="xai")

    assert (to_openai.provider_mismatch, to_openai.findings) == (2, ())
    assert not to_openai.replays_as_stored
    assert to_xai.provider_mismatch == 0
    assert [f.code for f in to_xai.findings] == [Code.DEDUPE_EXACT_DUPLICATE]


@pytest.mark.parametrize("provider", [None, "", 7, ["xai"]])
def test_a_message_that_records_no_provider_is_the_files(provider: object) -> None:
    text = json.dumps({"messages": [_assistant_with(provider, envelope())]})

    report = validate_history(text, provider="xai")

    assert (report.provider_mismatch, report.replays_as_stored) == (0, True)


def test_both_history_readers_keep_the_message_provider_member() -> None:
    """SPEC H1: ``provider`` is a message member; which values record one is SPEC P4's."""
    messages = [_assistant_with("xai", envelope()), _assistant_with("", envelope())]
    text = json.dumps({"messages": messages})

    parsed = parse_history_file(text)
    channels = read_message_channels(text)

    assert isinstance(parsed, HistoryFile) and not isinstance(channels, HistoryFileProblem)
    assert [m.provider for m in parsed.messages] == ["xai", None]
    assert [provider for _, _, provider in channels] == ["xai", None]


def test_the_same_item_recorded_by_two_providers_is_no_duplicate_in_a_file() -> None:
    """SPEC D5 on a real history file: only the file's provider's copy is deduplicated."""
    same = envelope("rs_1", "c1")
    messages = [_assistant_with("openai", same), user(), _assistant_with("xai", same)]

    report = validate_history(json.dumps({"messages": messages}), provider="openai")

    assert report.findings == ()
    assert (report.counts.resumable, report.provider_mismatch) == (2, 1)
