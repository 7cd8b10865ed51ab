"""A redacted export holds nothing a leak scan finds, whatever the text form (SPEC H6, H8, R2).

Regression tests for issue 12, defects 1, 2, 9, 15 and 16, and hypothesis properties: a canary
ciphertext placed anywhere in a history, in any text form, never reaches a redacted export, and
scanning the export finds nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reasoning_replay.cli.main import main
from reasoning_replay.history.export import ExportMode, export_file_text, export_history
from reasoning_replay.history.jsonspans import JArray, JNode, JObject, JScalar, JString, parse_whole
from reasoning_replay.history.log_redaction import REDACTION_FAILED, ReplayRedactingFilter
from reasoning_replay.history.scan import scan_text
from reasoning_replay.history.text_redaction import redact_text
from reasoning_replay.record.redaction import is_sensitive_name, redact_value
from reasoning_replay.record.redaction import redact_structural as redact

CANARY = "gAAAA-canary-7f3e9c2b1d0a"
ENVELOPE = json.dumps(
    {
        "schema": "fast-agent.openai-responses.reasoning-replay",
        "version": 1,
        "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": CANARY},
    },
    separators=(",", ":"),
)


def _canary(template: str) -> str:
    return template.replace("@", CANARY)


MEMBER = _canary('{"encrypted_content":"@"}')

# Every text form of issue 12, defect 1: each holds the canary where a leak scan finds it.
TEXT_FORMS: dict[str, str] = {
    "object": MEMBER,
    "array": f"[{MEMBER}, 1.10]",
    "duplicate-member": _canary('{"encrypted_content":"x","encrypted_content":"@"}'),
    "deeper-than-32": "[" * 40 + MEMBER + "]" * 40,
    "lone-surrogate-escape": _canary('{"a":"\\ud800","encrypted_content":"@"}'),
    "trailing-data": MEMBER + " and then prose",
    "byte-order-mark": "\ufeff" + MEMBER,
    "json-in-a-json-string": json.dumps(MEMBER),
    "json-in-json-in-json": json.dumps(json.dumps({"body": MEMBER})),
    "envelope": ENVELOPE,
    "envelope-in-prose": "stored: " + ENVELOPE,
    "fragment-in-prose": _canary('error "Encrypted_Content": "@" retry'),
    "escaped-unterminated-fragment": _canary('log {\\"encrypted_content\\": \\"@'),
    "escaped-name": _canary('{"encrypted\\u005fcontent":"@"}'),
    "made-readable": _canary('{"encrypted\\u005fcontent":"@", "encrypted_content": "B\\x"}'),
}


def _history(place: Callable[[dict[str, Any], str], None], text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "a"}]}
    place(message, text)
    return {"messages": [message]}


PLACES: dict[str, Callable[[dict[str, Any], str], None]] = {
    "other-channel": lambda m, t: m.update(channels={"tool-data": [{"type": "text", "text": t}]}),
    "display-channel": lambda m, t: m.update(channels={"reasoning": [{"type": "text", "text": t}]}),
    "content": lambda m, t: m.update(content=[{"type": "text", "text": t}]),
    "tool-arguments": lambda m, t: m.update(tool_calls={"c1": {"arguments": t}}),
    "member-name": lambda m, t: m.update(tool_results={t: {"content": []}}),
    "block-member": lambda m, t: m.update(
        channels={"openai-reasoning-encrypted": [{"type": "text", "text": "x", "note": t}]}
    ),
}


def _exported_text(history: object) -> str:
    exported = export_history(history, ExportMode.REDACTED)
    assert isinstance(exported, dict)
    return export_file_text(exported)


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("form", sorted(TEXT_FORMS))
def test_redacted_export_leaves_nothing_a_scan_finds_in_any_text_form(
    form: str, place: str
) -> None:
    history = _history(PLACES[place], TEXT_FORMS[form])
    written = _exported_text(history)
    assert CANARY not in written
    assert scan_text(written) == ()


def test_redacted_export_cli_output_scans_clean(tmp_path: Path) -> None:
    messages = [
        _history(PLACES[p], text)["messages"][0] for p in PLACES for text in TEXT_FORMS.values()
    ]
    source, target = tmp_path / "history.json", tmp_path / "export.json"
    source.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    assert main(["export", "--mode", "redacted", str(source), str(target)]) == 0
    assert CANARY not in target.read_text(encoding="utf-8")
    assert main(["scan", str(target)]) == 0


def test_export_keeps_number_lexemes_in_texts_and_in_the_file(tmp_path: Path) -> None:
    text = '{"n":12345678901234567890123,"f":1.10}'
    source, target = tmp_path / "history.json", tmp_path / "export.json"
    head = '{"messages": [{"role": "user", "content": [], "timestamp": 1.10, "big": 1E400, '
    source.write_text(
        head + '"channels": {"tool-data": [{"type": "text", "text": ' + json.dumps(text) + "}]}}],"
        ' "n": -0}',
        encoding="utf-8",
    )
    assert main(["export", "--mode", "redacted", str(source), str(target)]) == 0
    written = target.read_text(encoding="utf-8")
    assert json.dumps(text) in written
    assert '"timestamp": 1.10,' in written and '"big": 1E400,' in written
    assert '"n": -0,' in written


def test_export_of_a_500_deep_history_is_bounded_not_an_exception(tmp_path: Path) -> None:
    deep = "[" * 500 + json.dumps(CANARY) + "]" * 500
    source, target = tmp_path / "history.json", tmp_path / "export.json"
    block = '{"type": "text", "text": "x", "d": ' + deep + "}"
    source.write_text(
        '{"messages": [{"role": "user", "content": [' + block + "]}]}",
        encoding="utf-8",
    )
    assert main(["validate", str(source)]) in (0, 1)
    for mode in ("redacted", "resumable"):
        assert main(["export", "--mode", mode, str(source), str(target)]) == 0
    assert main(["export", "--mode", "redacted", str(source), str(target)]) == 0
    assert '"redacted": "nesting"' in target.read_text(encoding="utf-8")


def test_redaction_of_deep_values_is_bounded() -> None:
    deep: object = CANARY
    for _ in range(5000):
        deep = [deep]
    redacted = redact({"data": deep})
    assert CANARY not in json.dumps(redacted)


def test_log_filter_never_raises_into_the_caller_and_withholds_what_it_cannot_redact() -> None:
    class Boom:
        def model_dump(self, mode: str) -> object:
            raise RuntimeError(CANARY)

    deep: object = {"encrypted_content": CANARY}
    for _ in range(5000):
        deep = [deep]
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    handler.addFilter(ReplayRedactingFilter())
    logger = logging.getLogger("test_export_no_secret.filter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("payload %s", deep)
        logger.warning("sdk %s", Boom(), extra={"data": Boom()})
    finally:
        logger.removeHandler(handler)
    assert len(records) == 2
    for record in records:
        assert CANARY not in record.getMessage()
        assert CANARY not in json.dumps(vars(record), default=repr)
    assert records[1].getMessage() == REDACTION_FAILED


def test_view_shaped_objects_with_ciphertext_like_values_are_not_left_alone() -> None:
    view: dict[str, object] = {
        "type": "reasoning",
        "id": "rs_1",
        "fields": [],
        "encrypted_content_bytes": CANARY,
        "encrypted_content_sha256": None,
        "summary_parts": 0,
        "summary_bytes": 0,
        "content_parts": 0,
        "content_bytes": 0,
    }
    assert CANARY not in json.dumps(redact(view))
    shaped = {"encrypted_content": {"redacted": "encrypted_content", "bytes": CANARY, "sha256": ""}}
    assert CANARY not in json.dumps(redact(shaped))
    assert CANARY not in json.dumps(redact({"password": {"redacted": CANARY}}))


@pytest.mark.parametrize(
    "name",
    ["auth_token", "github_token", "session_token", "openai_api_key", "apiKey", "x-api-key",
     "OpenAI-Api-Key"],
)  # fmt: skip
def test_secret_names_of_the_seed_are_sensitive(name: str) -> None:
    assert is_sensitive_name(name)
    assert redact({name: CANARY}) == {name: {"redacted": name}}


# --- properties ---------------------------------------------------------------------------------

_NAMES = st.sampled_from(
    ["a", "type", "text", "id", "Encrypted_Content", "api_key", "author", "max_output_tokens"]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_NAMES, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def _histories_with_a_canary(draw: st.DrawFn) -> dict[str, Any]:
    text = draw(st.sampled_from(sorted(TEXT_FORMS.values())))
    wrap = draw(st.sampled_from(["as-is", "in-a-json-string", "in-a-json-value", "after-prose"]))
    if wrap == "in-a-json-string":
        text = json.dumps(text)
    elif wrap == "in-a-json-value":
        text = json.dumps({"wrapped": [draw(_JSON), text]})
    elif wrap == "after-prose":
        text = draw(st.text(alphabet='ab {}[]":,\\', max_size=10)) + text
    history = _history(draw(st.sampled_from(list(PLACES.values()))), text)
    history["extra"] = draw(_JSON)
    return history


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=_histories_with_a_canary())
def test_any_history_with_a_canary_exports_without_it_and_scans_clean(
    history: dict[str, Any],
) -> None:
    written = _exported_text(history)
    assert CANARY not in written
    assert scan_text(written) == ()
    again = export_history(json.loads(written), ExportMode.REDACTED)
    assert isinstance(again, dict)
    assert export_file_text(again) == written  # idempotent (H6)


@settings(max_examples=200, deadline=None)
@given(value=_JSON)
def test_redact_is_idempotent(value: object) -> None:
    once = redact_value(value, redact_text)
    assert redact_value(once, redact_text) == once
    assert redact(redact(value)) == redact(value)


_SNIPPETS = st.sampled_from(
    ["{", "}", "[", "]", '"', ":", ",", "\\", " ", "x", "1", '"encrypted_content"',
     '"Encrypted_Content"', '\\"', '"' + CANARY + '"', "\\u005f", '"type"', '"reasoning"',
     '"schema"', '"fast-agent.openai-responses.reasoning-replay"', '"id"', "\\x"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_SNIPPETS, max_size=24))
def test_text_redaction_is_idempotent_and_leaves_nothing_a_scan_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    redacted = redact_text(text)
    assert redact_text(redacted) == redacted
    assert scan_text(redacted) == ()
    assert scan_text(json.dumps({"t": redacted})) == ()


def _plain(node: JNode) -> object:
    if isinstance(node, JString):
        return node.value
    if isinstance(node, JScalar):
        return json.loads(node.lexeme)
    if isinstance(node, JArray):
        return [_plain(element) for element in node.elements]
    assert isinstance(node, JObject)
    return {member.name.value: _plain(member.value) for member in node.members}


@settings(max_examples=300, deadline=None)
@given(value=_JSON, indent=st.sampled_from([None, 1]))
def test_the_span_reader_reads_what_json_reads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    node = parse_whole(text)
    assert node is not None and _plain(node) == json.loads(text)
    assert parse_whole(text + " x") is None
