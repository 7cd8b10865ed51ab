"""The language-neutral conformance machinery: vectors, the adapter protocol, the runner, reports
and the suite linter. The command line is :mod:`reasoning_replay.suite.cli` (``conformance``).

Nothing here knows what an operation means: operations are names taken from the vectors and from
each implementation's handshake, and outputs are compared as plain JSON values.
"""

from __future__ import annotations

from importlib import metadata

RUNNER_NAME = "reasoning-replay-conformance"
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION", "RUNNER_NAME", "runner_version"]


def runner_version() -> str:
    """The installed distribution's version; the runner is versioned with the package."""
    try:
        return metadata.version("reasoning-replay")
    except metadata.PackageNotFoundError:  # a bare source checkout on sys.path
        return "0+unknown"
