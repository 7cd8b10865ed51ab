"""``conformance scan PATH... [--format text|json]``: the leak scanner of SPEC H8.

Scans files, and directories recursively, for replay material outside history files and
resumable exports (logs, captures, reports). Findings give the file, the line, the code
``replay_material_exposed`` and a SHA-256 prefix, never the value.

Exit status: 0 no finding; 1 at least one finding; 2 a usage error, or a path that does not
exist or cannot be read: a directory that cannot be listed, a named FIFO or device (the other
paths are still scanned and reported; the scan fails closed, SPEC H8).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from reasoning_replay.history.safe_files import display_path
from reasoning_replay.history.scan import FileScan, scan_paths

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
FORMATS = ("text", "json")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``scan`` on the ``conformance`` command line."""
    scan = sub.add_parser(
        "scan",
        allow_abbrev=False,  # a file named like an abbreviated option must not become one
        help="find replay material (encrypted_content, envelopes) in logs and captures (SPEC H8)",
        description=(
            "Scan text files, and directories recursively, line by line for replay material: "
            "encrypted_content values of 16 characters or more and envelope texts, also inside "
            "JSON strings. Do not point it at history files or resumable exports: they hold "
            "replay material by design. Exit 0: nothing found; 1: findings; 2: usage or I/O error."
        ),
    )
    scan.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    scan.add_argument("--format", choices=FORMATS, default="text")


def _text(results: Iterable[FileScan], out: TextIO, err: TextIO) -> tuple[bool, bool]:
    """Write findings as ``file:line: code sha256:prefix`` as each file is done (streamed)."""
    count = files = scanned = failed = 0
    for result in results:
        name = display_path(result.path)
        for finding in result.findings:
            out.write(f"{name}:{finding.line}: {finding.code} sha256:{finding.sha256_prefix}\n")
        for note in result.notes:
            err.write(f"{name}: note: {note}\n")
        if result.skipped is not None:
            err.write(f"{name}: skipped: {result.skipped}\n")
        if result.error is not None:
            err.write(f"{name}: error: {result.error}\n")
            failed += 1
        count += len(result.findings)
        files += 1 if result.findings else 0
        scanned += 1 if result.skipped is None and result.error is None else 0
    err.write(f"{count} finding(s) in {files} of {scanned} file(s) scanned\n")
    if failed:  # fail closed: never a bare "0 findings" about what was not read (SPEC H8)
        err.write(f"incomplete: {failed} path(s) could not be scanned\n")
    return count > 0, failed > 0


def _json(results: Iterable[FileScan], out: TextIO) -> tuple[bool, bool]:
    done = list(results)
    document = {
        "findings": [
            f.to_json() | {"file": display_path(r.path)} for r in done for f in r.findings
        ],
        "files_scanned": sum(1 for r in done if r.skipped is None and r.error is None),
        "notes": [{"file": display_path(r.path), "note": n} for r in done for n in r.notes],
        "skipped": [{"file": display_path(r.path), "reason": r.skipped} for r in done if r.skipped],
        "errors": [{"file": display_path(r.path), "error": r.error} for r in done if r.error],
    }
    out.write(json.dumps(document, indent=2) + "\n")
    return bool(document["findings"]), bool(document["errors"])


def cmd_scan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    results = scan_paths(args.paths)
    found, failed = _json(results, out) if args.format == "json" else _text(results, out, err)
    if failed:
        return EXIT_USAGE
    return EXIT_FINDINGS if found else EXIT_CLEAN
