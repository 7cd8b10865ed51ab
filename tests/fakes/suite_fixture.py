"""A tiny conformance suite (operation ``echo``) and SPEC.md written into a temporary directory.

Tests build the suite they need with :func:`write_suite`; nothing depends on the real vectors or
the real SPEC.md.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import yaml
from reasoning_replay.suite.forms import form_tags
from reasoning_replay.suite.items_form import vector_form

FAKE = Path(__file__).with_name("fake_adapter.py")

SPEC = """# Fixture spec

<a id="intro"></a>
## Intro

Words like MUST in a section introduction do not make a rule.

<a id="X1"></a>**X1. Echo.** An implementation MUST echo the value.

<a id="X2"></a>**X2. Reject.** An implementation MUST reject with the given code.

<a id="X3"></a>**X3. Style.** An implementation SHOULD be quick.

```
<a id="NOT-AN-ANCHOR"></a>**Z9.** examples in code MUST be ignored
```

<!-- registry:start -->
| code | rule | meaning |
| --- | --- | --- |
| `bad_value` | X2 | The value is bad. |
| `other_code` | X2 | Another reason. |
<!-- registry:end -->
"""


def case(
    case_id: str,
    *,
    value: Any = 1,
    reject: str | None = None,
    spec: str = "X1",
    level: str = "MUST",
    tags: list[str] | None = None,
    operation: str = "echo",
    expect_code: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A vector case: by default echo ``value`` and expect it back. Its form tag (SPEC CL4) is
    the computed one unless ``tags`` holds one."""
    inp: dict[str, Any] = {"value": value}
    if reject is not None:
        inp = {"reject": reject}
    expect: dict[str, Any]
    if expect_code is not None:
        expect = {"reject": {"code": expect_code}}
    elif reject is not None:
        expect = {"reject": {"code": reject}}
    else:
        expect = {"output": {"value": value}}
    doc = {
        "id": case_id,
        "description": f"case {case_id}",
        "spec": spec,
        "operation": operation,
        "level": level,
        "tags": _with_form_tag(tags or [], operation, inp),
        "input": inp,
        "expect": expect,
    }
    doc.update(extra)
    return doc


def _with_form_tag(tags: list[str], operation: str, inp: dict[str, Any]) -> list[str]:
    if form_tags(tags):
        return tags
    return [*tags, vector_form(operation, inp).tag]


def write_suite(root: Path, files: dict[str, list[dict[str, Any]]], *, spec: str = SPEC) -> Path:
    """Write conformance/{VERSION,vectors/...} and SPEC.md under root; return conformance/."""
    conf = root / "conformance"
    (conf / "vectors").mkdir(parents=True, exist_ok=True)
    (conf / "VERSION").write_text("9.9.9\n")
    for rel, cases in files.items():
        path = conf / "vectors" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            yaml.safe_dump({"description": f"file {rel}", "cases": cases}, sort_keys=False)
        )
    (root / "SPEC.md").write_text(spec)
    return conf


def fake_cmd(*flags: str) -> str:
    """The --impl string running the fake adapter with flags."""
    return shlex.join([sys.executable, str(FAKE), *flags])


def fake_argv(*flags: str) -> list[str]:
    return [sys.executable, str(FAKE), *flags]


def logged_pids(log: Path) -> list[int]:
    """Every pid the fake adapter's --grandchild FILE recorded (adapters and their children)."""
    return [int(p) for p in log.read_text().split()] if log.exists() else []


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (an orphan is not always reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def kill_logged(log: Path) -> None:
    """Clean up after a failed test: SIGKILL whatever logged process still runs."""
    for pid in logged_pids(log):
        if running(pid):
            os.kill(pid, signal.SIGKILL)
