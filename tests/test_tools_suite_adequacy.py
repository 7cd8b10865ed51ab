"""``tools/suite_adequacy.py``: named mutants of the reference are killed by MUST vectors, an
unchanged reference is not, the patches are undone after each mutant, and the tool fails on a
survivor. The whole catalogue runs in CI (.ci/run), not here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("suite_adequacy")


def by_name(tool: ModuleType, name: str) -> Any:
    return next(m for m in tool.CATALOGUE if m.name == name)


@pytest.mark.parametrize(
    ("name", "case"),
    [
        ("version-true-accepted", "read/version/boolean-true"),
        ("identity-without-provider", None),
        ("update-at-tool-continuations", None),
        ("status-not-stripped", None),
        ("user-message-records", "plan/adequacy/record-on-user-message-ignored"),
        ("trailing-placement", "plan/trailing-placement/change-during-tool-loop-not-appended"),
        ("items-form-reasoning-first", "replay/items-form/interleaved-reasoning-and-calls"),
        ("message-needs-type", "plan/message-short-form/genuine-turn-gets-its-update"),
    ],
)
def test_a_mutant_is_killed_by_must_vectors(tool: ModuleType, name: str, case: str | None) -> None:
    killed_by = tool.failing_must_cases(by_name(tool, name).apply)
    assert killed_by
    if case is not None:
        assert case in killed_by


def test_the_unchanged_reference_survives_so_the_tool_can_fail(tool: ModuleType) -> None:
    assert tool.failing_must_cases(tool.identity) == ()


def test_patches_are_undone_after_each_mutant(tool: ModuleType) -> None:
    assert tool.failing_must_cases(by_name(tool, "depth-31").apply)
    assert tool.failing_must_cases(None) == ()


def test_catalogue_reads_every_rule_its_must_vectors_test_otherwise(tool: ModuleType) -> None:
    names = [m.name for m in tool.CATALOGUE]
    assert len(names) == len(set(names)) >= 80
    assert tool.rules_tested(tool._suite()) <= {m.rule for m in tool.CATALOGUE}
    assert set(tool.EQUIVALENT) <= set(names)


def test_each_allowed_reading_quotes_a_sentence_spec_still_says(tool: ModuleType) -> None:
    spec = " ".join((TOOLS_DIR.parent / "SPEC.md").read_text(encoding="utf-8").split())
    for name, allowed in tool.EQUIVALENT.items():
        assert f'<a id="{allowed.rule}"></a>' in spec, name
        assert " ".join(allowed.sentence.split()) in spec, name


def test_tool_exits_1_and_names_a_survivor(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unchanged = tool.Mutant("no-change", "E1", "reads exactly as the reference", tool.identity)
    monkeypatch.setattr(tool, "CATALOGUE", [*tool.CATALOGUE, unchanged])
    assert tool.main(["-k", "no-change", "-k", "version-true-accepted", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "SURVIVOR no-change [E1]: reads exactly as the reference" in out
    assert "score: 1/2 mutants killed by MUST vectors" in out


def test_a_mutant_that_makes_the_reference_raise_is_an_error_not_a_kill(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(p: Any) -> None:
        def wrapper(data: Any, call: Any) -> Any:
            raise RuntimeError("mutant bug")

        p.wrap("telemetry", wrapper)

    crashing = tool.Mutant("crashing", "T1", "raises on every telemetry request", broken)
    monkeypatch.setattr(tool, "CATALOGUE", [*tool.CATALOGUE, crashing])
    outcome = tool.run_mutant("crashing")
    assert outcome.killed_by == () and outcome.error.startswith("raised on ")
    assert tool.main(["-k", "crashing", "--jobs", "1"]) == 1
    assert "ERROR crashing: raised on" in capsys.readouterr().out


def test_an_allowed_reading_that_a_vector_kills_is_a_stale_entry(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    allowed = tool.Allowed("E1", "sentence", "why")
    monkeypatch.setattr(tool, "EQUIVALENT", {"version-true-accepted": allowed})
    assert tool.main(["-k", "version-true-accepted", "--jobs", "1"]) == 1
    assert "STALE version-true-accepted" in capsys.readouterr().out


class _PoolRecorder:
    """A stand-in for the process pool: records how many workers were asked for and maps in
    this process."""

    sizes: ClassVar[list[int]] = []

    def __init__(self, max_workers: int) -> None:
        self.sizes.append(max_workers)

    def __enter__(self) -> _PoolRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Any, items: Any) -> Any:
        return map(fn, items)


QUICK_MUTANTS = ("version-true-accepted", "depth-31", "status-not-stripped")


@pytest.mark.parametrize(
    ("jobs", "cpus", "mutants", "workers"),
    [
        ("300", 64, 2, 2),  # no more than mutants
        ("300", 3, 3, 3),
        ("300", 2, 3, 2),  # no more than usable CPUs
        ("2", 1, 2, 1),  # one CPU: in this process
        ("2", 8, 1, 1),  # one mutant: in this process
    ],
)
def test_jobs_never_start_more_workers_than_cpus_or_mutants(
    tool: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    jobs: str,
    cpus: int,
    mutants: int,
    workers: int,
) -> None:
    _PoolRecorder.sizes.clear()
    monkeypatch.setattr(tool, "ProcessPoolExecutor", _PoolRecorder)
    monkeypatch.setattr(tool, "usable_cpus", lambda: cpus)
    names = [arg for name in QUICK_MUTANTS[:mutants] for arg in ("-k", name)]
    assert tool.main([*names, "--jobs", jobs]) == 0
    assert _PoolRecorder.sizes == ([workers] if workers > 1 else [])
    assert f"{workers} jobs)" in capsys.readouterr().out


@pytest.mark.parametrize("jobs", ["0", "-3", "many"])
def test_jobs_below_one_is_a_usage_error(
    tool: ModuleType, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        tool.main(["--jobs", jobs])
    assert exited.value.code == 2
    assert "--jobs" in capsys.readouterr().err
