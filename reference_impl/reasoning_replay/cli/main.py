"""``conformance``: run, list, check, smoke, bundle and request (SPEC §13).

Exit status: 0 every MUST case as expected in every profile run (SPEC.md#levels); 1 unexpected
results (or lint problems for ``check``); 2 usage, I/O or suite errors; 128 + the signal's number
after SIGINT or SIGTERM (the adapter and everything it started are stopped first).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import NoReturn

from reasoning_replay.history.text_redaction import redact_text
from reasoning_replay.suite import PROTOCOL_VERSION, runner_version
from reasoning_replay.versions import versions, versions_text

from . import scan, validate
from .export import add_export_parser, cmd_export
from .options import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
)
from .run import add_run_parser, cmd_run
from .smoke import add_smoke_parser, cmd_smoke
from .suite_commands import (
    add_bundle_parser,
    add_check_parser,
    add_list_parser,
    add_request_parser,
    cmd_bundle,
    cmd_check,
    cmd_list,
    cmd_request,
)


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGINT, for the commands that start adapters), raised where the program is,
    so that it unwinds as after Ctrl-C: every ``finally`` runs and the adapters are ended."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# The commands that start adapter programs. Their exit status after SIGINT or SIGTERM says that
# the adapters and all they started have been ended (conformance/README.md), so a signal that
# comes while the first one's unwinding ends them does not cut that short: the ending is bounded
# (the supervisor's grace period and its SIGKILL rounds), and SIGKILL still ends the runner at
# once (its supervisor then ends everything).
_ENDS_ADAPTERS = frozenset({"run", "smoke"})


@contextlib.contextmanager
def _stop_signals(command: str) -> Iterator[None]:
    """SIGTERM raised as :class:`Terminated`; for a command that starts adapters, SIGINT too,
    and only the first of them raises."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; embedders keep their own
        return
    once = command in _ENDS_ADAPTERS
    stopping: list[int] = []

    def stop(signum: int, frame: object) -> None:
        if once and stopping:
            return  # the first signal's unwinding is ending the adapters
        stopping.append(signum)
        raise Terminated(signum)

    signums = [signal.SIGTERM]
    # A SIGINT ignored when the program started (nohup, a background job) stays ignored.
    if once and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signums.append(signal.SIGINT)
    previous = {signum: signal.signal(signum, stop) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _VersionAction(argparse.Action):
    """Prints the version table as is: argparse's own version action would reflow its lines."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        header = f"{parser.prog} {runner_version()} (protocol {PROTOCOL_VERSION})"
        print(f"{header}\n{versions_text(versions())}")
        parser.exit()


class _RedactingParser(argparse.ArgumentParser):
    """A parser whose usage errors never echo a secret given as an argument (SPEC H7)."""

    def error(self, message: str) -> NoReturn:
        super().error(redact_text(message))


def build_parser() -> argparse.ArgumentParser:
    parser = _RedactingParser(
        prog="conformance",
        description="Run the reasoning-replay conformance suite against an implementation.",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="show every version line (versions.json) and exit",
    )
    # Every subcommand's parser redacts its usage errors too (a parser of the parser's class).
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_RedactingParser
    )

    add_run_parser(sub)
    add_list_parser(sub)
    add_check_parser(sub)
    add_smoke_parser(sub)
    add_bundle_parser(sub)
    add_request_parser(sub)
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
        with _stop_signals(args.command):
            return handlers[args.command](args, sys.stdout, sys.stderr)
    except UsageError as exc:
        print(f"conformance: error: {redact_text(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `conformance list | head`
        return EXIT_OK
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
        print(f"conformance: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
