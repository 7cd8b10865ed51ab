"""Smoke test of ``tools/corpus.py`` and ``tools/bench_reader.py`` at a tiny size.

Nothing here is timed or asserts a speed: it checks that the generator is deterministic and
writes what its docstring says, and that one benchmark pass over ~300 records yields the
report's shape with the reader agreeing with every label and with ``jsonschema``.
It needs the real reader (``reasoning_replay``) and the schemas in ``schema/``.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
SEED = 20251129
COUNT = 300
ID_PATTERN = re.compile(r"rs_[0-9a-f]{48}")


def _import_tool(name: str) -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def corpus() -> ModuleType:
    return _import_tool("corpus")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _import_tool("bench_reader")


@pytest.fixture(scope="module")
def generated(corpus: ModuleType) -> tuple[list[str], list[dict[str, Any]]]:
    lines, labels = corpus.generate(COUNT, SEED)
    return lines, labels


def test_corpus_is_deterministic(
    corpus: ModuleType, generated: tuple[list[str], list[dict[str, Any]]]
) -> None:
    assert corpus.generate(COUNT, SEED) == generated
    assert corpus.generate(COUNT, SEED + 1)[0] != generated[0]


def test_corpus_shape(
    corpus: ModuleType, generated: tuple[list[str], list[dict[str, Any]]]
) -> None:
    lines, labels = generated
    assert len(lines) == len(labels) == COUNT
    kinds = Counter(label["kind"] for label in labels)
    assert kinds["valid"] == COUNT - round(COUNT * 0.1)
    invalid = {kind: n for kind, n in kinds.items() if kind != "valid"}
    assert set(invalid) == set(corpus.INVALID_KINDS)
    assert max(invalid.values()) - min(invalid.values()) <= 1
    for line, label in zip(lines, labels, strict=True):
        assert "\n" not in line
        assert label["valid"] == (label["kind"] == "valid")
        assert label["schema_visible"] == (label["kind"] != "duplicate_member")
        value = json.loads(line)
        if label["kind"] == "duplicate_member":
            # Last-wins parse is a valid envelope, but the text is not its canonical form.
            assert json.dumps(value, ensure_ascii=False, separators=(",", ":")) != line
            continue
        if not label["valid"]:
            continue
        # Canonical form: re-serialising the parsed value gives the line back, byte for byte.
        assert json.dumps(value, ensure_ascii=False, separators=(",", ":")) == line
        assert list(value) == ["schema", "version", "item"]
        item = value["item"]
        assert list(item)[:4] == ["type", "id", "summary", "encrypted_content"]
        assert ID_PATTERN.fullmatch(item["id"])
        assert 0 <= len(item["summary"]) <= 4
        assert all(50 <= len(part["text"]) <= 800 for part in item["summary"])
        assert 1368 <= len(item["encrypted_content"]) <= 16384


def test_write_and_load_corpus(corpus: ModuleType, bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "tiny.jsonl"
    assert corpus.main(["--count", "40", "--seed", str(SEED), "--out", str(out)]) == 0
    lines, labels = bench.load_corpus(out)
    expected_lines, expected_labels = corpus.generate(40, SEED)
    assert lines == [line.encode("utf-8") for line in expected_lines]
    assert labels == expected_labels
    assert (tmp_path / "tiny.labels.jsonl").is_file()


def test_benchmark_tiny(
    bench: ModuleType, generated: tuple[list[str], list[dict[str, Any]]]
) -> None:
    lines, labels = generated
    results = bench.run_benchmark(
        [line.encode("utf-8") for line in lines], labels, passes=1, jsonschema_sample=COUNT
    )
    assert set(results["ratios"]) == {
        "reader_vs_json_loads",
        "reader_vs_jsonschema",
        "verdict_agreement",
    }
    agreement = results["agreement"]
    assert agreement["reader_vs_label"]["compared"] == COUNT
    assert agreement["reader_vs_label"]["mismatches"] == 0, agreement["reader_vs_label"]
    assert agreement["reader_vs_jsonschema"]["mismatches"] == 0, agreement["reader_vs_jsonschema"]
    assert agreement["reader_bytes_vs_str"]["mismatches"] == 0, agreement["reader_bytes_vs_str"]
    assert agreement["jsonschema_vs_label"]["mismatches"] == 0, agreement["jsonschema_vs_label"]
    assert results["ratios"]["verdict_agreement"] == 1.0
    assert results["ok"] is True
    for name in ("json_loads", "reader_str", "reader_bytes", "jsonschema"):
        row = results["methods"][name]
        assert len(row["pass_seconds"]) == 1
        assert row["records_per_s"] > 0
        assert row["us_per_record"] > 0
    assert sum(results["reader_codes"]["invalid_records"].values()) == round(COUNT * 0.1)
    json.dumps(results)  # the --json output must be serialisable


def test_benchmark_cli(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    argv = ["--count", "120", "--passes", "1", "--jsonschema-sample", "60", "--json", str(out)]
    assert bench.main(argv) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert set(figures["ratios"]) == {
        "reader_vs_json_loads",
        "reader_vs_jsonschema",
        "verdict_agreement",
    }
    assert figures["machine"]["python"]
    assert figures["corpus"]["records"] == 120
