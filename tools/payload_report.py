"""Compare the three stored forms of reasoning replay records over a corpus of fast-agent histories.

Usage::

    python tools/payload_report.py PATH [PATH ...] [--markdown OUT.md] [--chart OUT.svg]
                                   [--passes 3]

``PATH`` is a history file or a directory of them: every ``*.json`` below it except
``session.json``, the rotated copies ``*_previous.json``, compaction archives ``compacted_*.json``
(neither is replayed as the conversation's history) and a ``payload_corpus.json`` manifest
written by ``tools/payload_corpus.py``, whose parameters the report prints. Each file is read
with the reference's history-file reader (SPEC H1); a file it refuses is listed, not measured.

The three columns, each a stored form and the replay that fast-agent built from it:

raw SDK snapshot (fast-agent 0.10.6-0.10.11)
    stored: the SDK's ``model_dump`` of the output item without ``status``, written with Python's
    ``json.dumps`` defaults (``", "``/``": "``, non-ASCII as ``\\uXXXX``); replay: the stored
    object as it is, with ``type`` defaulted and a missing or ``null`` summary filled from the
    message's display channel (the builder below).
canonical envelope (version 1)
    stored: SPEC C3 bytes from the reference's capture and writer; replay: the reference's
    ``build_replay_input`` (strict reader, SPEC P1/P2, dedupe D1-D3).
legacy minimal record (fast-agent up to 0.10.4)
    stored: ``{"type", "encrypted_content", "id"}``, ``json.dumps`` defaults; replay: each item
    gets one ``summary_text`` part built from the whole message's display channel (its blocks
    joined by a newline, stripped), so every item of a multi-item message carries the same
    message-wide summary.

The raw and legacy builders model the deployed reader (research/fast-agent.md §0, its timeline),
which was the same in both releases: parse each block, skip what is not an object with a
ciphertext, default ``type``, fill a missing summary from the display channel. They are written
here, not taken from fast-agent.

Converting what is found. Each replay block is classified by the reference's reader (SPEC E6):
a resumable envelope, a raw SDK snapshot or a minimal record; any other block (another code) is
counted and left out of every column. A block is then expressed in the other forms when its data
allows it:

- a version 1 envelope gives the raw snapshot 0.10.11 would have written for it (the item's
  fields in the SDK's field order, ``content: []`` when the envelope has none, as in every item
  of the audited corpora; unknown SDK fields, never stored in an envelope, cannot be restored)
  and the minimal record;
- a raw snapshot gives the envelope the reference's capture makes of it (none when capture
  refuses it, e.g. a null summary) and the minimal record;
- a minimal record gives neither: it has no per-item summary, and rebuilding one from the
  display channel is exactly the lossy fallback (SPEC E5 does not migrate it either).

The tables cover the files in which every block can be expressed in all three forms; other files
are listed with the reason. A message without a display channel gets one derived from its items'
summaries by the rule fast-agent wrote it with (counted in the report).

What is measured, per column, over the compared files:

- stored bytes: UTF-8 bytes of the replay records, and of the same records as JSON string
  literals inside the history file (raw UTF-8, as the files are saved);
- replay bytes: each reasoning item of a request ``input`` as the SDK's HTTP body writes it
  (compact JSON, raw UTF-8; research/openai-sdk.md). A *turn* is an assistant message: the
  request that produced it replays every reasoning item of the assistant messages before it.
  The *final request* continues the saved history: it replays every stored item. *Cumulative*
  is the sum over all turns of every task. The WebSocket row writes the final request as the
  SDK's WebSocket frames do (``json.dumps`` defaults);
- the cumulative check: the cumulative figure, got by building every turn's request, must equal
  the sum over stored items of (its replay bytes × the turns after its message), and the final
  request must equal the sum of its items' bytes; the reference's dedupe must drop nothing.
  A failed check makes the exit status 1;
- multi-item rows: the items of messages with two or more reasoning items;
- summary duplication (final request): bytes of summaries that repeat, whole, an earlier item's
  summary in the same message, and items whose replayed summary is not their own parts (when
  the stored form knows them);
- unknown-field leakage (final request): items with a member outside ``type, id, summary,
  encrypted_content, content`` (``status`` and unknown SDK fields, or extra part members), and
  items with ``content`` ``null`` or ``[]``;
- redaction: the reference's diagnostic view (SPEC R1) of every final-request item, and its
  redaction (R2) of the whole request, must show no ciphertext and no summary text;
- serialize and parse time (timing; the median of ``--passes``): writing every record from
  its item (the canonical writer checks its output with the reader, SPEC C4) and reading every
  record back to a replay item.

Everything is deterministic for a given corpus except the rows marked *(timing)*.
The Markdown goes to standard output and to ``--markdown``; ``--chart`` writes an SVG of
cumulative replay bytes per turn, summed over the tasks (a task that has ended stays at its
total).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from reasoning_replay.atomic_files import replace_file

TOOLS_DIR: Final = Path(__file__).resolve().parent
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

from payload.forms import TITLES, http_bytes, replay_builder, websocket_bytes  # noqa: E402
from payload.markdown import render_markdown  # noqa: E402
from payload.measures import _leaks, measure_task  # noqa: E402
from payload.reading import UnreadableFile, history_paths, read_task  # noqa: E402
from payload.report import TOOL, build_report  # noqa: E402
from payload.svg import chart_titles, render_svg  # noqa: E402
from payload_corpus import StoredForm  # noqa: E402

# The parts' names that callers (and tests/test_payload_report.py) reach through this module.
__all__ = [
    "TITLES",
    "StoredForm",
    "UnreadableFile",
    "_leaks",
    "build_report",
    "chart_titles",
    "history_paths",
    "http_bytes",
    "main",
    "measure_task",
    "read_task",
    "render_svg",
    "replay_builder",
    "websocket_bytes",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0],
        epilog="See the module docstring (or tools/README.md) for how each column is built.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="history files or directories")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown report here")
    parser.add_argument("--chart", type=Path, help="write the cumulative-replay chart (SVG) here")
    parser.add_argument(
        "--passes", type=int, default=3, help="timing passes; the median is shown (default 3)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.passes < 1:
        parser.error("--passes must be >= 1")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such path: {', '.join(missing)}")
    report = build_report(args.paths, args.passes)
    chart_link = None
    if args.chart is not None:
        chart = render_svg(report.curves, *chart_titles(report))
        replace_file(args.chart, chart.encode("utf-8"))
        base = args.markdown.parent if args.markdown is not None else Path.cwd()
        chart_link = os.path.relpath(args.chart, base)
    markdown = render_markdown(report, shlex.join(["python", TOOL, *arguments]), chart_link)
    sys.stdout.write(markdown)
    if args.markdown is not None:
        replace_file(args.markdown, markdown.encode("utf-8"))
    if not report.facts.files:
        print("no history file could be compared in all three forms", file=sys.stderr)
        return 1
    if not report.checks_pass:
        print("cumulative check failed: see the results table", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
