"""``conformance scan PATH... [--format text|json]``: the leak scanner of SPEC H8.

Scans files, and directories recursively, for replay material outside history files and
resumable exports (logs, captures, reports). Findings give the file, the line, the code
``replay_material_exposed`` and a SHA-256 prefix, never the value.

A file that is not text (a NUL byte in its first 8 KiB without a byte-order mark, bytes its
encoding does not allow) is a finding, ``scan_file_not_text``, and is read all the same;
``--skip-binary`` skips such files instead and says which (SPEC H8).

Exit status: 0 no finding; 1 at least one finding; 2 a usage error, or a path that does not
exist or cannot be read: a directory that cannot be listed, a named FIFO or device (the other
paths are still scanned and reported; the scan fails closed, SPEC H8).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from reasoning_replay.history.report_formats import SCAN_FORMATS, write_scan_json, write_scan_text
from reasoning_replay.history.scan import scan_paths

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``scan`` on the ``conformance`` command line."""
    scan = sub.add_parser(
        "scan",
        allow_abbrev=False,  # a file named like an abbreviated option must not become one
        help="find replay material (encrypted_content, envelopes) in logs and captures (SPEC H8)",
        description=(
            "Scan text files (UTF-8, or UTF-16/32 with a byte-order mark), and directories "
            "recursively, for replay material: encrypted_content values of 16 characters or "
            "more, envelope texts and ciphertext-shaped runs, in JSON and in other text forms, "
            "encoded or not (SPEC H8). A file that is not text is a finding. Do not point it at "
            "history files or resumable exports: they hold replay material by design. Exit 0: "
            "nothing found; 1: findings; 2: usage or I/O error."
        ),
    )
    scan.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="file, or directory (walked)"
    )
    scan.add_argument(
        "--format",
        choices=SCAN_FORMATS,
        default="text",
        help="text (default: file:line: code sha256:prefix) or json (one document: "
        "conformance/schemas/scan-report.schema.json)",
    )
    scan.add_argument(
        "--skip-binary",
        action="store_true",
        help="skip files that are not text (printed as skipped) instead of reporting them",
    )


def cmd_scan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    results = scan_paths(args.paths, skip_binary=args.skip_binary)
    if args.format == "json":
        found, failed = write_scan_json(results, out)
    else:
        found, failed = write_scan_text(results, out, err)
    if failed:
        return EXIT_USAGE
    return EXIT_FINDINGS if found else EXIT_CLEAN
