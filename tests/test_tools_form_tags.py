"""``tools/form_tags.py``: each vector's form tag is computed and written in place, every other
byte of the file kept, and a suite whose tags are right needs no change."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TOOLS_DIR = REPO / "tools"

FILE = """# a comment the tool keeps
description: Two cases
cases:
- id: x/flow
  description: flow tags
  spec: P2
  operation: replay
  level: MUST
  tags: ['null', form:storage]
  input: {history: {messages: []}, target: {provider: openai}}
  expect: {output: {input: [], diagnostics: [], counters: {}}}
- id: x/block
  description: block tags
  spec: E1
  operation: read
  level: MUST
  tags:
  - version
  - form:neutral
  input: {text: '{}'}
  expect: {reject: {code: envelope_member_missing}}
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("form_tags")


def test_wrong_tags_are_rewritten_and_everything_else_is_kept(tool: ModuleType) -> None:
    changes = tool.retags(FILE)
    rewritten = tool.rewritten(FILE, changes)

    assert [(c.case_id, c.new) for c in changes] == [
        ("x/flow", ("null", "form:neutral")),
        ("x/block", ("version", "form:storage")),
    ]
    assert "  tags: ['null', form:neutral]\n" in rewritten
    assert "  tags: [version, form:storage]\n  input: {text: '{}'}" in rewritten
    assert rewritten.startswith("# a comment the tool keeps\n")
    assert yaml.safe_load(rewritten)["cases"][0]["tags"] == ["null", "form:neutral"]
    assert tool.retags(rewritten) == []


def test_the_tool_lists_then_writes_then_finds_nothing_to_change(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "replay" / "x.yaml"
    path.parent.mkdir()
    path.write_text(FILE, encoding="utf-8")
    argv = ["--vectors", str(tmp_path)]

    assert tool.main(argv) == 1
    assert path.read_text(encoding="utf-8") == FILE
    assert tool.main([*argv, "--write"]) == 0
    assert tool.main(argv) == 0
    assert "would rewrite the tags of 0 case(s)" in capsys.readouterr().err


def test_a_file_that_is_not_a_vector_file_is_refused(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.yaml").write_text("just: a mapping\n")

    assert tool.main(["--vectors", str(tmp_path)]) == 2
    assert "not a vector file" in capsys.readouterr().err
