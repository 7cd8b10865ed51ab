"""``conformance validate PATH...``: check stored history files (SPEC §10.2, H3 and H4).

Parses the options, runs :func:`reasoning_replay.history.validate_run.run_validate` with a report
format of :mod:`reasoning_replay.history.report_formats`, and writes the report to standard
output (only the report: progress and errors go to standard error) or to ``--output``, never
over any file it must not harm (issue 12), and put in place whole when the run ends
(:mod:`reasoning_replay.atomic_files`); a run that validates nothing leaves ``--output`` as it
was.

``--jobs N`` asks for up to N worker processes; a run never starts more than there are usable
CPUs or batches of files (:func:`reasoning_replay.history.validate_jobs.worker_count`), so a
huge N costs nothing, and N below 1 is a usage error.

A PATH may be an fsspec URL (:mod:`reasoning_replay.history.store_urls`); ``--scheduler ADDRESS``
or ``--workers N`` validate the files on a Dask cluster
(:mod:`reasoning_replay.history.distributed`), both with the ``distributed`` extra.

Exit status (SPEC H3): 0 no ``error`` finding (fixed permissions do not count), 1 an ``error``
finding, 2 a usage error, a path that does not exist, or nothing to validate (no history in the
paths given, or every one excluded).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from reasoning_replay.atomic_files import Replacement
from reasoning_replay.history.display_paths import display_path
from reasoning_replay.history.distributed import EngineError, dask_engine
from reasoning_replay.history.path_patterns import (
    ExcludePatterns,
    InvalidPattern,
    exclude_patterns,
)
from reasoning_replay.history.permission_fixes import PERMISSION_POLICIES
from reasoning_replay.history.report_formats import VALIDATE_FORMATS, make_writer
from reasoning_replay.history.safe_files import output_problem
from reasoning_replay.history.store_urls import (
    MissingExtraError,
    file_url_path,
    is_file_url,
    is_store_url,
    url_problem,
)
from reasoning_replay.history.validate_run import Engine, run_validate
from reasoning_replay.record.providers import (
    ProviderNames,
    ProviderNamesError,
    provider_names_from_pairs,
)

EXIT_USAGE: Final = 2


class ValidateUsageError(Exception):
    """A usage error or a path that does not exist: exit status 2."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``validate`` on the ``conformance`` subcommand parsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "validate",
        allow_abbrev=False,  # a file named like an abbreviated option must not become one
        help="validate stored history files and session directories (SPEC H1-H4)",
        description="Validate stored history files: replay blocks, cache-state records, "
        "duplicates and permissions (SPEC §10.2). A file named here is always validated; a "
        "directory is walked for history files: history_*.json, compacted_*.json and "
        "session.json (permissions only) by name, any other *.json only if it is a JSON object "
        "with a member messages (others are skipped and counted). Exit 0 without error "
        "findings, 1 with, 2 for a usage error, a missing path, or nothing to validate.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="history file (always validated) or directory (walked for histories); or an "
        "fsspec URL of either (file://, s3://, gs://, memory://)",
    )
    p.add_argument(
        "--format",
        choices=VALIDATE_FORMATS,
        default="text",
        help="text (default), json (one document: conformance/schemas/validate-report"
        ".schema.json) or sarif (SARIF 2.1.0, for code scanning)",
    )
    p.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the report to FILE instead of stdout (- is stdout)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out what a directory walk finds that matches PATTERN, a gitignore-like glob "
        "(name at any depth; a/b anchored at the walked directory; dir/ directories only; "
        "**); repeatable; files named on the command line are always validated",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes, at most N (default 1; never more than usable CPUs or batches "
        "of files)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="validate on the Dask cluster of this scheduler (tcp://host:8786); needs the "
        "distributed extra",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="validate on a local Dask cluster of N worker processes; needs the distributed extra",
    )
    p.add_argument(
        "--fix-permissions",
        action="store_true",
        help="remove group and other permission bits from files and session directories "
        "(never through a symbolic link)",
    )
    p.add_argument(
        "--permissions",
        choices=PERMISSION_POLICIES,
        default="error",
        help="permission findings (SPEC H4) are errors (default), warnings, or not reported",
    )
    p.add_argument(
        "--provider",
        default="openai",
        metavar="NAME",
        help="provider of files whose session.json records none (SPEC P4, H3; default openai)",
    )
    p.add_argument(
        "--provider-name",
        action="append",
        default=[],
        metavar="NAME=ISSUER",
        help="map a provider name to its issuer, extending SPEC §18.2's registry (SPEC P4); "
        "repeatable",
    )
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="text format: every block of a finding repeated per block, and the skipped files",
    )
    return p


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The ``validate`` subcommand; usage errors are reported here, with exit status 2."""
    try:
        return _validate_command(args, out, err)
    except ValidateUsageError as error:
        print(f"conformance validate: error: {error}", file=err)
        return EXIT_USAGE


def _validate_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = [_local_path(p) for p in args.paths]
    missing = [p for p in paths if not is_store_url(p) and not os.path.lexists(p)]
    if missing:
        raise ValidateUsageError(f"no such file or directory: {', '.join(missing)}")
    if args.jobs < 1:
        raise ValidateUsageError("--jobs must be at least 1")
    if args.fix_permissions and args.permissions == "ignore":
        raise ValidateUsageError("--fix-permissions has nothing to fix with --permissions ignore")
    stores = [p for p in paths if is_store_url(p)]
    if args.fix_permissions and stores:
        raise ValidateUsageError(
            f"--fix-permissions: {stores[0]} is a store without POSIX modes (SPEC H4)"
        )
    try:
        provider_names = provider_names_from_pairs(args.provider_name)
    except ProviderNamesError as error:
        raise ValidateUsageError(str(error)) from None
    exclude = exclude_patterns(args.exclude)
    if isinstance(exclude, InvalidPattern):
        raise ValidateUsageError(f"--exclude {exclude.text!r}: {exclude.reason}")
    for url in stores:
        problem = url_problem(url)
        if problem is not None:
            raise ValidateUsageError(problem)
    with _engine(args) as engine:
        return _run(
            args,
            paths=paths,
            provider_names=provider_names,
            exclude=exclude,
            engine=engine,
            out=out,
            err=err,
        )


def _local_path(argument: str) -> str:
    """A ``file://`` URL as the local path it names; any other argument as it is."""
    if not is_file_url(argument):
        return argument
    path = file_url_path(argument)
    if path is None:
        raise ValidateUsageError(f"{argument}: a file:// URL names a local absolute path")
    return path


