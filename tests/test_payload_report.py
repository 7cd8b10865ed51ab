"""``tools/payload_corpus.py`` and ``tools/payload_report.py`` on small generated corpora.

Each test pins one behaviour the payload report states in docs/payload-report.md. Nothing here
is timed: the timing rows are the only figures the tests do not look at.
"""

from __future__ import annotations

import importlib
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from reasoning_replay import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    canonicalize_completed_reasoning_output_item,
    parse_reasoning_replay_envelope,
)

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
SEED = 7
SMALL = ("--tasks", "4", "--turns-median", "9", "--turns-range", "4,16", "--seed", str(SEED))
SVG = "{http://www.w3.org/2000/svg}"


def _import_tool(name: str) -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _import_tool("payload_corpus")


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return _import_tool("payload_report")


def _generate(gen: ModuleType, out: Path, *extra: str) -> Path:
    assert gen.main(["--out", str(out), *SMALL, *extra]) == 0
    return out


@pytest.fixture(scope="module")
def corpus_dir(gen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus with the generator's defaults (raw snapshots, as the seed's), only smaller."""
    return _generate(gen, tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def report(tool: ModuleType, corpus_dir: Path) -> Any:
    return tool.build_report([corpus_dir], passes=1)


def _tasks(tool: ModuleType, directory: Path) -> Iterator[Any]:
    for path in tool.history_paths([directory]):
        task = tool.read_task(path)
        assert not isinstance(task, tool.UnreadableFile), task
        yield task


def _multi_item_messages(tool: ModuleType, directory: Path) -> Iterator[tuple[Any, int, Any]]:
    """(task, message index, message) for every message with two or more reasoning items."""
    for task in _tasks(tool, directory):
        for index, message in enumerate(task.messages):
            if len(message.blocks) >= 2:
                yield task, index, message


def test_generator_output_depends_only_on_its_arguments(gen: ModuleType, tmp_path: Path) -> None:
    first = _generate(gen, tmp_path / "a")
    second = _generate(gen, tmp_path / "b")
    other = gen.main(["--out", str(tmp_path / "c"), *SMALL[:-1], str(SEED + 1)])
    name = "task-001/history_agent.json"
    assert other == 0
    assert (first / name).read_bytes() == (second / name).read_bytes()
    assert (first / name).read_bytes() != (tmp_path / "c" / name).read_bytes()
    manifest = json.loads((first / gen.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["parameters"]["seed"] == SEED
    assert manifest["command"].startswith("python tools/payload_corpus.py --out ")


def test_corpus_has_tool_loops_multi_item_messages_and_realistic_sizes(
    tool: ModuleType, corpus_dir: Path, report: Any
) -> None:
    facts = report.facts
    assert facts.files == 4
    assert facts.multi_item_messages >= 3
    history = json.loads((corpus_dir / "task-001" / "history_agent.json").read_text("utf-8"))
    assert any("tool_calls" in m for m in history["messages"])
    assert any("tool_results" in m for m in history["messages"])
    blocks = [b for task in _tasks(tool, corpus_dir) for b in task.blocks]
    sizes = sorted(len(b.ciphertext) for b in blocks)
    assert sizes[0] >= 1300 and sizes[-1] <= 16400
    assert 3500 <= sizes[len(sizes) // 2] <= 8000  # median about 5.5 KB of base64
    texts = [t for b in blocks for t in b.own_summary]
    assert any(not t.isascii() for t in texts)


def test_raw_snapshot_is_stored_as_fast_agent_0_10_11_wrote_it(gen: ModuleType) -> None:
    item = gen.sdk_output_item("rs_1", ["é"], "c", content=[])
    text = gen.raw_snapshot_text(item)
    assert text == (
        '{"id": "rs_1", "summary": [{"text": "\\u00e9", "type": "summary_text"}],'
        ' "type": "reasoning", "content": [], "encrypted_content": "c"}'
    )
    assert gen.legacy_minimal_text("rs_1", "c") == (
        '{"type": "reasoning", "encrypted_content": "c", "id": "rs_1"}'
    )


def test_canonical_stored_bytes_are_smaller_than_the_raw_snapshot(
    report: Any, tool: ModuleType
) -> None:
    raw = report.totals[tool.StoredForm.RAW]
    canonical = report.totals[tool.StoredForm.CANONICAL]
    assert canonical.records == raw.records > 0
    assert canonical.stored_bytes < raw.stored_bytes
    assert canonical.stored_file_bytes < raw.stored_file_bytes
    assert canonical.final_bytes < raw.final_bytes  # the raw snapshot replays "content": []


def test_legacy_repeats_the_message_wide_summary_on_each_item_of_a_multi_item_message(
    tool: ModuleType, corpus_dir: Path, report: Any
) -> None:
    checked = 0
    for task, index, message in _multi_item_messages(tool, corpus_dir):
        legacy = tool.replay_builder(task, tool.StoredForm.LEGACY)(len(task.messages))
        canonical = tool.replay_builder(task, tool.StoredForm.CANONICAL)(len(task.messages))
        whole = "\n".join(message.display).strip()
        if not whole:
            continue
        summaries = [item["summary"] for item in legacy.by_message[index]]
        assert summaries == [[{"type": "summary_text", "text": whole}]] * len(message.blocks)
        own = [tuple(p["text"] for p in item["summary"]) for item in canonical.by_message[index]]
        assert own == [block.own_summary for block in message.blocks]
        checked += 1
    assert checked >= 2
    totals = report.totals
    assert totals[tool.StoredForm.LEGACY].duplicated_summary_bytes > 0
    assert totals[tool.StoredForm.CANONICAL].duplicated_summary_bytes == 0
    assert totals[tool.StoredForm.CANONICAL].items_not_own_summary == 0
    legacy, canonical = totals[tool.StoredForm.LEGACY], totals[tool.StoredForm.CANONICAL]
    assert canonical.final_multi_bytes < legacy.final_multi_bytes


def test_cumulative_replay_bytes_equal_the_items_replayed_per_turn(
    tool: ModuleType, corpus_dir: Path, report: Any
) -> None:
    """Recounted here without the tool's builders: each envelope's item, times later turns."""
    expected = 0
    for task in _tasks(tool, corpus_dir):
        turns = [i for i, m in enumerate(task.messages) if m.role == "assistant"]
        for index, message in enumerate(task.messages):
            for block in message.blocks:
                item = parse_reasoning_replay_envelope(block.texts[tool.StoredForm.CANONICAL])
                body = json.dumps(item.provider_input(), ensure_ascii=False, separators=(",", ":"))
                expected += len(body.encode("utf-8")) * sum(1 for t in turns if t > index)
    canonical = report.totals[tool.StoredForm.CANONICAL]
    assert canonical.cumulative_bytes == expected > 0
    assert all(t.cumulative_check for t in report.totals.values())
    assert report.curves[tool.StoredForm.CANONICAL][-1] == expected


def test_cumulative_check_fails_when_dedupe_removes_a_replayed_item(
    tool: ModuleType, corpus_dir: Path
) -> None:
    task = next(_tasks(tool, corpus_dir))
    first = next(i for i, m in enumerate(task.messages) if m.blocks)
    later = next(i for i, m in enumerate(task.messages) if m.role == "assistant" and i > first)
    message = task.messages[later]
    copied = replace(message, blocks=(*message.blocks, task.messages[first].blocks[0]))
    doubled = replace(task, messages=(*task.messages[:later], copied, *task.messages[later + 1 :]))
    measured = tool.measure_task(doubled, tool.StoredForm.CANONICAL).totals
    assert measured.deduplicated > 0
    assert measured.cumulative_bytes < measured.ledger_cumulative_bytes
    assert not measured.cumulative_check


def test_no_unknown_field_reaches_the_canonical_request(
    gen: ModuleType, tool: ModuleType, tmp_path: Path
) -> None:
    leaky = _generate(
        gen, tmp_path / "leaky", "--sdk-extra-fraction", "0.5", "--content-null-fraction", "0.5"
    )
    totals = tool.build_report([leaky], passes=1).totals
    raw, canonical = totals[tool.StoredForm.RAW], totals[tool.StoredForm.CANONICAL]
    assert raw.items_outside_allowlist > 0
    assert raw.items_null_or_empty_content == raw.final_items
    assert canonical.items_outside_allowlist == 0
    assert canonical.items_null_or_empty_content == 0
    for task in _tasks(tool, leaky):
        for item in tool.replay_builder(task, tool.StoredForm.CANONICAL)(len(task.messages)).items:
            assert set(item) == {"type", "id", "summary", "encrypted_content"}


def test_redacted_view_holds_no_ciphertext(tool: ModuleType, corpus_dir: Path, report: Any) -> None:
    for totals in report.totals.values():
        assert totals.redaction_views == totals.final_items > 0
        assert totals.redaction_leaks == 0
    task = next(_tasks(tool, corpus_dir))
    item = tool.replay_builder(task, tool.StoredForm.RAW)(len(task.messages)).items[0]
    assert tool._leaks(item, json.dumps(item))  # the check sees ciphertext where it is


def _v1_history() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A history fast-agent 0.10.12+ would save, its envelopes written by the reference."""
    outputs: list[dict[str, Any]] = [
        {
            "id": f"rs_{n}",
            "type": "reasoning",
            "status": "completed",
            "summary": [
                {"type": "summary_text", "text": f"**Step {n}**\n\nlooking at the file “{n}” — ✓"},
                {"type": "summary_text", "text": f"then checking the result of step {n} again"},
            ],
            "content": [],
            "encrypted_content": f"gAAAAB{n}" + "Q" * 3000,
        }
        for n in range(3)
    ]
    envelopes = [
        canonicalize_completed_reasoning_output_item(o, source="response.output_item.done")
        for o in outputs
    ]
    blocks = [{"type": "text", "text": e.envelope_text} for e in envelopes]
    display = [
        {"type": "text", "text": "\n\n".join(p["text"] for p in o["summary"])} for o in outputs
    ]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "fix the build"}]},
        {
            "role": "assistant",
            "content": [],
            "tool_calls": {"call_1": {"method": "tools/call", "params": {"name": "execute"}}},
            "channels": {REPLAY_CHANNEL: blocks[:2], DISPLAY_CHANNEL: display[:2]},
            "stop_reason": "toolUse",
        },
        {
            "role": "user",
            "content": [],
            "tool_results": {"call_1": {"content": [{"type": "text", "text": "ok"}]}},
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "channels": {REPLAY_CHANNEL: blocks[2:], DISPLAY_CHANNEL: display[2:]},
            "stop_reason": "endTurn",
        },
    ]
    items = [e.item.to_provider_input() for e in envelopes if e.item is not None]
    assert len(items) == len(outputs)
    return {"messages": messages}, items


