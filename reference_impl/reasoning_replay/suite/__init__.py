"""The language-neutral conformance machinery of SPEC §13: vectors, the adapter protocol, the
runner, reports and the suite linter. The command line is :mod:`reasoning_replay.cli.main`
(``conformance``).

Nothing here knows what an operation means: operations are names taken from the vectors and from
each implementation's handshake, and outputs are compared as plain JSON values. The one exception
is :mod:`.items_form`, which reads a ``replay`` or ``plan`` history with the reference's reader to
compute a vector's form and convert it into the items form (SPEC CL3, CL4).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .identity import PROTOCOL_VERSION, RUNNER_NAME, runner_version

if TYPE_CHECKING:
    from .cases import PARTS, assert_case, pytest_cases, vector_cases

__all__ = [
    "PARTS",
    "PROTOCOL_VERSION",
    "RUNNER_NAME",
    "assert_case",
    "pytest_cases",
    "runner_version",
    "vector_cases",
]
_FROM_CASES = frozenset(("PARTS", "assert_case", "pytest_cases", "vector_cases"))


def __getattr__(name: str) -> Any:
    # The vectors API for third-party test suites (cases.py) loads only when asked for: the
    # runner and adapters import this package and need none of it.
    if name in _FROM_CASES:
        from . import cases  # noqa: PLC0415

        return getattr(cases, name)
    if name == "PROFILES":  # its earlier name, from when a part was called a profile
        warnings.warn(
            "reasoning_replay.suite.PROFILES is PARTS (the parts of the specification)",
            DeprecationWarning,
            stacklevel=2,
        )
        from .cases import PARTS  # noqa: PLC0415

        return PARTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
