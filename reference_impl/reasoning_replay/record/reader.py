"""SPEC E6, the reader's entry points: the statement's verdict, by its fastest available path.

:func:`parse_reasoning_replay_envelope` is :func:`.read.read_block` (the statement, in Python)
under ``REASONING_REPLAY_PURE_PYTHON=1``, and otherwise :func:`._fast.general.read`, which gives
every text the same verdict sooner; :func:`parse_strict` likewise for SPEC E6 steps 1–5.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from reasoning_replay._accelerators import pure_python

from ._fast import canonical, general
from .jsontext import TextRefused, parse_strict_statement
from .read import read_block
from .verdict import ReadResult

__all__ = [
    "ACCELERATED",
    "ReadResult",
    "parse_reasoning_replay_envelope",
    "parse_strict",
    "parse_strict_is_accelerated",
]

_PURE: Final = pure_python()

parse_reasoning_replay_envelope: Final[Callable[[str | bytes], ReadResult]] = (
    read_block if _PURE else general.read
)
"""Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

``text`` is the block's text as characters or as the bytes it was stored as.
"""

parse_strict: Final[Callable[[str | bytes], object | TextRefused]] = (
    parse_strict_statement if _PURE else general.parse_strict
)
"""The JSON value of a text, or the first text rule it breaks, in SPEC E6 order (steps 1–5)."""

ACCELERATED: Final = canonical.ACCELERATED
"""Whether the C accelerator of the canonical fast path is in use (it changes no verdict)."""
parse_strict_is_accelerated: Final = general.parse_strict_is_accelerated
