"""tools/release.py: every artifact is built and checked where a user would use it (the wheel in a
scratch virtualenv, the npm tarball in a scratch project), and the manifest's digests are the
files'. The whole release runs here (under a minute on 2 cores), dependencies from this
interpreter so that it needs no network."""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS_DIR = REPO / "tools"
KINDS = {
    "python-sdist",
    "python-wheel-abi3",
    "python-wheel-pure",
    "npm-package",
    "vectors-bundle",
    "schema-bundle",
    "code-registry",
    "code-registry-schema",
    "versions",
}


def release_module() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("release")


def test_release_builds_checks_and_lists_every_artifact_with_its_digest(tmp_path: Path) -> None:
    out = tmp_path / "dist"

    completed = subprocess.run(
        [sys.executable, str(TOOLS_DIR / "release.py"), "--out", str(out), "--deps-from-here"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    # the runs of the abi3 wheel, the pure wheel and the npm package
    assert completed.stdout.count("diagnostics: ") == 3
    assert "abi3 wheel: conformance run ... *.abi3.so; PASSED" in completed.stdout
    assert "pure wheel: conformance run ... no accelerator; PASSED" in completed.stdout
    assert completed.stdout.count("unexpected") == completed.stdout.count(" 0 unexpected")
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert {entry["kind"] for entry in manifest["artifacts"]} == KINDS
    assert manifest["versions"] == json.loads((REPO / "versions.json").read_text("utf-8"))
    sums = []
    for entry in manifest["artifacts"]:
        data = (out / entry["file"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
        sums.append(f"{entry['sha256']}  {entry['file']}\n")
    assert (out / "SHA256SUMS").read_text("utf-8") == "".join(sums)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*(e["file"] for e in manifest["artifacts"]), "manifest.json", "SHA256SUMS"]
    )
    # the sdist holds the repository's files only: no local environment, cache or build output
    # of the checkout it was built in (CI's clone holds .ci-venv, the frameworks' environments,
    # the Rust build and the tests' caches)
    sdist = next(e["file"] for e in manifest["artifacts"] if e["kind"] == "python-sdist")
    with tarfile.open(out / sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()}
    assert sorted(members - _tracked_files() - {"PKG-INFO"}) == []
    # the npm pack step leaves nothing behind in the repository
    assert not (REPO / "conformance/adapters/js/vectors.bundle.json").exists()
    assert not (REPO / "conformance/adapters/js/LICENSE").exists()


def _tracked_files() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode("utf-8")
    return {name for name in listed.split("\0") if name}


def test_output_directory_with_files_of_no_release_is_refused_and_left_alone(
    tmp_path: Path,
) -> None:
    release = release_module()
    stray = tmp_path / "notes.txt"
    stray.write_text("mine", encoding="utf-8")

    with pytest.raises(release.ReleaseError, match=r"notes\.txt.*--out"):
        release.prepare_out(tmp_path)

    assert stray.read_text(encoding="utf-8") == "mine"


def test_a_previous_releases_files_are_removed_before_a_new_build(tmp_path: Path) -> None:
    release = release_module()
    for name in ("old.whl", "manifest.json", "SHA256SUMS"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    manifest = {"versions": {}, "artifacts": [{"file": "old.whl"}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    release.prepare_out(tmp_path)

    assert list(tmp_path.iterdir()) == []


def test_generated_files_are_current() -> None:
    release = release_module()

    stale = release.stale(release.generated_files(release.versions()))

    assert [f"{g.path.relative_to(REPO)}: run `{g.how}`" for g in stale] == [], (
        "generated files are stale"
    )


def test_the_code_registry_is_the_spec_table_with_the_files_severities() -> None:
    release = release_module()
    spec = (
        "<!-- registry:start -->\n| code | rule | meaning |\n| --- | --- | --- |\n"
        "| `new_code` | E1 | A new code. |\n| `kept_code` | H3 | Kept. |\n<!-- registry:end -->\n"
    )
    current = {"codes": [{"code": "kept_code", "severity": "warning"}, {"code": "gone_code"}]}

    text = release.codes_registry_text(spec, current, release.versions())

    assert json.loads(text)["codes"] == [
        {"code": "new_code", "rule": "E1", "summary": "A new code."},
        {"code": "kept_code", "rule": "H3", "severity": "warning", "summary": "Kept."},
    ]


def test_the_abi3_wheel_is_named_for_the_limited_api_the_build_hook_uses() -> None:
    release = release_module()
    sys.path.insert(0, str(REPO))
    try:
        hatch_build = importlib.import_module("hatch_build")
    finally:
        sys.path.remove(str(REPO))

    assert release.ABI3_INTERPRETER == hatch_build.ABI3_INTERPRETER
    assert hatch_build.LIMITED_API == "0x030B0000"  # CPython 3.11, requires-python's bound
    assert release.REQUIRED[0] == (3, 11)


def test_interpreters_that_cannot_be_checked_are_refused(tmp_path: Path) -> None:
    release = release_module()
    not_python = tmp_path / "python3"
    not_python.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    not_python.chmod(0o755)

    with pytest.raises(release.ReleaseError, match="not a CPython interpreter that runs"):
        release.interpreters([not_python], deps_from_here=False)
    with pytest.raises(release.ReleaseError, match="drop --python"):
        release.interpreters([Path(sys.executable)], deps_from_here=True)
    (here,) = release.interpreters([], deps_from_here=True)
    assert here.version == sys.version_info[:2]
