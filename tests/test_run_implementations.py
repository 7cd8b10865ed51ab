"""tools/run_implementations.py and tools/known_implementations.py: which implementations there are,
how each runs, and that a run which could not happen never replaces a report; and the CI rule of
tests/conftest.py (a skip for something not installed fails in CI)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import fails_in_ci, in_ci

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))
known: ModuleType = importlib.import_module("known_implementations")
runner: ModuleType = importlib.import_module("run_implementations")


def test_the_known_implementations_come_in_the_pages_order() -> None:
    keys = [entry.key for entry in known.known()]
    assert keys[:4] == ["reference", "javascript", "rust", "fast-agent"]
    frameworks = [entry.key for entry in known.known() if entry.framework]
    assert frameworks == sorted(frameworks)
    assert {"langchain-openai", "pydantic-ai", "vercel-ai"} <= set(frameworks)


def test_every_framework_with_an_environment_is_known_with_its_own_command() -> None:
    served = sorted(
        p.parent.name for p in REPO.glob("conformance/implementations/*/environment.json")
    )
    by_key = known.by_key()
    for name in served:
        entry = by_key[name]
        here = f"conformance/implementations/{name}"
        assert entry.framework and entry.expectations == f"{here}/expectations.yaml"
        assert any(part.startswith(f"{here}/adapter.") for part in entry.adapter)
        assert (REPO / entry.expectations).is_file()
    assert by_key["pydantic-ai"].adapter[0] == ".implementations/pydantic-ai/bin/python"
    assert by_key["vercel-ai"].ready == "conformance/implementations/vercel-ai/node_modules"


def test_every_known_directory_and_expectations_file_exists() -> None:
    for entry in known.known():
        assert (REPO / entry.directory).is_dir(), entry.directory
        if entry.expectations is not None:
            assert (REPO / entry.expectations).is_file(), entry.expectations


def test_the_run_command_is_conformance_run_with_the_adapter_its_expectations_and_a_report(
    tmp_path: Path,
) -> None:
    rust = known.by_key()["rust"]
    command = runner.run_command(rust, tmp_path / "rust.json")
    assert command[1:4] == ["-m", "reasoning_replay.cli.main", "run"]
    assert command[4:6] == ["--impl", rust.adapter[0]]
    assert "--expectations" not in command  # it passes every case
    assert f"json:{tmp_path / 'rust.json'}" in command
    agent = known.by_key()["fast-agent"]
    command = runner.run_command(agent, tmp_path / "fast-agent.json")
    assert command[6:8] == ["--expectations", agent.expectations]
    reference = runner.run_command(known.by_key()["reference"], tmp_path / "r.json")
    assert "--impl" not in reference and "--expectations" not in reference


def test_an_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main(["no-such-implementation"]) == 2
    assert "unknown no-such-implementation" in capsys.readouterr().err


def test_a_missing_environment_is_named_and_the_report_is_kept(tmp_path: Path) -> None:
    (tmp_path / "absent.json").write_text("old", encoding="utf-8")
    entry = known.Known(
        key="absent",
        directory="conformance/",
        adapter=("./nowhere",),
        expectations=None,
        ready="no/such/environment",
        prepare="make-it --now",
    )
    result = runner.run_one(entry, tmp_path)
    assert result.status == -1
    assert "no/such/environment" in result.summary and "make-it --now" in result.summary
    assert (tmp_path / "absent.json").read_text(encoding="utf-8") == "old"


def test_a_run_that_cannot_start_leaves_the_report_in_place(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("old", encoding="utf-8")
    entry = known.Known(
        key="broken",
        directory="conformance/",
        adapter=(sys.executable, "-c", "import sys; sys.exit(3)"),
        expectations=None,
        ready=None,
        prepare=None,
    )
    result = runner.run_one(entry, tmp_path)
    assert result.status == 2, result.summary
    assert "left as it was" in result.summary
    assert (tmp_path / "broken.json").read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json"]


def test_a_completed_run_replaces_the_report(tmp_path: Path) -> None:
    entry = known.Known(
        key="reference",
        directory="reference_impl/reasoning_replay/",
        adapter=(),
        expectations=None,
        ready=None,
        prepare=None,
    )
    result = runner.run_one(entry, tmp_path)
    assert result.status == 0, result.summary
    written = json.loads((tmp_path / "reference.json").read_text(encoding="utf-8"))
    assert written["implementation"]["name"] == "reasoning-replay-reference"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("1", True), ("yes", True), ("", False), ("0", False), ("false", False)],
)
def test_ci_is_read_from_the_ci_variable(value: str, expected: bool) -> None:
    assert in_ci({"CI": value}) is expected
    assert in_ci({}) is False


def test_in_ci_a_skip_for_something_not_installed_fails_and_any_other_skip_stays() -> None:
    missing = "pydantic-ai is not installed: python tools/install_implementation.py pydantic-ai"
    assert fails_in_ci(missing, ci=True)
    assert not fails_in_ci(missing, ci=False)
    assert not fails_in_ci("needs O_TMPFILE (Linux)", ci=True)


def test_a_wheelhouse_is_one_per_requirements_python_and_platform(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install: ModuleType = importlib.import_module("install_implementation")
    key = install.wheelhouse_key(b"a==1\n", (3, 11), "linux-x86_64")
    assert key == install.wheelhouse_key(b"a==1\n", (3, 11), "linux-x86_64")
    others = {
        install.wheelhouse_key(b"a==2\n", (3, 11), "linux-x86_64"),
        install.wheelhouse_key(b"a==1\n", (3, 12), "linux-x86_64"),
        install.wheelhouse_key(b"a==1\n", (3, 11), "macosx-14.0-arm64"),
    }
    assert key not in others and len(others) == 3
    monkeypatch.setenv("REASONING_REPLAY_WHEELS", str(tmp_path))
    assert install.wheel_cache() == tmp_path
    monkeypatch.delenv("REASONING_REPLAY_WHEELS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert install.wheel_cache() == tmp_path / "xdg" / "reasoning-replay" / "wheels"
