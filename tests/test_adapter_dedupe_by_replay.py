"""``dedupe`` through a framework's replay path (``conformance/implementations/
_dedupe_by_replay.py``), driven with a stand-in replay: what it sends and how the decisions are
read back from the request."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"
if str(IMPLEMENTATIONS) not in sys.path:
    sys.path.append(str(IMPLEMENTATIONS))
shared: ModuleType = importlib.import_module("_dedupe_by_replay")


def reasoning(id_: str, cipher: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": id_, "encrypted_content": cipher, "summary": []}


class Replay:
    """Sends every assistant item once per identity (an exact-duplicate dedupe), recording what
    it was given."""

    def __init__(self) -> None:
        self.inputs: list[Mapping[str, Any]] = []

    def __call__(self, data: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        self.inputs.append(data)
        sent: list[Mapping[str, Any]] = []
        for message in data["history"]["messages"]:
            for item in message["items"]:
                if item not in sent:
                    sent.append(item)
        return sent


def test_every_entry_is_an_assistant_turn_after_a_user_message_sent_once_per_provider() -> None:
    replay = Replay()
    entries = [
        {"provider": "openai", "item": reasoning("rs_1", "a")},
        {"provider": "xai", "item": reasoning("rs_2", "b")},
        {"provider": "openai", "item": reasoning("rs_3", "c")},
    ]
    shared.dedupe_by_replay(entries, replay)
    assert [data["target"] for data in replay.inputs] == [
        {"provider": "openai", "transport": "sse"},
        {"provider": "xai", "transport": "sse"},
    ]
    messages = replay.inputs[0]["history"]["messages"]
    assert replay.inputs[0]["history"]["form"] == "items"
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3 + ["user"]
    assert [m.get("provider") for m in messages[1::2]] == ["openai", "xai", "openai"]


def test_an_entry_is_kept_when_its_item_is_sent_in_order_and_dropped_otherwise() -> None:
    entries = [
        {"provider": "openai", "item": reasoning("rs_1", "a")},
        {"provider": "openai", "item": reasoning("rs_1", "a")},
        {"provider": "openai", "item": reasoning("rs_1", "b")},
    ]
    actual = shared.dedupe_by_replay(entries, Replay())
    assert actual == {
        "decisions": ["keep", "drop_duplicate", "keep"],
        "counters": {
            "replay_deduplicated_exact_count": 1,
            "replay_id_ciphertext_conflict_count": 0,
        },
    }
