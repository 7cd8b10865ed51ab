"""``conformance export``: a history file in, its export (SPEC H6) written privately (SPEC H5).

Exit status: 0 written; 1 the input is not a history (``history_unreadable``,
``history_malformed``); 2 usage or I/O errors (a missing input, an unwritable output, an input
that is not a regular file, an output that is the input or is not absent or a regular file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.display_paths import display_path
from reasoning_replay.history.export import (
    RESUMABLE_WARNING,
    ExportMode,
    export_file_text,
    export_history,
    read_history_for_export,
)
from reasoning_replay.history.history_files import HistoryFileProblem
from reasoning_replay.history.persistence import write_private_atomic
from reasoning_replay.history.safe_files import output_problem, read_regular

EXIT_OK = 0
EXIT_NOT_HISTORY = 1
EXIT_USAGE = 2
PROG = "conformance export"


def add_export_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``export`` subcommand on ``sub`` (an ``add_subparsers`` result)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "export",
        allow_abbrev=False,  # a file named like an abbreviated option must not become one
        help="export a history file, resumable or redacted (SPEC H6), written with mode 0600",
        description=(
            "Export a history file (SPEC H6). 'redacted' replaces every replay block by its "
            "redacted record and redacts encrypted_content everywhere; 'resumable' keeps the "
            "history as stored (bearer-capable: keep it private). OUT is written atomically "
            "with mode 0600 (SPEC H5)."
        ),
    )
    parser.add_argument(
        "--mode", required=True, choices=[mode.value for mode in ExportMode], help="export mode"
    )
    parser.add_argument("input", type=Path, metavar="IN", help="history file to export")
    parser.add_argument("output", type=Path, metavar="OUT", help="file to write")
    parser.add_argument(
        "--drop-display-reasoning",
        action="store_true",
        help="redacted mode: also drop the display channel 'reasoning'",
    )
    return parser


def _error(err: TextIO, message: str) -> None:
    print(f"{PROG}: error: {message}", file=err)


def cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Read IN, export it, write OUT privately; print the SPEC H6 warning for resumable."""
    mode = ExportMode(args.mode)
    if args.drop_display_reasoning and mode is ExportMode.RESUMABLE:
        _error(err, "--drop-display-reasoning applies to --mode redacted only")
        return EXIT_USAGE
    source: Path = args.input
    target: Path = args.output
    try:
        # Never blocks on a FIFO, refuses what is not a regular file (issue: a named FIFO hung).
        data, status = read_regular(source)
    except OSError as error:
        _error(err, f"cannot read {display_path(source)}: {error.strerror or error}")
        return EXIT_USAGE
    # Checked before anything is written: OUT is never IN (through links too), never a link, a
    # FIFO or a device (SPEC H5); write_private_atomic checks again just before its rename.
    problem = output_problem(target, (status,))
    if problem is not None:
        _error(err, f"refusing to write {display_path(target)}: {problem}")
        return EXIT_USAGE
    value = read_history_for_export(data)
    if isinstance(value, HistoryFileProblem):
        _error(err, f"{display_path(source)}: {value.code.value}: {value.detail}")
        return EXIT_NOT_HISTORY
    exported = export_history(value, mode, drop_display_reasoning=args.drop_display_reasoning)
    if isinstance(exported, Code):
        _error(err, f"{display_path(source)}: {exported.value}: not a history file (SPEC H1)")
        return EXIT_NOT_HISTORY
    try:
        write_private_atomic(target, (export_file_text(exported) + "\n").encode("utf-8"))
    except OSError as error:
        _error(err, f"cannot write {display_path(target)}: {error.strerror or error}")
        return EXIT_USAGE
    if mode is ExportMode.RESUMABLE:
        print(f"warning: {RESUMABLE_WARNING}", file=err)  # SPEC H6
    count = len(exported["messages"])
    print(f"wrote {display_path(target)}: {mode.value} export of {count} messages", file=out)
    return EXIT_OK
