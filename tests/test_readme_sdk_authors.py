"""README.md "For SDK authors": the writer and the reader shown there run as printed, and what the
writer stores, the reader replays."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay import parse_reasoning_replay_envelope
from support import GOLDEN_SDK_ITEM

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 10  # "the minimal conforming writer and reader in ten lines each", code lines


def section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^## For SDK authors\n(.*?)^## ", text, re.DOTALL | re.MULTILINE)
    assert found is not None, 'README.md has no "## For SDK authors" section'
    return found.group(1)


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", section(), re.DOTALL)


def defined(name: str) -> Callable[..., Any]:
    for block in python_blocks():
        if f"def {name}(" in block:
            namespace: dict[str, Any] = {}
            exec(compile(block, f"README.md ({name})", "exec"), namespace)
            function: Callable[..., Any] = namespace[name]
            return function
    raise AssertionError(f"README.md's For SDK authors section defines no {name}()")


@pytest.mark.parametrize("block", python_blocks(), ids=["writer", "reader"])
def test_each_example_is_at_most_ten_lines_of_code(block: str) -> None:
    code = [
        line
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", '"""', "import ", "from "))
    ]

    assert len(code) <= MAX_LINES, code


def test_the_writer_stores_the_canonical_envelope_and_the_reader_replays_it() -> None:
    store_reasoning, next_input = defined("store_reasoning"), defined("next_input")
    message: dict[str, Any] = {"role": "assistant", "items": []}

    refused = store_reasoning(dict(GOLDEN_SDK_ITEM), message)
    replayed = next_input({"messages": [{"role": "user", "items": []}, message]})

    (block,) = message["channels"]["openai-reasoning-encrypted"]
    verdict = parse_reasoning_replay_envelope(block["text"])
    assert refused is None
    assert verdict.resumable
    assert replayed == [verdict.provider_input()]


def test_the_writer_returns_the_code_of_an_item_it_refuses() -> None:
    store_reasoning = defined("store_reasoning")
    message: dict[str, Any] = {"role": "assistant"}

    code = store_reasoning({"type": "message", "id": "msg_1"}, message)

    assert code == "capture_not_reasoning"
    assert message == {"role": "assistant"}


def test_the_reader_returns_every_messages_items_each_after_its_reasoning() -> None:
    """The request input of a 4-message history: every message's own items, not only the
    reasoning (issue 21: 2 items came back from 4 messages)."""
    store_reasoning, next_input = defined("store_reasoning"), defined("next_input")

    def said(role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    first = {"role": "assistant", "items": [said("assistant", "4")]}
    second = {"role": "assistant", "items": [said("assistant", "6")]}
    assert store_reasoning(dict(GOLDEN_SDK_ITEM), first) is None
    assert store_reasoning(dict(GOLDEN_SDK_ITEM, id="rs_second"), second) is None
    history = {
        "messages": [
            {"role": "user", "items": [said("user", "2 + 2?")]},
            first,
            {"role": "user", "items": [said("user", "3 + 3?")]},
            second,
        ]
    }

    replayed = next_input(history)

    reasoning = [item for item in replayed if item["type"] == "reasoning"]
    assert [item.get("role", "reasoning") for item in replayed] == [
        "user",
        "reasoning",
        "assistant",
        "user",
        "reasoning",
        "assistant",
    ]
    assert [r["id"] for r in reasoning] == [GOLDEN_SDK_ITEM["id"], "rs_second"]


def test_the_reader_logs_a_kept_id_ciphertext_conflict_as_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store_reasoning, next_input = defined("store_reasoning"), defined("next_input")
    first: dict[str, Any] = {"role": "assistant", "items": []}
    again: dict[str, Any] = {"role": "assistant", "items": []}
    store_reasoning(dict(GOLDEN_SDK_ITEM), first)
    store_reasoning(dict(GOLDEN_SDK_ITEM, encrypted_content="gAAAA-another"), again)

    with caplog.at_level("WARNING"):
        replayed = next_input({"messages": [first, again]})

    assert len(replayed) == 2  # SPEC D3: same id, new ciphertext: kept, in order
    assert "kept: dedupe_id_ciphertext_conflict (message 1)" in caplog.text
    assert "not replayed" not in caplog.text


def test_the_reader_reports_a_block_it_cannot_replay(caplog: pytest.LogCaptureFixture) -> None:
    next_input = defined("next_input")
    broken = {
        "role": "assistant",
        "channels": {"openai-reasoning-encrypted": [{"type": "text", "text": "{"}]},
    }

    with caplog.at_level("WARNING"):
        replayed = next_input({"messages": [broken]})

    assert replayed == []
    assert "not replayed: json_malformed (message 0)" in caplog.text
