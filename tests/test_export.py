"""History exports (SPEC H2, H6): the pure export, the ``export`` operation and the CLI."""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay import Code, ReasoningReplayItem, serialize_reasoning_replay_envelope
from reasoning_replay.cli.main import main
from reasoning_replay.history.export import (
    EXPORT_MARKER,
    REDACTED_NOTE,
    RESUMABLE_WARNING,
    ExportMode,
    export_history,
    redacted_record_text,
)
from reasoning_replay.history.text_redaction import compact_json
from reasoning_replay.operations import dispatch
from reasoning_replay.record.envelope import REDACTED_SCHEMA_NAME, REPLAY_CHANNEL
from reasoning_replay.record.reader import parse_reasoning_replay_envelope

SECRET_1 = "gAAAA-secret-one"
SECRET_2 = "gAAAA-secret-two"


def _envelope(item_id: str, ciphertext: str, *summary: str) -> str:
    return serialize_reasoning_replay_envelope(ReasoningReplayItem(item_id, summary, ciphertext))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def history() -> dict[str, Any]:
    """A history with every kind of replay block and replay material outside the replay channel."""
    return {
        "session": {"Encrypted_Content": "gAAAA-top-level"},
        "messages": [
            {"role": "user", "content": [_text("hi")], "timestamp": "2026-11-29T10:00:00Z"},
            {
                "role": "assistant",
                "content": [_text("hello")],
                "channels": {
                    REPLAY_CHANNEL: [
                        _text(_envelope("rs_1", SECRET_1, "Plan é")),
                        _text('{"type":"reasoning","id":"rs_old","encrypted_content":"gAAAA-leg"}'),
                        _text("not json"),
                        {"type": "image", "data": "gAAAA-image"},
                    ],
                    "reasoning": [_text("Plan é")],
                    "openai-compaction": [
                        _text('{"type": "compaction", "encrypted_content": "gAAAA-compacted"}')
                    ],
                },
                "tool_calls": {"c1": {"params": {"arguments": {"encrypted_content": SECRET_2}}}},
            },
            {
                "role": "user",
                "content": [_text("")],
                "tool_results": {"c1": {"content": [_text("ok")], "item": {"type": "reasoning"}}},
            },
        ],
    }


def ciphertext_strings(value: object) -> list[str]:
    """Every string value of a member named ``encrypted_content`` (any ASCII case), anywhere."""
    found: list[str] = []
    if isinstance(value, dict):
        for name, member in value.items():
            if name.lower() == "encrypted_content" and isinstance(member, str):
                found.append(member)
            found += ciphertext_strings(member)
    elif isinstance(value, list):
        for element in value:
            found += ciphertext_strings(element)
    return found


def replay_blocks(exported: dict[str, Any]) -> list[Any]:
    return [
        block
        for message in exported["messages"]
        for block in (message.get("channels") or {}).get(REPLAY_CHANNEL, [])
    ]


def redacted(value: object, **options: bool) -> dict[str, Any]:
    exported = export_history(value, ExportMode.REDACTED, **options)
    assert isinstance(exported, dict)
    return exported


# --- modes and marker ---------------------------------------------------------------------------


def test_resumable_is_the_history_unchanged_with_the_marker_last() -> None:
    source = history()
    exported = export_history(source, ExportMode.RESUMABLE)
    assert isinstance(exported, dict)
    assert list(exported) == ["session", "messages", EXPORT_MARKER]
    assert exported[EXPORT_MARKER] == {
        "mode": "resumable",
        "warning": RESUMABLE_WARNING,
        "display_reasoning": "duplicated",
    }
    assert {k: v for k, v in exported.items() if k != EXPORT_MARKER} == history()
    assert source == history()  # the input is not mutated


def test_the_resumable_marker_says_display_reasoning_last_and_the_redacted_one_does_not() -> None:
    resumable = export_history(history(), ExportMode.RESUMABLE)
    redacted = export_history(history(), ExportMode.REDACTED)
    assert isinstance(resumable, dict) and isinstance(redacted, dict)
    assert list(resumable[EXPORT_MARKER]) == ["mode", "warning", "display_reasoning"]
    assert "display_reasoning" not in redacted[EXPORT_MARKER]


def test_display_reasoning_is_none_once_the_display_channel_is_gone() -> None:
    source = history()
    for message in source["messages"]:
        (message.get("channels") or {}).pop("reasoning", None)
    exported = export_history(source, ExportMode.RESUMABLE)
    assert isinstance(exported, dict)
    assert exported[EXPORT_MARKER]["display_reasoning"] == "none"


