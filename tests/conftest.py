"""In CI, a test may not skip because something it needs is not installed: it fails instead.

Locally a test that needs an implementation's environment (fast-agent, a framework, the Rust
build, node) skips with a reason that names what is missing, in the form ``"<what> is not
installed: <the command that installs it>"``. CI (the environment variable ``CI`` set, as
``.ci/run`` and every hosted CI service set it) installs everything, so such a skip there means
a step of ``.ci/run`` broke or a new implementation was never installed: the test is reported
failed, with the skip's reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Mapping
from typing import Final

import pytest

#: the reason of a skip for something missing: "pydantic-ai is not installed: python tools/..."
MISSING: Final = re.compile(r"\bis not installed\b")


def in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """CI services set ``CI`` (``true``, ``1``); empty, ``0`` or ``false`` mean a local run."""
    return environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def fails_in_ci(reason: str, ci: bool) -> bool:
    return ci and MISSING.search(reason) is not None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if fails_in_ci(reason, in_ci()):
            report.outcome = "failed"
            report.longrepr = f"skipped in CI, where everything is installed: {reason}"
    return report
