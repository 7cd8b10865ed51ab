"""The selection of cases (``run`` and ``list``'s filters): patterns, operations, tags, levels."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from .vectors import Case

_GLOB_CHARS: Final = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Selection:
    """Filters of ``run`` and ``list``: OR within one filter, AND across filters."""

    patterns: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()

    def matches(self, case: Case) -> bool:
        if self.operations and case.operation not in self.operations:
            return False
        if self.levels and case.level not in self.levels:
            return False
        if self.tags and not any(t in case.tags for t in self.tags):
            return False
        return not self.patterns or any(name_matches(p, case.names) for p in self.patterns)


def name_matches(pattern: str, names: Iterable[str]) -> bool:
    """A glob (``*``, ``?``, ``[..]``; ``*`` crosses ``/``) matches a whole name; anything else
    matches as a substring."""
    if _GLOB_CHARS.isdisjoint(pattern):
        return any(pattern in n for n in names)
    return any(fnmatchcase(n, pattern) for n in names)


def select(cases: Iterable[Case], selection: Selection) -> tuple[Case, ...]:
    return tuple(c for c in cases if selection.matches(c))
