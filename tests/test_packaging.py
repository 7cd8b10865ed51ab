"""Packaging: a built wheel carries the schemas and finds them without the source checkout.

Builds a wheel of the repository, installs it (not editable) into a fresh virtualenv, and imports
it from a directory outside the repository. The wheel carries the reader's C accelerators,
compiled by hatch_build.py, and not their sources, unless REASONING_REPLAY_ALLOW_PURE_PYTHON=1
allows a build without them (see tests/test_canonical_accelerator.py). No network:
``--no-build-isolation``, ``--no-deps``, ``--no-index``; the fresh venv sees the test venv's
packages through ``--system-site-packages``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import msgspec
import referencing
import yaml

REPO = Path(__file__).resolve().parents[1]

CHECK = textwrap.dedent(
    """
    import json, sys, sysconfig
    from pathlib import Path
    import reasoning_replay
    from reasoning_replay.history import history_files
    from reasoning_replay.record import reader
    from reasoning_replay.resources import data_root
    from reasoning_replay.schemas import ENVELOPE_SCHEMA_ID
    from reasoning_replay.suite.check import check_suite

    registry = reasoning_replay.schema_registry()
    envelope = registry.get_or_retrieve(ENVELOPE_SCHEMA_ID).value.contents
    golden = json.loads(Path(data_root(), "schema", "reasoning-replay.v1.schema.json").read_text())
    text = (
        '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":'
        '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"x"}],'
        '"encrypted_content":"c"}}'
    )
    print(json.dumps({
        "package": str(Path(reasoning_replay.__file__).resolve()),
        "data_root": str(data_root().resolve()),
        "purelib": str(Path(sysconfig.get_paths()["purelib"]).resolve()),
        "platlib": str(Path(sysconfig.get_paths()["platlib"]).resolve()),
        "prefix": str(Path(sys.prefix).resolve()),
        "envelope_id": envelope["$id"],
        "ids": sorted(str(uri) for uri in registry),
        "same_document": golden == envelope,
        "spec_present": Path(data_root(), "SPEC.md").is_file(),
        "check": [
            str(p) for p in check_suite(data_root() / "conformance", data_root() / "SPEC.md")[0]
        ],
        "resumable": reasoning_replay.parse_reasoning_replay_envelope(text).resumable,
        "valid": reasoning_replay.validator_for(ENVELOPE_SCHEMA_ID).is_valid(json.loads(text)),
        "accelerated": reader.ACCELERATED
        and reader.parse_strict_is_accelerated()
        and history_files._accelerator is not None,
        "accelerators": [
            str(Path(sys.modules[f"reasoning_replay.{name}"].__file__).resolve())
            for name in ("_canonical", "_strict", "_history")
            if f"reasoning_replay.{name}" in sys.modules
        ],
        "c_sources": sorted(
            path.name for path in Path(reasoning_replay.__file__).parent.glob("*.[ch]")
        ),
    }))
    """
)


def dependency_directories() -> list[str]:
    directories = []
    for module in (jsonschema, referencing, msgspec, yaml):
        assert module.__file__ is not None
        directory = str(Path(module.__file__).resolve().parents[1])
        if directory not in directories:
            directories.append(directory)
    return directories


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "REASONING_REPLAY_PURE_PYTHON"}
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    completed = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, (
        f"{args} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    )
    return completed


def test_installed_wheel_finds_its_data_inside_site_packages(tmp_path: Path) -> None:
    wheel_dir = tmp_path / "wheels"
    build_dir = tmp_path / "build"
    build_dir.mkdir()
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheel_dir),
            str(REPO),
        ],
        cwd=build_dir,
    )
    wheels = list(wheel_dir.glob("reasoning_replay-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(
        run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
        ).stdout.strip()
    )
    # the runtime dependencies as this interpreter has them; appended after the venv's own
    # site-packages, so they can never shadow the installed wheel
    (purelib / "zz_test_dependencies.pth").write_text(
        "".join(f"{directory}\n" for directory in dependency_directories()), encoding="utf-8"
    )
    run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            str(wheels[0]),
        ],
        cwd=tmp_path,
    )

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    completed = run([str(python), "-I", "-c", CHECK], cwd=outside)
    actual = json.loads(completed.stdout.strip().splitlines()[-1])

    venv_root = str(venv.resolve())
    repo_root = str(REPO)
    # A wheel with a compiled module installs into platlib, which is purelib on most systems.
    site = actual["platlib"] if actual["accelerated"] else actual["purelib"]
    assert actual["prefix"] == venv_root
    assert actual["package"].startswith(site + os.sep)
    assert actual["data_root"].startswith(site + os.sep)
    assert actual["data_root"].startswith(venv_root + os.sep)
    assert not actual["package"].startswith(repo_root + os.sep)
    assert not actual["data_root"].startswith(repo_root + os.sep)
    assert actual["envelope_id"] == "urn:reasoning-replay:schema:reasoning-replay.v1"
    assert actual["envelope_id"] in actual["ids"]
    assert len(actual["ids"]) == len(list((REPO / "schema").glob("*.schema.json")))
    assert actual["same_document"] is True
    assert actual["spec_present"] is True
    assert actual["check"] == []  # the traceability file ships too: no MUST rule is uncovered
    assert actual["resumable"] is True
    assert actual["valid"] is True
    if os.environ.get("REASONING_REPLAY_ALLOW_PURE_PYTHON") != "1":
        assert actual["accelerated"] is True, "the wheel was built without its C accelerators"
    assert actual["c_sources"] == []  # they ship in the sdist only
    if actual["accelerated"]:
        assert not wheels[0].name.endswith("-py3-none-any.whl"), "a compiled wheel is tagged"
        assert len(actual["accelerators"]) == 3
        for accelerator in actual["accelerators"]:
            assert accelerator.startswith(str(Path(actual["package"]).parent) + os.sep)
