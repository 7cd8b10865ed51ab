"""Every ``python`` and ``sh`` block of README.md runs exactly as written, in a scratch directory
holding the files it names (a history, an adapter, logs), and exits 0; the few a test cannot run
are listed here with the reason. A new block that is neither run nor listed fails the test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay import canonicalize_completed_reasoning_output_item
from support import GOLDEN_SDK_ITEM, envelope_text, history_of_blocks

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)

# Blocks a test does not run, by their first line, and why.
NOT_RUN = {
    "pip install . && conformance run": (
        "installs this checkout and runs the whole test suite, this test included: what CI does"
    ),
    "pip install reasoning-replay==0.1.0   # pins the suite; until it is published, the wheel of "
    "tools/release.py": "installs from the package index, where the package is not published yet",
    'conformance smoke --impl "./my-adapter"          # handshake, message shapes, one case per '
    "operation": (
        "runs the whole suite four times through an adapter, once with a process per case "
        "(minutes); tests/test_suite_cli.py runs each of these commands on a small suite"
    ),
}


def readme_blocks() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [(lang, body) for lang, body in BLOCK.findall(text)]


def first_line(body: str) -> str:
    return next(line for line in body.splitlines() if line.strip())


def block_id(lang: str, body: str) -> str:
    return f"{lang}: {first_line(body)[:60]}"


RUN = [(lang, body) for lang, body in readme_blocks() if first_line(body) not in NOT_RUN]


def test_every_block_is_run_or_listed_with_a_reason() -> None:
    listed = {first_line(body) for _, body in readme_blocks()} & set(NOT_RUN)
    assert listed == set(NOT_RUN), "a NOT_RUN entry names no README block"
    assert len(RUN) >= 8  # the walk finds the blocks it should run


def envelope_dict() -> dict[str, Any]:
    captured = canonicalize_completed_reasoning_output_item(
        dict(GOLDEN_SDK_ITEM), source="response.output_item.done"
    )
    assert captured.envelope_text is not None
    value: dict[str, Any] = json.loads(captured.envelope_text)
    return value


def scratch(root: Path) -> dict[str, str]:
    """The files and directories README's commands name, private as H4 asks; the environment
    they run in (this environment's ``conformance`` on PATH, HOME in the scratch directory)."""
    root.chmod(0o700)
    history = history_of_blocks(envelope_text("rs_a", "cipher-a"))
    for path in (
        root / "history_dev.json",
        root / "sessions" / "s1" / "history_dev.json",
        root / "home" / ".fast-agent" / "sessions" / "s1" / "history_dev.json",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(history)
        path.chmod(0o600)
        path.parent.chmod(0o700)
    (root / "record.json").write_text(json.dumps(envelope_dict()))
    (root / "schema").symlink_to(REPO / "schema")
    for directory in ("logs", "captures"):
        (root / directory).mkdir()
        (root / directory / "app.log").write_text("started\nrequest sent: 3 items\n")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "HOME": str(root / "home")}


def python_names() -> dict[str, Any]:
    """The names README's Python blocks take as given: an output item, a store, a block's text,
    an envelope, a request body and stream events."""
    stored: list[str] = []
    envelope = envelope_dict()
    return {
        "output_item": dict(GOLDEN_SDK_ITEM),
        "store": stored.append,
        "block_text": json.dumps(envelope, separators=(",", ":")),
        "envelope": envelope,
        "request_body": {"model": "gpt-5", "input": [], "store": False},
        "stream_events": [{"type": "response.output_item.done", "item": dict(GOLDEN_SDK_ITEM)}],
    }


@pytest.mark.parametrize(("lang", "body"), RUN, ids=[block_id(lang, body) for lang, body in RUN])
def test_the_block_runs_as_written(
    lang: str, body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = scratch(tmp_path)
    if lang == "python":
        monkeypatch.chdir(tmp_path)
        namespace = python_names()
        exec(compile(body, "README.md", "exec"), namespace)
        return
    assert shutil.which("bash") is not None
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", body],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