def test_redacted_marker_and_member_order() -> None:
    exported = redacted(history())
    assert list(exported) == ["session", "messages", EXPORT_MARKER]
    assert exported[EXPORT_MARKER] == {"mode": "redacted", "note": REDACTED_NOTE}
    assert list(exported["messages"][1]) == ["role", "content", "channels", "tool_calls"]


def test_an_existing_marker_is_replaced_and_moved_last() -> None:
    source = {EXPORT_MARKER: {"mode": "redacted"}, "messages": [], "title": "t"}
    exported = export_history(source, ExportMode.RESUMABLE)
    assert isinstance(exported, dict)
    assert list(exported) == ["messages", "title", EXPORT_MARKER]
    assert exported[EXPORT_MARKER]["mode"] == "resumable"


# --- no secret left -------------------------------------------------------------------------------


def test_a_redacted_export_holds_no_encrypted_content_string() -> None:
    exported = redacted(history())
    assert ciphertext_strings(exported) == []
    text = json.dumps(exported, ensure_ascii=False)
    for secret in (SECRET_1, SECRET_2, "gAAAA-leg", "gAAAA-compacted", "gAAAA-top-level"):
        assert secret not in text


def test_every_replay_block_of_a_redacted_export_reads_as_redacted_record() -> None:
    blocks = replay_blocks(redacted(history()))
    assert len(blocks) == 4
    for block in blocks:
        assert block["type"] == "text"
        assert parse_reasoning_replay_envelope(block["text"]).code is Code.REDACTED_RECORD
    records = [json.loads(block["text"]) for block in blocks]
    assert [r["was"] for r in records] == [
        "resumable",
        "legacy_minimal_record",
        "json_malformed",
        "block_not_text",
    ]
    assert all(r["schema"] == REDACTED_SCHEMA_NAME and r["version"] == 1 for r in records)
    assert records[0]["view"]["id"] == "rs_1"
    assert records[0]["view"]["encrypted_content_bytes"] == len(SECRET_1)
    assert records[1]["view"]["fields"] == ["encrypted_content", "id", "type"]
    assert records[2]["view"] is None and records[3]["view"] is None


def test_other_channels_are_redacted_in_place_and_other_texts_kept() -> None:
    message = redacted(history())["messages"][1]
    compaction = json.loads(message["channels"]["openai-compaction"][0]["text"])
    assert compaction["encrypted_content"]["redacted"] == "encrypted_content"
    assert message["channels"]["openai-compaction"][0]["text"].startswith('{"type": "compaction"')
    assert message["channels"]["reasoning"] == [_text("Plan é")]
    assert message["content"] == [_text("hello")]


def test_compact_text_uses_c3_escapes_and_escapes_lone_surrogates() -> None:
    assert compact_json({"a": ['é\n\u2028\x7f"\\', None, 1]}) == (
        '{"a":["é\\n\u2028\x7f\\"\\\\",null,1]}'
    )
    assert compact_json("x\ud800") == '"x\\ud800"'


def test_drop_display_reasoning() -> None:
    channels = redacted(history(), drop_display_reasoning=True)["messages"][1]["channels"]
    assert list(channels) == [REPLAY_CHANNEL, "openai-compaction"]
    kept = export_history(history(), ExportMode.RESUMABLE, drop_display_reasoning=True)
    assert isinstance(kept, dict)
    assert "reasoning" in kept["messages"][1]["channels"]  # resumable: as stored


# --- idempotence --------------------------------------------------------------------------------


def test_exporting_a_redacted_export_again_changes_nothing() -> None:
    once = redacted(history())
    twice = redacted(copy.deepcopy(once))
    assert twice == once
    assert json.dumps(twice, ensure_ascii=False) == json.dumps(once, ensure_ascii=False)
    assert all(
        parse_reasoning_replay_envelope(block["text"]).code is Code.REDACTED_RECORD
        for block in replay_blocks(twice)
    )


def test_a_record_holding_a_secret_is_redacted_and_stays_a_record() -> None:
    hostile = json.dumps(
        {"schema": REDACTED_SCHEMA_NAME, "was": "resumable", "encrypted_content": SECRET_1}
    )
    text = redacted_record_text(hostile)
    assert SECRET_1 not in text
    assert parse_reasoning_replay_envelope(text).code is Code.REDACTED_RECORD


# --- bytes kept (SPEC H6) -----------------------------------------------------------------------


