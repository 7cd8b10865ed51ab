"""What a path names, for people and for errors: a regular file, a FIFO, a symbolic link, ...
(SPEC H4, H5: the tools read and replace regular files only). Below both the atomic writer
(:mod:`.atomic_files`) and the history tools' file safety (:mod:`.history.safe_files`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

_KINDS: Final = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a ``st_mode`` is, for people: ``"a FIFO"``, ``"a symbolic link"``, ..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


class NotARegularFileError(OSError):
    """A path names something other than a regular file where only one will do."""

    def __init__(self, path: Path | str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind_of(mode)})", os.fspath(path))
        self.mode = mode
