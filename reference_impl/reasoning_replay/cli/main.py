"""``conformance``: run, list, check, smoke, bundle and request (SPEC §13).

Exit status: 0 every MUST case as expected in every profile run (SPEC.md#levels); 1 unexpected
results (or lint problems for ``check``); 2 usage, I/O or suite errors; 128 + the signal's number
after SIGINT or SIGTERM (the adapter and everything it started are stopped first).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from reasoning_replay.resources import data_path
from reasoning_replay.suite import PROTOCOL_VERSION, protocol, runner_version
from reasoning_replay.suite.adapter_process import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    OneShotAdapter,
    PersistentAdapter,
)
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.expectations import (
    NO_EXPECTATIONS,
    Expectations,
    Judged,
    dump_expectations,
    load_expectations,
    updated,
)
from reasoning_replay.suite.governed import governed_reply
from reasoning_replay.suite.implementation import Implementation
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.outcomes import Outcome, judge
from reasoning_replay.suite.profiles import PROFILES, Profile
from reasoning_replay.suite.progress import ProgressBar
from reasoning_replay.suite.protocol import (
    Crash,
    Failure,
    ImplementationInfo,
    ProtocolViolation,
    ReplyTooLong,
    Timeout,
)
from reasoning_replay.suite.reports import FORMATS, Repro, terminal_text, write_report
from reasoning_replay.suite.runner import handshake_message, run_cases
from reasoning_replay.suite.vectors import (
    BUNDLE_NAME,
    LEVELS,
    Case,
    Selection,
    Suite,
    bundle_text,
    load_suite,
    load_vector_dirs,
    select,
)
from reasoning_replay.versions import versions, versions_text

from . import scan, validate
from .export import add_export_parser, cmd_export

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Reported as ``conformance: error: ...`` with exit status 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the runner is, so that it unwinds as after Ctrl-C: every
    ``finally`` runs and the adapter's process group is ended."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; embedders keep their own
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _default_vectors() -> list[Path]:
    return [data_path("conformance", "vectors")]


def _add_vector_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--vectors",
        action="append",
        type=Path,
        metavar="DIR",
        help="vector directory (repeatable; replaces the bundled vectors)",
    )


def _add_selection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="case id or alias: substring, or glob (* ? [...]) over the whole id",
    )
    p.add_argument("--operation", action="append", default=[], metavar="OP")
    p.add_argument("--tag", action="append", default=[], metavar="TAG")
    p.add_argument("--level", action="append", default=[], choices=LEVELS)


def _add_impl_options(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    p.add_argument(
        "--impl",
        metavar="CMD",
        required=required,
        help='adapter command line, e.g. "node adapter.js" (shell-style quoting)',
    )
    p.add_argument(
        "--oneshot",
        action="store_true",
        help="start the adapter once per case (request on stdin, then EOF)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for each reply (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--start-timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for the handshake reply (default {DEFAULT_START_TIMEOUT:g})",
    )


class _VersionAction(argparse.Action):
    """Prints the version table as is: argparse's own version action would reflow its lines."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        header = f"{parser.prog} {runner_version()} (protocol {PROTOCOL_VERSION})"
        print(f"{header}\n{versions_text(versions())}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Run the reasoning-replay conformance suite against an implementation.",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="show every version line (versions.json) and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run the suite (default: the in-process reference)")
    _add_vector_options(run)
    _add_impl_options(run)
    _add_selection_options(run)
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
        help=f"also write a report ({', '.join(FORMATS)}); PATH - is stdout",
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
    run.add_argument(
        "--redact-reports",
        action="store_true",
        help="redact (SPEC.md R2) every request, response, value, message and stderr shown in "
        "the terminal and the reports: for --vectors holding real captures",
    )
    run.add_argument("--progress", action="store_true", help="show progress even without a TTY")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("-q", "--quiet", action="count", default=0)
    run.add_argument("-v", "--verbose", action="count", default=0)

    ls = sub.add_parser("list", help="list case ids with operation, level and tags")
    _add_vector_options(ls)
    _add_selection_options(ls)

    check = sub.add_parser("check", help="lint the suite (schema, ids, SPEC.md, bundle)")
    check.add_argument(
        "--suite", type=Path, metavar="DIR", help="conformance directory (default: the bundled one)"
    )
    check.add_argument("--spec", type=Path, metavar="FILE", help="SPEC.md to check against")

    smoke = sub.add_parser("smoke", help="check an adapter: handshake, messages, one case per op")
    _add_vector_options(smoke)
    _add_impl_options(smoke, required=True)

    bundle = sub.add_parser("bundle", help=f"(re)write conformance/{BUNDLE_NAME}")
    bundle.add_argument(
        "--suite", type=Path, metavar="DIR", help="conformance directory (default: the bundled one)"
    )

    request = sub.add_parser("request", help="print the run request line of one case")
    _add_vector_options(request)
    request.add_argument("id", help="case id or alias")
    request.add_argument("--seq", type=int, default=1)

    add_export_parser(sub)
    scan.add_parser(sub)
    validate.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["run", *(argv or [])])
    handlers = {
        "run": cmd_run,
        "list": cmd_list,
        "check": cmd_check,
        "smoke": cmd_smoke,
        "bundle": cmd_bundle,
        "request": cmd_request,
        "scan": scan.cmd_scan,
        "export": cmd_export,
        "validate": validate.cmd_validate,
    }
    try:
        with _sigterm_as_interrupt():
            return handlers[args.command](args, sys.stdout, sys.stderr)
    except UsageError as exc:
        print(f"conformance: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `conformance list | head`
        return EXIT_OK
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
        print(f"conformance: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum


# ---------------------------------------------------------------------------------------------


def _load_suite(args: argparse.Namespace) -> Suite:
    dirs = args.vectors or _default_vectors()
    suite = load_suite(dirs)
    if suite.problems:
        listing = "\n".join(f"  {p}" for p in suite.problems[:30])
        raise UsageError(f"the suite is invalid (run `conformance check`):\n{listing}")
    if not suite.cases:
        raise UsageError(f"no vectors found under {', '.join(map(str, dirs))}")
    return suite


def _selection(args: argparse.Namespace) -> Selection:
    return Selection(
        patterns=tuple(args.patterns),
        operations=tuple(args.operation),
        tags=tuple(args.tag),
        levels=tuple(args.level),
    )


def _impl(args: argparse.Namespace) -> Implementation:
    if args.impl is None:
        if args.oneshot:
            raise UsageError("--oneshot needs --impl")
        return InProcessImplementation()
    argv = shlex.split(args.impl)
    if not argv:
        raise UsageError("--impl is empty")
    cls = OneShotAdapter if args.oneshot else PersistentAdapter
    return cls(argv, timeout=args.timeout, start_timeout=args.start_timeout)


def _repro(args: argparse.Namespace) -> Repro:
    return Repro(
        impl=args.impl,
        oneshot=args.oneshot,
        vectors=tuple(str(v) for v in args.vectors or ()),
        timeout=args.timeout if args.timeout != DEFAULT_TIMEOUT else None,
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
    return out


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
    suite = _load_suite(args)
    cases = select(suite.cases, _selection(args))
    if not cases:
        raise UsageError("no case matches the selection (see `conformance list`)")
    exp_path = args.expectations or args.update_expectations
    expectations = _expectations(exp_path, missing_ok=args.expectations is None)
    impl = _impl(args)
    verbosity = args.verbose - args.quiet
    show_progress = (args.progress or err.isatty()) and not args.no_progress and verbosity >= 0
    bar = ProgressBar(err) if show_progress else None
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
        )
    finally:
        if bar is not None:
            bar.finish()
    repro = _repro(args)
    out.write(terminal_text(run, repro, verbosity=verbosity))
    for fmt, path in reports:
        try:
            write_report(fmt, path, run, repro)
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
            args.update_expectations.write_text(dump_expectations(new), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.update_expectations}: {exc}") from exc
        print(f"wrote {args.update_expectations} ({len(new.entries)} entries)", file=err)
    return EXIT_OK if run.ok else EXIT_UNEXPECTED


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    suite = _load_suite(args)
    cases = select(suite.cases, _selection(args))
    for c in cases:
        tags = ",".join(c.tags)
        out.write(f"{c.id}\t{c.operation}\t{c.level}\t{c.spec}\t{tags}\n")
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
        path.write_text(bundle_text(suite), encoding="utf-8")
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
    suite = _load_suite(args)
    case = _find(suite, args.id)
    out.write(protocol.run_request_line(args.seq, case).decode("utf-8"))
    out.flush()
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# smoke: plain advice for adapter authors

_ADVICE_TIMEOUT = (
    "no reply in time: write each reply as one line and flush stdout after it "
    "(Python: print(..., flush=True); Node: process.stdout.write is fine; "
    "Go/Rust/C: flush the buffered writer)"
)
_ADVICE_GARBAGE = "stdout must carry only protocol lines: send logs and debug output to stderr"


def _advice(failure: Failure) -> str:
    if isinstance(failure, Timeout):
        return _ADVICE_TIMEOUT
    if isinstance(failure, Crash):
        return "the program died: run it by hand with the request line below and read stderr"
    if isinstance(failure, ReplyTooLong):
        return f"a reply line may be at most {failure.limit} bytes (see PROTOCOL.md, Transport)"
    if isinstance(failure, ProtocolViolation):
        if "seq" in failure.message:
            return "copy the request's seq into the reply unchanged"
        if failure.desync:
            return _ADVICE_GARBAGE
        return "fix the message to match conformance/schemas/protocol/ (see PROTOCOL.md)"
    return ""


def _pick_smoke_cases(suite: Suite, operations: Sequence[str]) -> list[Case]:
    """One case per operation, preferring an accepted output (it exercises the most)."""
    picked = []
    for op in operations:
        of_op = [c for c in suite.cases if c.operation == op]
        if of_op:
            picked.append(next((c for c in of_op if not c.expect.is_reject), of_op[0]))
    return picked


def _note_operations(out: TextIO, operations: Sequence[str], suite: Suite) -> None:
    unknown = sorted(set(operations) - set(suite.operations))
    missing = sorted(set(suite.operations) - set(operations))
    if unknown:
        out.write(f"     note: the suite has no operation {', '.join(unknown)}\n")
    if missing:
        out.write(f"     note: not supported, their cases will be skipped: {', '.join(missing)}\n")


def _write_stderr(out: TextIO, text: str) -> None:
    lines = text.strip().splitlines()[-15:]
    if lines:
        out.write("     stderr (tail):\n" + "".join(f"       {ln}\n" for ln in lines))


def cmd_smoke(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    suite = _load_suite(args)
    impl = _impl(args)
    problems = 0

    def say(ok: bool, text: str) -> None:
        nonlocal problems
        problems += 0 if ok else 1
        out.write(f"{'ok ' if ok else 'BAD'}  {text}\n")

    info = impl.start()
    if isinstance(info, ImplementationInfo):
        say(True, f"handshake: {info.label()}, operations {', '.join(info.operations) or '-'}")
        operations = list(info.operations)
        _note_operations(out, operations, suite)
    else:
        say(False, f"handshake: {handshake_message(info)}")
        start_cmd = f"echo '{protocol.START_LINE.decode().strip()}' | {args.impl}"
        out.write(f"     advice: {_advice(info)}\n     try: {start_cmd}\n")
        _write_stderr(out, impl.stderr_tail())
        if not args.oneshot:
            impl.close()
            return EXIT_UNEXPECTED
        operations = list(suite.operations)  # one-shot: try every operation anyway
    repro = _repro(args)
    try:
        for seq, case in enumerate(_pick_smoke_cases(suite, operations), start=1):
            ex = impl.run(seq, case)
            if isinstance(ex.reply, (Crash, Timeout, ProtocolViolation, ReplyTooLong)):
                say(False, f"{case.operation}: {case.id}: {handshake_message(ex.reply)}")
                out.write(f"     advice: {_advice(ex.reply)}\n")
                out.write(f"     try: {repro.request_command(case.id)}\n")
                _write_stderr(out, ex.stderr or "")
                continue
            verdict = judge(case.expect, governed_reply(case, ex.reply))
            if verdict.outcome is Outcome.ADAPTER_ERROR:
                msg = verdict.detail.message if verdict.detail else ""
                say(False, f"{case.operation}: {case.id}: {msg}")
                continue
            note = (
                ""
                if verdict.outcome is Outcome.PASS
                else (f" (protocol fine; the case's outcome is {verdict.outcome}: run the suite)")
            )
            say(True, f"{case.operation}: {case.id}: valid reply{note}")
    finally:
        impl.close()
    if problems:
        out.write(f"{problems} problem(s); see conformance/PROTOCOL.md\n")
        return EXIT_UNEXPECTED
    out.write(
        "the adapter speaks the protocol; now run: conformance run --impl "
        f"{shlex.quote(args.impl)}{' --oneshot' if args.oneshot else ''}\n"
    )
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
