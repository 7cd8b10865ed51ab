"""``conformance validate --format sarif``: a SARIF 2.1.0 log that GitHub code scanning places on
lines, valid against the official schema (tests/vendor/, offline), with regions computed from the
file's bytes, fingerprints that survive unrelated edits, and rules that link their SPEC rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from reasoning_replay.cli.main import main
from reasoning_replay.history.finding_places import TextRegion, block_places
from reasoning_replay.versions import versions
from support import envelope_text

SARIF_SCHEMA = json.loads(
    (Path(__file__).parent / "vendor" / "sarif-schema-2.1.0.json").read_text("utf-8")
)
REPLAY = "openai-reasoning-encrypted"
MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA-secret","id":"rs_old"}'


def sarif_errors(log: dict[str, Any]) -> list[str]:
    validator = Draft7Validator(SARIF_SCHEMA, format_checker=Draft7Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def pretty_history(*blocks: str, leading: int = 0) -> str:
    """A history as fast-agent writes it: indented, one member per line, with ``leading``
    user messages first."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"question {n} \u00e9\U0001f600"}]}
        for n in range(leading)
    ]
    messages += [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "answer"}],
            "channels": {REPLAY: [{"type": "text", "text": block}]},
        }
        for block in blocks
    ]
    return json.dumps({"messages": messages}, indent=2, ensure_ascii=False) + "\n"


def sarif_of(tmp_path: Path, capsys: Any, *paths: str) -> dict[str, Any]:
    status = main(["validate", "--no-progress", "--format", "sarif", *paths])
    assert status in (0, 1)
    log: dict[str, Any] = json.loads(capsys.readouterr().out)
    return log


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.fixture
def legacy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write(tmp_path / "history_dev.json", pretty_history(MINIMAL, leading=2))


def test_the_log_is_valid_against_the_official_sarif_2_1_0_schema(
    tmp_path: Path, capsys: Any, legacy_file: Path
) -> None:
    duplicate = envelope_text("rs_a", "cipher-a")
    write(tmp_path / "s1" / "history_b.json", pretty_history(duplicate, duplicate))
    write(tmp_path / "s1" / "compacted_1.json", "{")
    (tmp_path / "s1").chmod(0o755)
    log = sarif_of(tmp_path, capsys, str(legacy_file), "s1")
    assert sarif_errors(log) == []
    assert len(log["runs"][0]["results"]) == 4


def test_a_block_finding_has_the_region_of_the_blocks_text_in_the_file(
    tmp_path: Path, capsys: Any, legacy_file: Path
) -> None:
    log = sarif_of(tmp_path, capsys, "history_dev.json")
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    lines = legacy_file.read_text("utf-8").split("\n")
    line = lines[region["startLine"] - 1]
    # utf16CodeUnits: the line before the string is ASCII here, so units are characters
    assert log["runs"][0]["columnKind"] == "utf16CodeUnits"
    assert line[region["startColumn"] - 1 :].startswith('"{\\"type\\":\\"reasoning\\"')
    assert region["endLine"] == region["startLine"]
    assert line[region["endColumn"] - 2] == '"'  # the end column is one past the closing quote


def test_columns_count_utf16_code_units_from_the_bytes() -> None:
    block = '[{"type": "text", "text": "t"}]'
    channels = json.dumps({REPLAY: json.loads(block)})
    text = '{"messages": [{"x": "\U0001f600\u00e9", "channels": ' + channels + "}]}"
    data = text.encode("utf-8")
    ((key, place),) = block_places(data, [(0, 0, False)]).items()
    before = text[: text.index('"t"}')]
    expected_column = len(before.encode("utf-16-le")) // 2 + 1  # the emoji is two units
    assert key == (0, 0, False)
    assert place.region == TextRegion(1, expected_column, 1, expected_column + 3)


def test_a_file_level_finding_is_placed_at_the_start_of_the_file(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "history_bad.json", "\n\n{")
    (result,) = sarif_of(tmp_path, capsys, "history_bad.json")["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 1,
        "endLine": 1,
        "endColumn": 1,
    }


def test_fingerprints_survive_unrelated_edits_and_differ_per_block(
    tmp_path: Path, capsys: Any, legacy_file: Path
) -> None:
    other = MINIMAL.replace("rs_old", "rs_other")
    write(legacy_file, pretty_history(MINIMAL, other, leading=2))
    before = sarif_of(tmp_path, capsys, "history_dev.json")["runs"][0]["results"]
    # another message's text changes, and lines shift: the same findings keep their prints
    edited = pretty_history(MINIMAL, other, leading=2).replace("question 0", "question zero")
    write(legacy_file, edited.replace('"role": "user",', '"role": "user",\n\n\n  ', 1))
    after = sarif_of(tmp_path, capsys, "history_dev.json")["runs"][0]["results"]

    def prints(results: list[dict[str, Any]]) -> list[str]:
        return [r["partialFingerprints"]["reasoningReplayFinding/v1"] for r in results]

    def lines(results: list[dict[str, Any]]) -> list[int]:
        return [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]

    assert prints(before) == prints(after) and len(set(prints(before))) == 2
    assert lines(before) != lines(after)
    assert all("secret" not in p and "gAAAA" not in p for p in prints(before))


def test_rules_link_their_spec_rule_at_the_public_url_and_the_driver_names_itself(
    tmp_path: Path, capsys: Any, legacy_file: Path
) -> None:
    run = sarif_of(tmp_path, capsys, "history_dev.json")["runs"][0]
    driver = run["tool"]["driver"]
    (rule,) = driver["rules"]
    base = versions().public_url
    assert rule["helpUri"] == f"{base}SPEC.md#E5"
    assert rule["shortDescription"]["text"] and rule["help"]["text"]
    assert driver["name"] == "conformance validate" and driver["version"]
    assert driver["informationUri"] == base


def test_the_log_never_holds_replay_material(
    tmp_path: Path, capsys: Any, legacy_file: Path
) -> None:
    text = json.dumps(sarif_of(tmp_path, capsys, "history_dev.json"))
    assert "secret" not in text and "gAAAA" not in text


def test_every_block_of_a_file_gets_the_line_and_column_counted_from_its_line_start() -> None:
    """Indented (a block per line) and compact (every block on one line): the same blocks."""
    blocks = [MINIMAL.replace("rs_old", f"rs_{n}") for n in range(6)]
    pretty = pretty_history(*blocks, leading=3)
    compact = json.dumps(json.loads(pretty), ensure_ascii=False)
    keys = [(m, 0, False) for m in range(3, 9)]
    for text in (pretty, compact):
        places = block_places(text.encode("utf-8"), keys)
        assert sorted(places) == keys
        lines = text.split("\n")
        for place in places.values():
            line = lines[place.region.start_line - 1]
            # the users' emoji before the blocks: two UTF-16 units, one str character each
            start = place.region.start_column - 1
            found = [i for i in range(len(line)) if len(line[:i].encode("utf-16-le")) // 2 == start]
            assert found and line[found[0] :].startswith('"{\\"type\\":\\"reasoning\\"')
