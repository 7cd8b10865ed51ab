"""The pre-commit hooks of .pre-commit-hooks.yaml: each matches only its own kind of file.

In a scratch git repository holding a ``package.json`` and a real history, the hooks check the
history and never the ``package.json`` (issue 21: the single hook matched every ``*.json`` and
failed on it). ``pre-commit try-repo`` installs a ``language: python`` hook from the package
index, which a test cannot reach offline; so the tests run the real pre-commit over the same
hook definitions as ``repo: local`` hooks of ``language: system`` (its file selection, its
argument passing, offline), and drive each hook's entry exactly as pre-commit does: the
repository's files selected by ``files`` with ``re.search``, then ``entry``, ``args`` and the
file names.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from reasoning_replay import canonicalize_completed_reasoning_output_item
from support import GOLDEN_SDK_ITEM

REPO = Path(__file__).resolve().parents[1]
HOOKS: list[dict[str, Any]] = yaml.safe_load(
    (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
)
SESSION = ".fast-agent/sessions/2612011000-abc"
GUARD_SECONDS = 120


def hook(hook_id: str) -> dict[str, Any]:
    (found,) = [h for h in HOOKS if h["id"] == hook_id]
    return found


def selected(definition: dict[str, Any], paths: list[str]) -> list[str]:
    """pre-commit's selection: ``files`` searched in each path, ``exclude`` (default ``^$``)
    not found; no ``types`` beyond the default ``file``."""
    assert set(definition.get("types", ["file"])) == {"file"}
    exclude = definition.get("exclude", "^$")
    return [p for p in paths if re.search(definition["files"], p) and not re.search(exclude, p)]


def real_history() -> str:
    """A history as fast-agent 0.10.48 saves it: indented, a user turn and an assistant turn
    whose replay channel holds the canonical envelope of a real reasoning item."""
    captured = canonicalize_completed_reasoning_output_item(
        dict(GOLDEN_SDK_ITEM), source="response.output_item.done"
    )
    assert captured.envelope_text is not None
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "What is 2 + 2?"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "4"}],
            "channels": {
                "openai-reasoning-encrypted": [{"type": "text", "text": captured.envelope_text}]
            },
            "stop_reason": "endTurn",
        },
    ]
    return json.dumps({"messages": messages}, indent=2) + "\n"


PATHS = [
    "package.json",
    "tsconfig.json",
    "tests/fixtures/corpus.json",
    "history_notes.md",
    "history_dev.json",
    "agents/history_dev_previous.json",
    "archive/compacted_20261201_abc_dev.json",
    f"{SESSION}/history_dev.json",
    f"{SESSION}/session.json",
    "exports/myhistory_dev.json",
]


def test_each_hook_selects_only_its_own_kind_of_file() -> None:
    assert selected(hook("reasoning-replay-histories"), PATHS) == [
        "history_dev.json",
        "agents/history_dev_previous.json",
        "archive/compacted_20261201_abc_dev.json",
        f"{SESSION}/history_dev.json",
    ]
    assert selected(hook("reasoning-replay-sessions"), PATHS) == [
        f"{SESSION}/history_dev.json",
        f"{SESSION}/session.json",
    ]


def test_every_hook_checks_content_not_permissions_and_ends_the_options() -> None:
    for definition in HOOKS:
        assert shlex.split(definition["entry"]) == ["conformance", "validate"]
        args = definition["args"]
        assert args[:3] == ["--permissions", "ignore", "--"], definition["id"]
        assert definition["language"] == "python"


def git(cwd: Path, *argv: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=GUARD_SECONDS,
    )
    return result.stdout


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A git repository holding a package.json and a real history, checked out as git does
    (mode 0644), in a session directory with its session.json."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"name": "web", "version": "1.0.0"}\n')
    (repo / SESSION).mkdir(parents=True)
    (repo / SESSION / "history_dev.json").write_text(real_history())
    agents = {"dev": {"provider": "openai", "history_file": "history_dev.json"}}
    (repo / SESSION / "session.json").write_text(json.dumps({"continuation": {"agents": agents}}))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a history and a package.json")
    return repo


def environment(tmp_path: Path) -> dict[str, str]:
    """``conformance`` of this environment first on PATH, as an installed hook finds it."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}


def run_as_pre_commit_does(repo: Path, definition: dict[str, Any], env: dict[str, str]) -> Any:
    files = selected(definition, git(repo, "ls-files").splitlines())
    argv = [*shlex.split(definition["entry"]), *definition["args"]]
    if definition["pass_filenames"]:
        argv += files
    return files, subprocess.run(
        argv, cwd=repo, env=env, capture_output=True, text=True, timeout=GUARD_SECONDS, check=False
    )


@pytest.mark.parametrize("hook_id", [h["id"] for h in HOOKS])
def test_each_hook_entry_checks_the_history_and_never_the_package_json(
    scratch: Path, tmp_path: Path, hook_id: str
) -> None:
    files, result = run_as_pre_commit_does(scratch, hook(hook_id), environment(tmp_path))
    assert "package.json" not in files
    assert result.returncode == 0, result.stdout + result.stderr
    assert "history_dev.json" in result.stdout and "package.json" not in result.stdout
    (scratch / SESSION / "history_dev.json").write_text('{"messages": [{"role": "robot"}]}')
    _, broken = run_as_pre_commit_does(scratch, hook(hook_id), environment(tmp_path))
    assert broken.returncode == 1 and "history_malformed" in broken.stdout


def local_config() -> str:
    """The hooks of .pre-commit-hooks.yaml as ``repo: local`` hooks that pre-commit runs from
    PATH (``language: system``): the same ids, entries, arguments and file patterns."""
    hooks = [{**h, "language": "system"} for h in HOOKS]
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)


def test_pre_commit_runs_the_hooks_on_the_history_and_not_on_the_package_json(
    scratch: Path, tmp_path: Path
) -> None:
    pytest.importorskip("pre_commit")
    config = tmp_path / "pre-commit-config.yaml"
    config.write_text(local_config())
    argv = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"]
    result = subprocess.run(
        [*argv, "--config", str(config)],
        cwd=scratch,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("Passed") == 2
    assert f"ok    {SESSION}/history_dev.json" in result.stdout  # the histories hook, by name
    assert f"ok    {SESSION}/session.json" in result.stdout  # the sessions hook, whole
    assert "package.json" not in result.stdout
