"""Run every planned conversation of the fast-agent end-to-end test and print the table.

Usage (from the repository root, with the test extras and ``.fast-agent-env`` installed)::

    python tests/e2e/summary.py

Prints the Markdown table of docs/fast-agent-e2e.md: per conversation, the requests fast-agent
sent, how many the reference planned identically, how many differ only as a SPEC §14 row says
(and which), and the requests that are not planned (a failed turn, a compaction's summary).
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from conversations import CONVERSATIONS, bad_streams, compaction_switch, other_model
from e2e_harness import Conversation, plan_requests, run

HEADER = (
    "| conversation | processes | requests | planned | identical | differing by a §14 row "
    "| not planned |\n| --- | --- | --- | --- | --- | --- | --- |"
)


def row(conversation: Conversation, workdir: Path) -> str:
    outcome = run(conversation, workdir)
    planned = plan_requests(outcome)
    unexplained = [p.comparison.label for p in planned if p.comparison.differences]
    if unexplained:
        raise SystemExit(f"{conversation.name}: requests differ beyond §14: {unexplained}")
    # the summary: auto row applies to every request fast-agent sends to the OpenAI route
    rows = Counter(
        row
        for p in planned
        for field, row in p.comparison.explained.items()
        if field != "reasoning.summary"
    )
    identical = sum(1 for p in planned if set(p.comparison.explained) <= {"reasoning.summary"})
    explained = ", ".join(f"{count}: {name}" for name, count in sorted(rows.items())) or "0"
    not_planned = len(outcome.failed) + len(outcome.side)
    return (
        f"| {conversation.name} | {len(conversation.runs)} | {len(outcome.received)} "
        f"| {len(planned)} | {identical} | {explained} | {not_planned} |"
    )


def main() -> None:
    conversations = [
        *CONVERSATIONS.values(),
        bad_streams("sse"),
        bad_streams(None),
        compaction_switch(),
        other_model(),
    ]
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="fast-agent-e2e-") as scratch:
        for conversation in conversations:
            print(row(conversation, Path(scratch) / conversation.name), flush=True)


if __name__ == "__main__":
    main()
