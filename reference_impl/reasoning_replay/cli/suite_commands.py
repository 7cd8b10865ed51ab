"""``conformance list``, ``check``, ``bundle`` and ``request``: the suite's cases, its lint, its
bundle, one case's request line."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any, TextIO

from reasoning_replay.atomic_files import replace_file
from reasoning_replay.resources import data_path
from reasoning_replay.suite import protocol
from reasoning_replay.suite.applicability import (
    applicability,
    case_form,
    prepared_case,
)
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.selection import select
from reasoning_replay.suite.vectors import (
    BUNDLE_NAME,
    Case,
    Suite,
    bundle_text,
    load_vector_dirs,
)

from .options import (
    EXIT_OK,
    EXIT_UNEXPECTED,
    UsageError,
    add_history_format_option,
    add_selection_options,
    add_vector_options,
    history_format_from_args,
    selection_from_args,
    suite_from_args,
)


def add_list_parser(sub: Any) -> None:
    ls = sub.add_parser(
        "list",
        help="list case ids with operation, level, rule, form and tags",
        description="Print the selected cases, one per line: id, operation, level, SPEC anchor, "
        "form and tags, tab-separated (the count goes to stderr). Takes the selection options of "
        "run.",
    )
    add_vector_options(ls)
    add_selection_options(ls)


def add_check_parser(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="lint the suite (schema, ids, SPEC.md, bundle)",
        description="Lint a conformance suite, for suite authors: every vector file against its "
        "schema, unique ids and aliases, every SPEC anchor a case names, the bundle in step with "
        "the vector files. Exit 0 clean, 1 with problems.",
    )
    check.add_argument(
        "--suite", type=Path, metavar="DIR", help="conformance directory (default: the bundled one)"
    )
    check.add_argument("--spec", type=Path, metavar="FILE", help="SPEC.md to check against")


def add_bundle_parser(sub: Any) -> None:
    bundle = sub.add_parser(
        "bundle",
        help=f"(re)write conformance/{BUNDLE_NAME}",
        description=f"Write conformance/{BUNDLE_NAME}, every vector in one JSON file for "
        "implementations without a YAML parser, from the vector files.",
    )
    bundle.add_argument(
        "--suite", type=Path, metavar="DIR", help="conformance directory (default: the bundled one)"
    )


def add_request_parser(sub: Any) -> None:
    request = sub.add_parser(
        "request",
        help="print the run request line of one case",
        description="Print the exact run request line the runner sends for one case, to pipe "
        "into an adapter by hand: conformance request ID | ./my-adapter",
    )
    add_vector_options(request)
    request.add_argument("id", help="case id or alias")
    request.add_argument("--seq", type=int, default=1, help="the request's seq member (default 1)")
    add_history_format_option(
        request,
        "the history form to send a replay or plan case's history in: items converts a neutral "
        "case's history (conformance/PROTOCOL.md#items-form)",
    )


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    suite = suite_from_args(args)
    cases = select(suite.cases, selection_from_args(args))
    for c in cases:
        tags = ",".join(c.tags)
        out.write(f"{c.id}\t{c.operation}\t{c.level}\t{c.spec}\t{case_form(c)}\t{tags}\n")
    print(f"{len(cases)} of {len(suite.cases)} cases", file=err)
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    conformance_dir = args.suite or data_path("conformance")
    spec = args.spec or (conformance_dir.parent / "SPEC.md" if args.suite else data_path("SPEC.md"))
    problems, suite = check_suite(conformance_dir, spec)
    for p in problems:
        out.write(f"{p}\n")
    if problems:
        out.write(f"{len(problems)} problem(s) in {conformance_dir}\n")
        return EXIT_UNEXPECTED
    out.write(f"ok: {len(suite.cases)} cases, suite {suite.version}, sha256 {suite.sha256[:12]}\n")
    return EXIT_OK


def cmd_bundle(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    conformance_dir = args.suite or data_path("conformance")
    suite = load_vector_dirs([conformance_dir / "vectors"])
    if suite.problems:
        listing = "\n".join(f"  {p}" for p in suite.problems[:30])
        raise UsageError(f"not writing a bundle of an invalid suite:\n{listing}")
    path = conformance_dir / BUNDLE_NAME
    try:
        replace_file(path, bundle_text(suite).encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from exc
    out.write(f"wrote {path}: {len(suite.cases)} cases, sha256 {suite.sha256}\n")
    return EXIT_OK


def _find(suite: Suite, name: str) -> Case:
    case = suite.find(name)
    if case is None:
        close = difflib.get_close_matches(name, list(suite.index), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"no case {name!r}{hint}")
    return case


def cmd_request(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    suite = suite_from_args(args)
    case = _find(suite, args.id)
    wanted = history_format_from_args(args)
    if wanted is not None:
        applies = applicability(case, (wanted,))
        if not applies.applies:
            raise UsageError(f"{case.id} is not sent in the {wanted} form: {applies.reason}")
        case = prepared_case(case, applies.history_format, frozenset())
    out.write(protocol.run_request_line(args.seq, case).decode("utf-8"))
    out.flush()
    return EXIT_OK
