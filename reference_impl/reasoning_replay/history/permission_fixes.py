"""Permission findings of a ``validate`` run (SPEC H3, H4): ``--permissions`` (kept as errors,
lowered to warnings, or dropped) and ``--fix-permissions``, which changes modes through
descriptors opened without following links and reports a permission finding on a link as not
fixed, naming the link.
"""

from __future__ import annotations

import dataclasses
import errno
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from reasoning_replay.diagnostics import Code
from reasoning_replay.history.display_paths import display_path
from reasoning_replay.history.file_results import FileResult
from reasoning_replay.history.persistence import tighten_mode
from reasoning_replay.history.validation import Finding, Severity

PERMISSION_CODES: Final = frozenset((Code.FILE_MODE_TOO_OPEN, Code.DIRECTORY_MODE_TOO_OPEN))
PERMISSION_POLICIES: Final = ("error", "warning", "ignore")


@dataclass(frozen=True, slots=True)
class Fix:
    """A permission change ``--fix-permissions`` made (or could not make)."""

    path: str
    old: int
    new: int
    error: str | None = None


def tighten(path: str, *, directory: bool = False) -> Fix | None:
    """SPEC H4: remove group and other bits, never add one; ``None`` when nothing to remove.

    Never through a symbolic link: a link is a :class:`Fix` whose error names it, and nothing
    is changed, here or where it points (:func:`reasoning_replay.history.persistence.tighten_mode`).
    """
    try:
        old = stat.S_IMODE(Path(path).lstat().st_mode)
        new = tighten_mode(Path(path), directory=directory)
    except OSError as error:
        if error.errno == errno.ELOOP:  # SPEC H4: a fixer never changes a mode through a link
            reason = f"{display_path(path)} is a symbolic link, not followed; nothing was changed"
        else:
            reason = error.strerror or str(error)
        return Fix(path, 0, 0, reason)
    return None if new is None else Fix(path, old, new)


def permission_fixes(result: FileResult) -> dict[Code, Fix]:
    fixes: dict[Code, Fix] = {}
    codes = {f.code for f in result.report.findings}
    if Code.FILE_MODE_TOO_OPEN in codes:
        fix = tighten(result.target.path)
        if fix is not None:
            fixes[Code.FILE_MODE_TOO_OPEN] = fix
    if Code.DIRECTORY_MODE_TOO_OPEN in codes and result.target.directory is not None:
        fix = tighten(result.target.directory, directory=True)
        if fix is not None:
            fixes[Code.DIRECTORY_MODE_TOO_OPEN] = fix
    return fixes


def apply_permission_policy(result: FileResult, policy: str) -> FileResult:
    """``--permissions``: keep permission findings as errors, lower them to warnings, or drop
    them (SPEC H3); every other finding is unchanged."""
    if policy == "error":
        return result
    findings: list[Finding] = []
    for finding in result.report.findings:
        if finding.code not in PERMISSION_CODES:
            findings.append(finding)
        elif policy == "warning":
            findings.append(dataclasses.replace(finding, level=Severity.WARNING))
    report = dataclasses.replace(result.report, findings=tuple(findings))
    return dataclasses.replace(result, report=report)


def is_fixed(finding: Finding, fixes: dict[Code, Fix]) -> bool:
    fix = fixes.get(finding.code)
    return fix is not None and fix.error is None
