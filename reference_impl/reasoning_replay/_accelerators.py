"""The reader's optional C accelerators (SPEC E4, E6), unless ``REASONING_REPLAY_PURE_PYTHON=1``.

The accelerators (``_canonical``, ``_strict``; built by ``hatch_build.py``) change no verdict, only
the time one takes; without them the fast paths of ``record._fast`` run in Python and msgspec.
``REASONING_REPLAY_PURE_PYTHON=1`` also turns those off: the reader runs its statement alone.
"""

from __future__ import annotations

import importlib
import os


def pure_python() -> bool:
    """Whether ``REASONING_REPLAY_PURE_PYTHON`` asks for the Python statement alone: no C
    accelerator and no fast path (the reader then runs :mod:`.record.read`)."""
    return os.environ.get("REASONING_REPLAY_PURE_PYTHON", "") not in ("", "0")


def load_accelerator(module: str, function: str) -> object | None:
    """``function`` of the accelerator ``module`` of this package, or ``None`` where the
    environment turns the accelerators off or the module was not built."""
    if pure_python():
        return None  # the module is not even imported
    try:
        accelerator: object = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    except ImportError:  # not built (no compiler when installed): the Python path reads alike
        return None
    return accelerator
