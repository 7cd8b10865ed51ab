"""``conformance run``: the suite against an implementation, its reports and expectations
(SPEC §13; exit statuses in :mod:`reasoning_replay.cli.main`).

Standard output carries the terminal report, or, when a ``--report`` goes to ``-``, that report
alone: the terminal report and every message then go to standard error, so that
``conformance run --report json:- | jq`` reads one JSON document. An implementation that does
not start ends the run with one line on standard error and exit status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from reasoning_replay.atomic_files import replace_file
from reasoning_replay.suite.expectations import (
    NO_EXPECTATIONS,
    Expectations,
    Judged,
    dump_expectations,
    load_expectations,
    updated,
)
from reasoning_replay.suite.profiles import PROFILES, Profile
from reasoning_replay.suite.progress import ProgressBar
from reasoning_replay.suite.reports import (
    FORMATS,
    STDOUT_PATH,
    not_started_line,
    terminal_text,
    write_report,
)
from reasoning_replay.suite.runner import run_cases
from reasoning_replay.suite.selection import select

from .options import (
    EXIT_OK,
    EXIT_UNEXPECTED,
    EXIT_USAGE,
    UsageError,
    add_history_format_option,
    add_impl_options,
    add_selection_options,
    add_vector_options,
    history_format_from_args,
    impl_from_args,
    repro_from_args,
    selection_from_args,
    suite_from_args,
)


def add_run_parser(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run the suite (default: the in-process reference)",
        description="Run the conformance vectors against an implementation: the in-process "
        "reference, or an adapter program (--impl, conformance/PROTOCOL.md). Exit 0 when every "
        "MUST case is as expected in every profile run, 1 otherwise, 2 for a usage error, an "
        "invalid suite or an implementation that does not start.",
    )
    add_vector_options(run)
    add_impl_options(run)
    add_selection_options(run)
    run.add_argument(
        "--expectations",
        type=Path,
        metavar="FILE",
        help="YAML file of known failures (xfail), skips and flaky cases",
    )
    run.add_argument(
        "--update-expectations",
        type=Path,
        metavar="FILE",
        help="write FILE from this run: an xfail entry per unexpected failure",
    )
    run.add_argument(
        "--reason", metavar="TEXT", help="reason recorded on entries added by --update-expectations"
    )
    run.add_argument(
        "--report",
        action="append",
        default=[],
        metavar="FORMAT:PATH",
        help=f"also write a report ({', '.join(FORMATS)}); PATH - writes it to stdout, "
        "alone: everything else then goes to stderr (repeatable)",
    )
    run.add_argument(
        "--profile",
        choices=("verdict", "diagnostics", "both"),
        default="both",
        help="compare verdicts only, exact codes too, or both, reported separately "
        "(SPEC.md#profiles; default both)",
    )
    run.add_argument(
        "--strict-levels",
        action="store_true",
        help="SHOULD and MAY cases fail the run too (SPEC.md#levels: by default only MUST do)",
    )
    add_history_format_option(
        run,
        "judge the implementation as if it read only this history form, of those it announces "
        "(SPEC.md#CL4): neutral cases go in it, cases of the other form are not_applicable",
    )
    run.add_argument(
        "--redact-reports",
        action="store_true",
        help="redact (SPEC.md R2) every request, response, value, message and stderr shown in "
        "the terminal and the reports: for --vectors holding real captures",
    )
    progress = run.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar on stderr, even without a terminal and with -q",
    )
    progress.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    run.add_argument(
        "-q",
        "--quiet",
        action="count",
        default=0,
        help="less output: only the verdict line (and no progress bar unless --progress)",
    )
    run.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more output: every unexpected result, not only the first 20",
    )


def _parse_reports(specs: Sequence[str]) -> list[tuple[str, Path]]:
    out = []
    for spec in specs:
        fmt, sep, path = spec.partition(":")
        if not sep or not path or fmt not in FORMATS:
            raise UsageError(
                f"--report {spec!r}: use FORMAT:PATH with FORMAT one of {', '.join(FORMATS)}"
            )
        out.append((fmt, Path(path)))
    if sum(1 for _, path in out if str(path) == STDOUT_PATH) > 1:
        raise UsageError("--report: only one report can go to stdout (-)")
    return out


def show_progress(args: argparse.Namespace, err: TextIO) -> bool:
    """An explicit --progress always shows the bar; otherwise a terminal does, unless -q or
    --no-progress."""
    if args.progress:
        return True
    return err.isatty() and not args.no_progress and args.verbose - args.quiet >= 0


def _expectations(path: Path | None, *, missing_ok: bool = False) -> Expectations:
    if path is None:
        return NO_EXPECTATIONS
    if missing_ok and not path.exists():
        return NO_EXPECTATIONS
    loaded = load_expectations(path)
    if isinstance(loaded, list):
        raise UsageError("invalid expectations file:\n" + "\n".join(f"  {p}" for p in loaded))
    return loaded


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    reports = _parse_reports(args.report)
    suite = suite_from_args(args)
    cases = select(suite.cases, selection_from_args(args))
    if not cases:
        raise UsageError("no case matches the selection (see `conformance list`)")
    exp_path = args.expectations or args.update_expectations
    expectations = _expectations(exp_path, missing_ok=args.expectations is None)
    impl = impl_from_args(args)
    verbosity = args.verbose - args.quiet
    bar = ProgressBar(err) if show_progress(args, err) else None
    try:
        run = run_cases(
            impl,
            suite,
            cases,
            expectations=expectations,
            progress=bar,
            profiles=PROFILES if args.profile == "both" else (Profile(args.profile),),
            strict_levels=args.strict_levels,
            redact=args.redact_reports,
            judged_as=history_format_from_args(args),
        )
    finally:
        if bar is not None:
            bar.finish()
    repro = repro_from_args(args)
    if not run.started_ok:
        print(f"conformance run: error: {not_started_line(run, repro)}", file=err)
        return EXIT_USAGE
    to_stdout = any(str(path) == STDOUT_PATH for _, path in reports)
    (err if to_stdout else out).write(terminal_text(run, repro, verbosity=verbosity))
    for fmt, path in reports:
        try:
            write_report(fmt, path, run, repro, stdout=out)
        except OSError as exc:
            raise UsageError(f"cannot write {fmt} report {path}: {exc}") from exc
    if args.update_expectations is not None:
        new = updated(
            expectations,
            suite.cases,
            [
                Judged(r.case, r.verdict, r.entry, v.profile)
                for v in run.profiles
                for r in v.results
            ],
            reason=args.reason,
            implementation=run.info.name if run.info is not None else None,
        )
        try:
            replace_file(args.update_expectations, dump_expectations(new).encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot write {args.update_expectations}: {exc}") from exc
        print(f"wrote {args.update_expectations} ({len(new.entries)} entries)", file=err)
    return EXIT_OK if run.ok else EXIT_UNEXPECTED