@contextlib.contextmanager
def _engine(args: argparse.Namespace) -> Iterator[Engine | None]:
    """The Dask cluster ``--scheduler`` or ``--workers`` asks for, or None (this process and
    ``--jobs``)."""
    if args.scheduler is None and args.workers is None:
        yield None
        return
    if args.scheduler is not None and args.workers is not None:
        raise ValidateUsageError("--scheduler and --workers exclude each other")
    if args.workers is not None and args.workers < 1:
        raise ValidateUsageError("--workers must be at least 1")
    if args.jobs != 1:
        raise ValidateUsageError("--jobs is for local worker processes; Dask schedules a cluster")
    try:
        with dask_engine(scheduler=args.scheduler, workers=args.workers) as engine:
            yield engine
    except (MissingExtraError, EngineError) as error:
        raise ValidateUsageError(str(error)) from None


def _run(
    args: argparse.Namespace,
    *,
    paths: list[str],
    provider_names: ProviderNames,
    exclude: ExcludePatterns,
    engine: Engine | None,
    out: TextIO,
    err: TextIO,
) -> int:
    """The run itself, its report written whole or not at all."""
    show_progress = not args.no_progress and err.isatty()
    to_file = args.output is not None and str(args.output) != "-"
    report = _open_report(args.output, paths) if to_file else None
    target = out if report is None else _text(report)
    try:
        totals = run_validate(
            paths,
            writer=make_writer(args.format, target, verbose=args.verbose),
            provider=args.provider,
            provider_names=provider_names,
            jobs=args.jobs,
            fix_permissions=args.fix_permissions,
            permissions=args.permissions,
            exclude=exclude,
            progress_stream=err if show_progress else None,
            out_is_tty=target.isatty(),
            engine=engine,
        )
        if report is not None and not totals.nothing_validated:
            target.flush()
            _commit(report)
    finally:
        if report is not None:
            with contextlib.suppress(OSError, ValueError):
                target.close()  # its buffer is flushed now, never into a reused descriptor
            report.discard()  # after a commit: nothing; else no partial report, no temp file
    if totals.nothing_validated:
        raise ValidateUsageError(totals.nothing_validated_reason())
    return totals.exit_status


def _open_report(path: Path, inputs: Sequence[str]) -> Replacement:
    """The ``--output`` report, refusing to harm a file: never one of the files named for
    validation (a file named ``--output=X.json`` must not turn a hook against ``X.json``),
    never a link, a FIFO or a device (issue 12). It is written to a temporary file and put in
    place whole once the run is over (SPEC H5's way: no partial report, no temporary file), and
    only when the run validated something."""
    statuses = []
    for name in inputs:
        try:
            statuses.append(Path(name).stat())
        except OSError:
            continue
    problem = output_problem(path, tuple(statuses))
    if problem is not None:
        raise ValidateUsageError(f"refusing to write {display_path(path)}: {problem}")
    try:
        # The report holds no replay material: a new file gets the umask's mode.
        return Replacement(path)
    except OSError as error:
        raise ValidateUsageError(f"cannot write {display_path(path)}: {error.strerror}") from error


def _text(report: Replacement) -> TextIO:
    raw = io.FileIO(report.fileno(), "w", closefd=False)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8")


def _commit(report: Replacement) -> None:
    try:
        report.commit()
    except OSError as error:
        shown = display_path(report.path)
        raise ValidateUsageError(f"cannot write {shown}: {error.strerror or error}") from error


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reasoning_replay.cli.validate PATH...``, the same as the subcommand."""
    parser = argparse.ArgumentParser(prog="conformance")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["validate", *(sys.argv[1:] if argv is None else argv)])
    return cmd_validate(args, sys.stdout, sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