def test_reads_a_real_v1_history_written_by_the_reference(tool: ModuleType, tmp_path: Path) -> None:
    history, items = _v1_history()
    path = tmp_path / "session" / "history_dev.json"
    path.parent.mkdir()
    path.write_text(json.dumps(history, ensure_ascii=False, indent=2), encoding="utf-8")
    report = tool.build_report([tmp_path], passes=1)
    assert report.facts.files == 1
    assert report.facts.stored_forms == {"canonical": 3}
    canonical = report.totals[tool.StoredForm.CANONICAL]
    envelopes = [
        b["text"]
        for m in history["messages"]
        for b in m.get("channels", {}).get(REPLAY_CHANNEL, [])
    ]
    assert canonical.stored_bytes == sum(len(t.encode("utf-8")) for t in envelopes)
    body = [len(json.dumps(i, ensure_ascii=False, separators=(",", ":")).encode()) for i in items]
    assert canonical.final_bytes == sum(body)
    assert canonical.cumulative_bytes == body[0] + body[1]  # replayed once, by the last turn
    legacy = report.totals[tool.StoredForm.LEGACY]
    assert legacy.duplicated_summary_bytes > 0  # re-expressed: the 2-item message repeats
    assert report.checks_pass


def test_histories_stored_as_v1_or_raw_give_the_same_columns(
    gen: ModuleType, tool: ModuleType, tmp_path: Path, report: Any
) -> None:
    canonical_dir = _generate(gen, tmp_path / "v1", "--form", "canonical")
    from_v1 = tool.build_report([canonical_dir], passes=1)
    assert from_v1.facts.stored_forms == {"canonical": report.facts.items}
    assert from_v1.totals == report.totals
    assert from_v1.curves == report.curves