def test_export_keeps_number_lexemes_of_texts_it_does_not_change() -> None:
    kept = '{"n":12345678901234567890123,"f":1.10, "e": 1E2}'
    changed = '{"n": 1.10, "password": "p", "m": [1e400, -0]}'
    channels = {"tool-data": [_text(kept), _text(changed)]}
    source = {"messages": [{"role": "user", "content": [], "channels": channels}]}
    blocks = redacted(source)["messages"][0]["channels"]["tool-data"]
    assert blocks == [
        _text(kept),
        _text('{"n": 1.10, "password": {"redacted":"password"}, "m": [1e400, -0]}'),
    ]


def test_a_channel_text_with_an_overflowing_number_is_kept_verbatim() -> None:
    source = {"messages": [{"role": "assistant", "content": [], "channels": {"x": []}}]}
    source["messages"][0]["channels"]["x"] = [_text('{"n": 1e400}')]
    assert redacted(source)["messages"][0]["channels"]["x"] == [_text('{"n": 1e400}')]


# --- not a history ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [],
        None,
        {},
        {"messages": {}},
        {"messages": [{"role": "system", "content": []}]},
        {"messages": [{"role": "user"}]},
        {"messages": [{"role": "user", "content": [], "channels": {"x": {}}}]},
        {"messages": [{"role": "user", "content": [], "tool_calls": []}]},
    ],
)
@pytest.mark.parametrize("mode", list(ExportMode))
def test_what_is_not_a_history_is_history_malformed(value: object, mode: ExportMode) -> None:
    assert export_history(value, mode) is Code.HISTORY_MALFORMED


def test_export_operation() -> None:
    result = dispatch("export", {"history": {"messages": []}, "mode": "redacted"})
    assert result.output == {
        "history": {"messages": [], EXPORT_MARKER: redacted({"messages": []})[EXPORT_MARKER]}
    }
    assert dispatch("export", {"history": [], "mode": "resumable"}).code == "history_malformed"


# --- the CLI ------------------------------------------------------------------------------------


def _write_history(tmp_path: Path, value: object = None) -> Path:
    source = tmp_path / "history_dev.json"
    source.write_text(json.dumps(history() if value is None else value), encoding="utf-8")
    return source


def test_cli_redacted_writes_0600_and_no_warning(tmp_path: Path, capsys: Any) -> None:
    source, target = _write_history(tmp_path), tmp_path / "out.json"
    old_umask = os.umask(0o022)
    try:
        assert main(["export", "--mode", "redacted", str(source), str(target)]) == 0
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert exported == redacted(history())
    assert ciphertext_strings(exported) == []


def test_cli_resumable_prints_the_warning_on_stderr(tmp_path: Path, capsys: Any) -> None:
    source, target = _write_history(tmp_path), tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o644)
    assert main(["export", "--mode", "resumable", str(source), str(target)]) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # a rewrite never stays wider
    captured = capsys.readouterr()
    assert RESUMABLE_WARNING in captured.err
    assert RESUMABLE_WARNING not in captured.out
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert exported[EXPORT_MARKER]["mode"] == "resumable"
    assert exported["messages"] == history()["messages"]


def test_cli_drop_display_reasoning(tmp_path: Path) -> None:
    source, target = _write_history(tmp_path), tmp_path / "out.json"
    argv = ["export", "--mode", "redacted", "--drop-display-reasoning", str(source), str(target)]
    assert main(argv) == 0
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert "reasoning" not in exported["messages"][1]["channels"]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"messages": {}}', "history_malformed"),
        (b"not json", "history_malformed"),
        (b'{"messages": []}\xff', "history_unreadable"),
    ],
)
def test_cli_non_history_exits_1(tmp_path: Path, capsys: Any, content: bytes, code: str) -> None:
    source, target = tmp_path / "h.json", tmp_path / "out.json"
    source.write_bytes(content)
    assert main(["export", "--mode", "redacted", str(source), str(target)]) == 1
    assert code in capsys.readouterr().err
    assert not target.exists()


def test_cli_usage_and_io_errors_exit_2(tmp_path: Path, capsys: Any) -> None:
    source = _write_history(tmp_path)
    missing = tmp_path / "missing.json"
    assert main(["export", "--mode", "redacted", str(missing), str(tmp_path / "o.json")]) == 2
    unwritable = tmp_path / "no-such-dir" / "o.json"
    assert main(["export", "--mode", "redacted", str(source), str(unwritable)]) == 2
    argv = ["export", "--mode", "resumable", "--drop-display-reasoning", str(source), "o.json"]
    assert main(argv) == 2
    with pytest.raises(SystemExit) as exited:
        main(["export", "--mode", "other", str(source), str(tmp_path / "o.json")])
    assert exited.value.code == 2
    assert not list(tmp_path.glob("o.json"))
    capsys.readouterr()
