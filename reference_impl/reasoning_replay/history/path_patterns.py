"""``validate --exclude PATTERN``: gitignore-like globs over the paths a directory walk finds.

The subset of gitignore's pattern syntax that a list of exclusions needs, with its meaning:

- a pattern is matched against a path relative to the directory given on the command line,
  with ``/`` between names;
- a pattern without a ``/`` (a trailing one aside) matches a file or directory of that name at
  any depth (``package*.json``, ``node_modules``);
- a pattern with a ``/`` at its start or in its middle is anchored at that directory
  (``exports/*.json``; a leading ``/`` only anchors: ``/corpus``);
- a trailing ``/`` matches directories only (``generated/``);
- ``*`` matches any characters but ``/``, ``?`` one character but ``/``, ``[...]`` one of a set
  (``[!...]`` or ``[^...]``: one not in it), and ``**`` any number of directories
  (``**/fixtures``, ``corpus/**``, ``a/**/b``).

An excluded directory is not walked. Negation (``!pattern``) is not supported: it is refused
rather than read as a literal name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PathPattern:
    """One pattern, compiled."""

    text: str
    regex: re.Pattern[str]
    anchored: bool  # matched against the whole relative path, not a name
    directories_only: bool

    def matches(self, relative: str, *, is_directory: bool) -> bool:
        if self.directories_only and not is_directory:
            return False
        subject = relative if self.anchored else relative.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None


@dataclass(frozen=True, slots=True)
class InvalidPattern:
    """A pattern that cannot be used, and why."""

    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class ExcludePatterns:
    """Every ``--exclude`` pattern; a path is excluded when any of them matches it."""

    patterns: tuple[PathPattern, ...] = ()

    def excludes(self, root: str, path: str, *, is_directory: bool) -> bool:
        """Whether ``path``, found by walking ``root``, is excluded."""
        if not self.patterns:
            return False
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        return any(p.matches(relative, is_directory=is_directory) for p in self.patterns)


def _class_end(pattern: str, start: int) -> int:
    """The index of the ``]`` closing the set opened at ``start``, or -1."""
    index = start + 1
    if index < len(pattern) and pattern[index] in "!^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1  # a leading "]" is a member
    end = pattern.find("]", index)
    return end


def _translate(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        elif glob[index] == "[" and (end := _class_end(glob, index)) > 0:
            members = glob[index + 1 : end]
            negated = members[:1] in ("!", "^")
            body = members[1:] if negated else members
            escaped = body.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[{'^' if negated else ''}{escaped}]")
            index = end + 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out)


def compile_pattern(text: str) -> PathPattern | InvalidPattern:
    """One ``--exclude`` pattern, or why it cannot be used."""
    if not text or text == "/":
        return InvalidPattern(text, "an empty pattern matches nothing")
    if text.startswith("!"):
        return InvalidPattern(text, "negation (!) is not supported")
    directories_only = text.endswith("/")
    body = text.rstrip("/")
    anchored = "/" in body
    body = body.removeprefix("/")
    return PathPattern(text, re.compile(_translate(body)), anchored, directories_only)


def exclude_patterns(texts: Sequence[str]) -> ExcludePatterns | InvalidPattern:
    """Every pattern compiled, or the first that cannot be."""
    compiled: list[PathPattern] = []
    for text in texts:
        pattern = compile_pattern(text)
        if isinstance(pattern, InvalidPattern):
            return pattern
        compiled.append(pattern)
    return ExcludePatterns(tuple(compiled))
