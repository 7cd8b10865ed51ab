"""``dedupe`` through the replay path, for a framework that has no dedupe function of its own
(PROTOCOL.md#dedupe): the entries become one items-form history (PROTOCOL.md#items-form) holding
one assistant message per entry (its provider recorded), each after a user message, sent once per
provider of the entries through the framework's own ``replay``; an entry is kept when its item is
in that provider's request, in order, and otherwise counts as dropped. Standard library only, as
``_protocol_loop.py``: the adapters import it by path in their frameworks' environments."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: the framework's replay: a ``replay`` input to the request's ``input`` items
Replay = Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]]


def dedupe_by_replay(entries: Sequence[Mapping[str, Any]], replay: Replay) -> dict[str, Any]:
    """The ``dedupe`` output of ``entries`` as ``replay`` sends them."""
    history: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        history.append(
            {
                "role": "user",
                "items": [{"type": "message", "role": "user", "content": f"turn {index}"}],
            }
        )
        history.append(
            {"role": "assistant", "provider": entry["provider"], "items": [entry["item"]]}
        )
    history.append(
        {"role": "user", "items": [{"type": "message", "role": "user", "content": "next"}]}
    )
    decisions: list[str] = ["drop_duplicate"] * len(entries)
    for provider in dict.fromkeys(entry["provider"] for entry in entries):
        sent = replay(
            {
                "history": {"form": "items", "messages": history},
                "target": {"provider": provider, "transport": "sse"},
            }
        )
        reasoning = [item for item in sent if item.get("type") == "reasoning"]
        for index, entry in enumerate(entries):
            if entry["provider"] != provider:
                continue
            item = entry["item"]
            found = next(
                (
                    n
                    for n, r in enumerate(reasoning)
                    if r.get("id") == item.get("id")
                    and r.get("encrypted_content") == item.get("encrypted_content")
                ),
                None,
            )
            if found is not None:
                decisions[index] = "keep"
                del reasoning[: found + 1]
    return {
        "decisions": decisions,
        "counters": {
            "replay_deduplicated_exact_count": decisions.count("drop_duplicate"),
            "replay_id_ciphertext_conflict_count": 0,
        },
    }
