"""History files named by URL: which arguments are URLs, and reading one file of a store.

``conformance validate`` takes fsspec URLs beside paths: ``s3://bucket/sessions``,
``gs://...``, ``memory://...`` (with the user's filesystem package for the protocol, ``s3fs``,
``gcsfs``) and ``file://``. An argument is a URL when it starts with ``scheme://`` (or a chain
such as ``simplecache::s3://``); a local directory named ``s3:`` is written ``./s3://...``.

``file://`` names the local filesystem, which has POSIX modes: a ``file://`` URL is turned into
its local path (RFC 8089, percent-decoded) and validated exactly as that path is, so its report
names files by their local paths. Every other protocol is a store without POSIX modes, read
through fsspec (:mod:`reasoning_replay.history.store_walk` walks it), and a report names its files
by URL: the URL as given, joined with each file's path below it.

fsspec comes with the ``distributed`` extra (``pip install 'reasoning-replay[distributed]'``); it
is imported only when a URL is given.
"""

from __future__ import annotations

import os
import re
from typing import Any, Final
from urllib.parse import unquote_to_bytes, urlsplit

_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*(?:::[A-Za-z][A-Za-z0-9+.-]*)*://")
_FILE_SCHEMES: Final = ("file", "local")
EXTRA_HINT: Final = "pip install 'reasoning-replay[distributed]'"


class MissingExtraError(ImportError):
    """fsspec (or Dask) is not installed: the ``distributed`` extra is needed."""


def is_url(argument: str) -> bool:
    """Whether a command-line argument is a URL rather than a local path."""
    return _URL.match(argument) is not None


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].rsplit("::", 1)[-1].lower()


def is_file_url(argument: str) -> bool:
    """A ``file://`` URL, alone (not chained): the local filesystem."""
    return (
        is_url(argument)
        and "::" not in argument.split("://", 1)[0]
        and (_scheme(argument) in _FILE_SCHEMES)
    )


def is_store_url(argument: str) -> bool:
    """A URL of a store read through fsspec: any URL but a plain ``file://`` one."""
    return is_url(argument) and not is_file_url(argument)


def file_url_path(url: str) -> str | None:
    """The local path a ``file://`` URL names (RFC 8089: an empty host or ``localhost``, the
    path percent-decoded), or None when it names none (another host, no absolute path)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
        return None
    return os.fsdecode(unquote_to_bytes(parts.path))


def fsspec_module() -> Any:
    """fsspec, or :class:`MissingExtraError` saying how to install it."""
    try:
        import fsspec  # type: ignore[import-untyped]  # noqa: PLC0415 - an extra, for URLs only
    except ImportError as error:
        raise MissingExtraError(f"a URL needs fsspec: {EXTRA_HINT}") from error
    return fsspec


def open_store(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path in it; raises :class:`MissingExtraError`,
    or the filesystem package's own error (an unknown protocol, a package not installed)."""
    fs, root = fsspec_module().core.url_to_fs(url)
    return fs, root


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be validated (no such file or directory, a protocol without its
    package, a store that refuses to answer), or None."""
    try:
        fs, root = open_store(url)
        if fs.isdir(root) or fs.isfile(root):
            return None
    except MissingExtraError as error:
        return str(error)
    except Exception as error:  # each filesystem package raises its own types
        return f"cannot open {url}: {type(error).__name__}: {error}"
    return f"no such file or directory: {url}"


def read_store_file(url: str) -> bytes:
    """Every byte of one file of a store. Raises :class:`OSError` whatever the filesystem
    package raised, so that the file is ``history_unreadable`` (SPEC H3), never the end of the
    run."""
    try:
        fs, path = open_store(url)
        data: bytes = fs.cat_file(path)
    except OSError as error:
        if error.strerror:
            raise
        raise OSError(f"{type(error).__name__}: {error}") from error
    except Exception as error:
        # botocore's ClientError, gcsfs's HttpError, a package missing on this worker, ...
        raise OSError(f"{type(error).__name__}: {error}") from error
    return data
