"""The C accelerators built on the limited API (``REASONING_REPLAY_BUILD=abi3``, the modules of the
one wheel for every CPython >= 3.11) agree with the Python path exactly as the native build does:
the differential tests of every accelerator run again, with a copy of the package whose compiled
modules are the abi3 ones. A ``str`` with no UTF-8 form (a lone surrogate), which that build
cannot read, is left to the Python path and gets the same verdict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "reference_impl" / "reasoning_replay"
DIFFERENTIAL_TESTS = (
    "tests/test_canonical_accelerator.py",
    "tests/test_strict_accelerator.py",
    "tests/test_envelope_accelerator.py",
    "tests/test_history_accelerator.py",
)
GUARD_SECONDS = 900  # a hang guard, not a measurement


def hatch_build_module() -> object:
    sys.path.insert(0, str(REPO))
    try:
        import hatch_build  # noqa: PLC0415 - the build hook of this checkout
    finally:
        sys.path.remove(str(REPO))
    return hatch_build


@pytest.fixture(scope="module")
def abi3_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package whose accelerators are compiled on the limited API, its data files
    linked in as a wheel holds them."""
    scratch = tmp_path_factory.mktemp("abi3")
    hatch_build = hatch_build_module()
    built: list[Path] = hatch_build.compile_extensions(  # type: ignore[attr-defined]
        REPO, scratch / "lib", scratch / "temp", limited_api=True
    )
    site = scratch / "site"
    shutil.copytree(
        PACKAGE,
        site / "reasoning_replay",
        ignore=shutil.ignore_patterns("*.so", "*.c", "*.h", "__pycache__"),
    )
    for path in built:
        shutil.copy2(path, site / "reasoning_replay" / path.name)
    data = site / "reasoning_replay" / "_data"  # where a wheel holds them (resources.py)
    data.mkdir()
    for name in ("schema", "conformance", "SPEC.md", "versions.json"):
        (data / name).symlink_to(REPO / name)
    return site


def run_with(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"REASONING_REPLAY_PURE_PYTHON"}}
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )


def test_the_copy_imports_the_abi3_modules(abi3_site: Path) -> None:
    check = (
        "import reasoning_replay._canonical as c, reasoning_replay._strict as s\n"
        "import reasoning_replay._history as h\n"
        "from reasoning_replay.record import reader\n"
        "print(c.__file__, s.__file__, h.__file__, reader.ACCELERATED,"
        " reader.parse_strict_is_accelerated())"
    )

    completed = run_with(abi3_site, "-c", check)

    canonical, strict, history, accelerated, strict_accelerated = completed.stdout.split()
    assert canonical.startswith(str(abi3_site)) and canonical.endswith("_canonical.abi3.so")
    assert strict.startswith(str(abi3_site)) and strict.endswith("_strict.abi3.so")
    assert history.startswith(str(abi3_site)) and history.endswith("_history.abi3.so")
    assert (accelerated, strict_accelerated) == ("True", "True")


def test_a_str_without_a_utf8_form_is_left_to_the_python_path(abi3_site: Path) -> None:
    lone = (
        '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":'
        '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"\ud800"}],'
        '"encrypted_content":"c"}}'
    )
    deep = "[" * 40 + '"\ud800"' + "]" * 40
    history = '{"messages":[{"role":"user","content":["\ud800"]}]}'
    check = (  # repr() spells a lone surrogate as an escape the child's parser reads back
        "import reasoning_replay._canonical as c, reasoning_replay._strict as s\n"
        "import reasoning_replay._history as h\n"
        "from reasoning_replay import parse_reasoning_replay_envelope as read\n"
        "from reasoning_replay.history.history_files import read_message_channels\n"
        f"lone, deep, history = {lone!r}, {deep!r}, {history!r}\n"
        "print(c.read_canonical(lone), s.parse(lone), s.parse(deep), s.read_envelope(lone),"
        " h.read_history(history, {}, None))\n"
        "print(read(lone).code, read(deep).code, read_message_channels(history).code.value)\n"
    )

    completed = run_with(abi3_site, "-c", check)

    assert completed.returncode == 0, completed.stderr
    undecided, verdicts = completed.stdout.splitlines()
    assert undecided == "None None None None None"
    # SPEC E6: step 1 before step 2; SPEC H3: a history text given as characters with a surrogate
    assert verdicts == "json_invalid_unicode limit_exceeded history_unreadable"


def test_the_differential_tests_pass_on_the_abi3_build(abi3_site: Path) -> None:
    completed = run_with(
        abi3_site, "-m", "pytest", "-q", "-p", "no:cacheprovider", *DIFFERENTIAL_TESTS
    )

    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout.splitlines()[-1]
    assert "skipped" not in completed.stdout.splitlines()[-1]


def test_the_benchmark_times_the_three_builds_and_finds_their_verdicts_equal(
    tmp_path: Path,
) -> None:
    """tools/bench_abi3.py on 100 records, one round: the figures' shape, not their values."""
    out = tmp_path / "figures.json"

    completed = subprocess.run(
        [
            sys.executable,
            "tools/bench_abi3.py",
            "--count",
            "100",
            "--rounds",
            "1",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )

    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    figures = json.loads(out.read_text(encoding="utf-8"))
    builds, workloads = ("full", "abi3", "none"), ("str", "ascii", "bytes")
    assert set(figures["trials"]) == {f"{b}_{w}" for b in builds for w in workloads}
    assert set(figures["ratios"]) == {
        f"{b}_over_full_{w}" for b in ("abi3", "none") for w in workloads
    }
    assert figures["records"] == 100
    assert 0 < figures["ascii_records"] < 100