def test_legacy_histories_are_listed_not_compared(
    gen: ModuleType, tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    legacy_dir = _generate(gen, tmp_path / "legacy", "--form", "legacy")
    report = tool.build_report([legacy_dir], passes=1)
    assert report.facts.files == 0
    assert len(report.not_compared) == 4
    assert all("minimal records" in reason for _, reason in report.not_compared)
    assert tool.main([str(legacy_dir), "--passes", "1"]) == 1
    assert "no history file could be compared" in capsys.readouterr().err


def test_http_bytes_are_the_sdk_body_bytes(tool: ModuleType) -> None:
    item = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": 'é “q” \t\n\x01\x7f\u2028 \\ " 数据'}],
        "encrypted_content": "Zm9v",
    }
    body = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert tool.http_bytes(item) == len(body)
    assert tool.websocket_bytes(item) == len(json.dumps(item).encode("utf-8"))


def test_chart_is_well_formed_svg_with_three_series(tool: ModuleType, report: Any) -> None:
    svg = tool.render_svg(report.curves, *tool.chart_titles(report))
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    series = {
        line.get("data-series"): line.get("points", "").split()
        for line in root.iter(f"{SVG}polyline")
        if line.get("class") == "series"
    }
    assert set(series) == {"raw", "canonical", "legacy"}
    assert all(len(points) == report.facts.max_turns for points in series.values())
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert all(title in texts for title in tool.TITLES.values())
    assert root.find(f"{SVG}title") is not None


def test_cli_writes_the_markdown_and_chart_deterministically_apart_from_timing(
    tool: ModuleType, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for run in ("a", "b"):
        markdown, chart = tmp_path / f"{run}.md", tmp_path / "charts" / f"{run}.svg"
        chart.parent.mkdir(exist_ok=True)
        args = [str(corpus_dir), "--passes", "1", "--markdown", str(markdown)]
        assert tool.main([*args, "--chart", str(chart)]) == 0
        text = markdown.read_text(encoding="utf-8")
        assert capsys.readouterr().out == text
        assert f"](charts/{run}.svg)" in text
        assert "8.9–9.2 %" in text and "python tools/payload_corpus.py" in text
        kept = [
            line.replace(f"{run}.", "X.") for line in text.splitlines() if "(timing)" not in line
        ]
        outputs.append((kept, chart.read_text(encoding="utf-8").replace(f"{run}.", "X.")))
    assert outputs[0] == outputs[1]
