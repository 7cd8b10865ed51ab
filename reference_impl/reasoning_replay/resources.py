"""Where the data files of every SPEC part live: schemas (§11), vectors (§13), SPEC.md itself.

An installed wheel carries them as package data under ``_data/``; a source checkout has them at
the repository root. Every reader of these files goes through :func:`data_path`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The directory holding ``schema/``, ``conformance/`` and ``SPEC.md``."""
    packaged = _PACKAGE_DIR / "_data"
    if (packaged / "schema").is_dir():
        return packaged
    checkout = _PACKAGE_DIR.parent.parent
    if (checkout / "schema").is_dir() and (checkout / "SPEC.md").is_file():
        return checkout
    raise FileNotFoundError(
        f"reasoning_replay data files not found under {packaged} or {checkout}; "
        "reinstall the package with `pip install .`"
    )


def data_path(*parts: str) -> Path:
    """A path inside the data root, e.g. ``data_path("schema", "item.schema.json")``."""
    return data_root().joinpath(*parts)
