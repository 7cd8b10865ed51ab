"""The runner's name and version and the version of the adapter protocol it speaks
(conformance/PROTOCOL.md): what its reports, its handshake and ``conformance --version`` state.
Importable from :mod:`reasoning_replay.suite` too."""

from __future__ import annotations

from importlib import metadata

RUNNER_NAME = "reasoning-replay-conformance"
PROTOCOL_VERSION = 1  # versions.json states it; tests/test_versions.py keeps the two equal


def runner_version() -> str:
    """The installed distribution's version; the runner is versioned with the package."""
    try:
        return metadata.version("reasoning-replay")
    except metadata.PackageNotFoundError:  # a bare source checkout on sys.path
        return "0+unknown"
