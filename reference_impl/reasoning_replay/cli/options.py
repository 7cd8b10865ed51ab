"""What the ``conformance`` subcommands share: exit statuses, the usage error, the vector,
selection and adapter options, and what they parse into.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from reasoning_replay.resources import data_path
from reasoning_replay.suite.adapter_process import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    OneShotAdapter,
    PersistentAdapter,
)
from reasoning_replay.suite.forms import HistoryFormat
from reasoning_replay.suite.implementation import Implementation
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.reports import Repro
from reasoning_replay.suite.selection import Selection
from reasoning_replay.suite.vectors import (
    LEVELS,
    Suite,
    load_suite,
)

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Reported as ``conformance: error: ...`` with exit status 2."""


def default_vectors() -> list[Path]:
    return [data_path("conformance", "vectors")]


def add_vector_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--vectors",
        action="append",
        type=Path,
        metavar="DIR",
        help="vector directory (repeatable; replaces the bundled vectors)",
    )


def add_selection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="case id or alias: substring, or glob (* ? [...]) over the whole id",
    )
    p.add_argument(
        "--operation",
        action="append",
        default=[],
        metavar="OP",
        help="only cases of operation OP (read, capture, replay, ...); repeatable",
    )
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only cases tagged TAG; repeatable",
    )
    p.add_argument(
        "--level",
        action="append",
        default=[],
        choices=LEVELS,
        help="only cases of this level (SPEC.md#levels); repeatable",
    )


def add_impl_options(p: argparse.ArgumentParser, *, required: bool = False) -> None:
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


def add_history_format_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument(
        "--history-format", choices=[f.value for f in HistoryFormat], default=None, help=help
    )


def history_format_from_args(args: argparse.Namespace) -> HistoryFormat | None:
    return None if args.history_format is None else HistoryFormat(args.history_format)


def suite_from_args(args: argparse.Namespace) -> Suite:
    dirs = args.vectors or default_vectors()
    suite = load_suite(dirs)
    if suite.problems:
        listing = "\n".join(f"  {p}" for p in suite.problems[:30])
        raise UsageError(f"the suite is invalid (run `conformance check`):\n{listing}")
    if not suite.cases:
        raise UsageError(f"no vectors found under {', '.join(map(str, dirs))}")
    return suite


def selection_from_args(args: argparse.Namespace) -> Selection:
    return Selection(
        patterns=tuple(args.patterns),
        operations=tuple(args.operation),
        tags=tuple(args.tag),
        levels=tuple(args.level),
    )


def impl_from_args(args: argparse.Namespace) -> Implementation:
    if args.impl is None:
        if args.oneshot:
            raise UsageError("--oneshot needs --impl")
        return InProcessImplementation()
    argv = shlex.split(args.impl)
    if not argv:
        raise UsageError("--impl is empty")
    cls = OneShotAdapter if args.oneshot else PersistentAdapter
    return cls(argv, timeout=args.timeout, start_timeout=args.start_timeout)


def repro_from_args(args: argparse.Namespace) -> Repro:
    return Repro(
        impl=args.impl,
        oneshot=args.oneshot,
        vectors=tuple(str(v) for v in args.vectors or ()),
        timeout=args.timeout if args.timeout != DEFAULT_TIMEOUT else None,
        history_format=getattr(args, "history_format", None),
    )
