"""Build every release artifact into one directory and check each one where a user would use it.

    python tools/release.py [--out DIR] [--python PATH ...] [--deps-from-here]
    python tools/release.py --sync          # rewrite the generated files, then stop
    python tools/release.py --check-sync    # only say whether a generated file is stale

Artifacts (versions from versions.json): the sdist; two wheels built from that sdist, one for
every CPython >= 3.11 (the C accelerators on the limited API, tagged ``cp311-abi3-<platform>``)
and a pure-Python one (``py3-none-any``, for any other Python; hatch_build.py,
``REASONING_REPLAY_BUILD``); the npm package of the JavaScript implementation, the vectors bundle,
the schema bundle, the code registry and its schema, versions.json itself; ``manifest.json`` lists
them with their SHA-256 and size, and ``SHA256SUMS`` says the same for ``sha256sum -c``. Checks:
the generated files are current; the abi3 wheel, installed in a scratch virtualenv of every
interpreter to check (``--python``; by default CPython 3.11, 3.12 and 3.13 as pyenv or ``PATH``
has them, of which 3.11 and 3.13 must be there), imports its accelerators and runs
``conformance run`` (every vector, in process); so does the pure wheel, without any; the npm
tarball, installed in a scratch directory, passes the suite through its adapter and serves its
``node:test`` helper by the package's name; the schema bundle alone validates a record with the
network refused, and the code registry validates against its schema.

``--deps-from-here`` gives the scratch virtualenvs this interpreter's runtime dependencies instead
of installing them from the package index (offline; the tests use it), and so checks the wheels
on this interpreter only (the dependencies' compiled modules are its own). Generated files: the
schema bundle (from ``schema/*.schema.json``), the code registry (from SPEC §12's table;
severities are kept from the file) and the README's version table (from versions.json);
``conformance bundle`` writes the vectors bundle.

Exit status: 0 every artifact built and checked; 1 a check failed; 2 usage error or a tool missing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import jsonschema
import msgspec
import referencing
import yaml
from reasoning_replay.atomic_files import replace_file
from reasoning_replay.schemas import BUNDLE_FILE_NAME, bundle_text, schema_documents
from reasoning_replay.suite.specdoc import parse_spec
from reasoning_replay.suite.vectors import BUNDLE_NAME, load_suite
from reasoning_replay.suite.vectors import bundle_text as vectors_bundle_text
from reasoning_replay.versions import (
    NPM_PACKAGE_NAME,
    Versions,
    versions,
    versions_markdown,
    versions_text,
)

T = TypeVar("T")
ABI3_INTERPRETER: Final = "cp311"  # hatch_build.ABI3_INTERPRETER (tests/test_release.py)
REPO: Final = Path(__file__).resolve().parents[1]
JS_DIR: Final = REPO / "conformance" / "adapters" / "js"
README_BLOCK: Final = re.compile(r"(<!-- versions:start -->\n)(.*?)(\n<!-- versions:end -->)", re.S)
SYNC: Final = "python tools/release.py --sync"
CODES_PATH: Final = REPO / "schema" / "diagnostic-codes.v1.json"
CODES_REGISTRY_NAME: Final = "reasoning-replay diagnostic codes"
MANIFEST: Final = "manifest.json"
SUMS: Final = "SHA256SUMS"
STEP_TIMEOUT: Final = 600.0
GOLDEN_RECORD: Final = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":'
    '"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],'
    '"encrypted_content":"c"}}'
)


class ReleaseError(Exception):
    """A step that failed: its message says what, and what to do."""


@dataclass(frozen=True, slots=True)
class Artifact:
    path: Path
    kind: str


# ---------------------------------------------------------------------------------------------
# Generated files


@dataclass(frozen=True, slots=True)
class Generated:
    """A file the repository holds but a generator writes: where, and the text it must have."""

    path: Path
    expected: str
    how: str  # the command that writes it

    @property
    def ours(self) -> bool:
        return self.how == SYNC


def codes_registry_text(spec: str, current: Mapping[str, Any], table: Versions) -> str:
    """schema/diagnostic-codes.v1.json as SPEC §12 states the registry: code, rule and summary
    from its table, in its order, one entry a line; a code keeps the severity (SPEC H3) the
    current file gives it, since the table has no such column."""
    severities = {e["code"]: e["severity"] for e in current.get("codes", ()) if "severity" in e}
    entries = []
    for row in parse_spec(spec).registry:
        entry = {"code": row.code, "rule": row.anchor}
        if row.code in severities:
            entry["severity"] = severities[row.code]
        entries.append(entry | {"summary": row.meaning})
    header = {
        "registry": CODES_REGISTRY_NAME,
        "version": table.codes_registry,
        "spec": "SPEC.md#codes",
    }
    lines = [f"  {json.dumps(name)}: {json.dumps(value)}," for name, value in header.items()]
    rows = ",\n".join(f"    {json.dumps(entry, ensure_ascii=False)}" for entry in entries)
    return "{\n" + "\n".join(lines) + '\n  "codes": [\n' + rows + "\n  ]\n}\n"


def generated_files(table: Versions) -> list[Generated]:
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    suite = load_suite([REPO / "conformance" / "vectors"])
    spec = (REPO / "SPEC.md").read_text(encoding="utf-8")
    codes = json.loads(CODES_PATH.read_text(encoding="utf-8"))
    return [
        Generated(CODES_PATH, codes_registry_text(spec, codes, table), SYNC),
        Generated(
            REPO / "schema" / BUNDLE_FILE_NAME,
            bundle_text(schema_documents()),
            SYNC,
        ),
        Generated(
            readme,
            README_BLOCK.sub(
                lambda m: m.group(1) + versions_markdown(table) + m.group(3), text, count=1
            ),
            SYNC,
        ),
        Generated(
            REPO / "conformance" / BUNDLE_NAME, vectors_bundle_text(suite), "conformance bundle"
        ),
    ]


def stale(files: Sequence[Generated]) -> list[Generated]:
    return [g for g in files if g.path.read_text(encoding="utf-8") != g.expected]


def sync(files: Sequence[Generated]) -> list[Path]:
    """Rewrites the stale files this tool generates (`conformance bundle` writes the vectors')."""
    written = []
    for g in stale(files):
        if g.ours:
            replace_file(g.path, g.expected.encode("utf-8"))
            written.append(g.path)
    return written


# ---------------------------------------------------------------------------------------------
# Processes


def run(args: Sequence[str], cwd: Path, *, env: dict[str, str] | None = None) -> str:
    """Runs a step's command; its output is the step's result, its failure a ReleaseError."""
    try:
        completed = subprocess.run(
            list(args),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=STEP_TIMEOUT,
        )
    except FileNotFoundError as exc:
        raise ReleaseError(f"{args[0]} is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise ReleaseError(f"{' '.join(args)} took more than {STEP_TIMEOUT:g} s") from exc
    if completed.returncode != 0:
        raise ReleaseError(
            f"{' '.join(args)} exited {completed.returncode}:\n"
            f"{completed.stdout[-4000:]}\n{completed.stderr[-4000:]}"
        )
    return completed.stdout


def clean_env() -> dict[str, str]:
    """The environment of a scratch install: nothing of this virtualenv or checkout leaks in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "REASONING_REPLAY_PURE_PYTHON"}
    }
    return env | {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def dependency_directories() -> list[str]:
    """Where this interpreter finds the wheel's runtime dependencies (for --deps-from-here)."""
    directories: list[str] = []
    for module in (jsonschema, referencing, msgspec, yaml):
        assert module.__file__ is not None
        directory = str(Path(module.__file__).resolve().parents[1])
        if directory not in directories:
            directories.append(directory)
    return directories


# ---------------------------------------------------------------------------------------------
# Building


def prepare_out(out: Path) -> None:
    """An empty output directory; a previous release's files (its manifest says which) go first,
    and any other file stops the build rather than being deleted."""
    out.mkdir(parents=True, exist_ok=True)
    previous = out / MANIFEST
    ours = {MANIFEST, SUMS}
    if previous.is_file():
        ours |= {entry["file"] for entry in json.loads(previous.read_text("utf-8"))["artifacts"]}
    others = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if others:
        raise ReleaseError(f"{out} holds files of no release ({', '.join(others)}): give --out")
    for name in ours:
        (out / name).unlink(missing_ok=True)


WHEELS: Final = {
    # REASONING_REPLAY_BUILD value: (artifact kind, how the file name ends, compiled modules)
    "abi3": ("python-wheel-abi3", f"-{ABI3_INTERPRETER}-abi3-", ".abi3.so"),
    "pure": ("python-wheel-pure", "-py3-none-any.whl", None),
}


def build_python(out: Path, scratch: Path) -> list[Artifact]:
    """The sdist, then each wheel of :data:`WHEELS` built from it, as installers build them (a
    file the sdist lacks fails here)."""
    run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(out)], REPO)
    sdists = list(out.glob("reasoning_replay-*.tar.gz"))
    if len(sdists) != 1:
        raise ReleaseError(f"expected one sdist in {out}, found {sdists}")
    with tarfile.open(sdists[0]) as archive:
        archive.extractall(scratch / "sdist", filter="data")
    (source,) = (scratch / "sdist").iterdir()
    artifacts = [Artifact(sdists[0], "python-sdist")]
    for build, (kind, name_part, module_suffix) in WHEELS.items():
        wheel_dir = scratch / f"wheel-{build}"
        pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        env = clean_env() | {"REASONING_REPLAY_BUILD": build}
        run([*pip_wheel, "--no-index", "-w", str(wheel_dir), str(source)], scratch, env=env)
        (wheel,) = wheel_dir.glob("reasoning_replay-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            compiled = sorted(n for n in archive.namelist() if n.endswith(".so"))
        expected = (
            []
            if module_suffix is None
            else [
                f"reasoning_replay/_canonical{module_suffix}",
                f"reasoning_replay/_history{module_suffix}",
                f"reasoning_replay/_strict{module_suffix}",
            ]
        )
        if name_part not in wheel.name or compiled != expected:
            raise ReleaseError(
                f"the {build} wheel is {wheel.name} holding {compiled or 'no compiled module'}; "
                f"expected a name with {name_part!r} holding {expected or 'none'} (a C compiler "
                "and the Python headers are needed: see the build's warning)"
            )
        target = out / wheel.name
        shutil.move(wheel, target)
        artifacts.append(Artifact(target, kind))
    return artifacts


# ---------------------------------------------------------------------------------------------
# Interpreters


@dataclass(frozen=True, slots=True)
class Interpreter:
    path: Path
    version: tuple[int, int]

    @property
    def name(self) -> str:
        return f"Python {self.version[0]}.{self.version[1]}"


VERSION_OF: Final = "import sys; print(sys.implementation.name, *sys.version_info[:2])"


def interpreter(path: Path) -> Interpreter | None:
    """``path`` as a CPython interpreter, or ``None`` when it is not one that runs."""
    try:
        completed = subprocess.run(
            [str(path), "-c", VERSION_OF], capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name, major, minor = completed.stdout.split()
    return Interpreter(path, (int(major), int(minor))) if name == "cpython" else None


def candidate_pythons() -> list[Path]:
    """pyenv's CPython 3.11 and later, else ``python3.X`` on ``PATH``, one per minor version
    (the newest patch release)."""
    found: dict[str, Path] = {}
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    versions = sorted(
        Path(pyenv_root, "versions").glob("3.*.*"),
        key=lambda p: tuple(int(n) if n.isdigit() else -1 for n in p.name.split(".")),
    )
    for directory in versions:
        minor = ".".join(directory.name.split(".")[:2])
        if (directory / "bin" / "python3").is_file():
            found[minor] = directory / "bin" / "python3"
    for minor in SUPPORTED_MINORS:
        on_path = shutil.which(f"python{minor}")
        if f"{minor}" not in found and on_path is not None:
            found[minor] = Path(on_path)
    return [found[m] for m in SUPPORTED_MINORS if m in found]


SUPPORTED_MINORS: Final = ("3.11", "3.12", "3.13")
REQUIRED: Final = ((3, 11), (3, 13))  # the oldest CPython the wheel is for, and the newest here


def interpreters(given: Sequence[Path], *, deps_from_here: bool) -> list[Interpreter]:
    """The interpreters to check the abi3 wheel on: this one with ``--deps-from-here``, else
    those given, else every candidate, which must include :data:`REQUIRED`."""
    if deps_from_here:
        if given:
            raise ReleaseError("--deps-from-here checks this interpreter only: drop --python")
        here = interpreter(Path(sys.executable))
        assert here is not None
        return [here]
    chosen = [i for i in map(interpreter, given or candidate_pythons()) if i is not None]
    if len(chosen) < len(given):
        raise ReleaseError(f"not a CPython interpreter that runs: {', '.join(map(str, given))}")
    if not given:
        missing = [f"{a}.{b}" for a, b in REQUIRED if (a, b) not in {i.version for i in chosen}]
        if missing:
            raise ReleaseError(
                f"no CPython {' or '.join(missing)} to check the abi3 wheel on: install it "
                "(pyenv install 3.13) or name interpreters with --python"
            )
    too_old = [i for i in chosen if i.version < REQUIRED[0]]
    if too_old:
        raise ReleaseError(f"the wheel is for CPython >= 3.11, not {too_old[0].name}")
    return chosen


def build_npm(out: Path) -> Artifact:
    npm = shutil.which("npm")
    if npm is None:
        raise ReleaseError("npm is not installed (Node >= 20 with npm is needed)")
    stdout = run([npm, "pack", "--json", "--pack-destination", str(out)], JS_DIR)
    (packed,) = json.loads(stdout[stdout.index("[") :])
    return Artifact(out / packed["filename"], "npm-package")


def copy_data(out: Path) -> list[Artifact]:
    copies = [
        (REPO / "conformance" / BUNDLE_NAME, "vectors-bundle"),
        (REPO / "schema" / BUNDLE_FILE_NAME, "schema-bundle"),
        (CODES_PATH, "code-registry"),
        (REPO / "schema" / "diagnostic-codes.v1.schema.json", "code-registry-schema"),
        (REPO / "versions.json", "versions"),
    ]
    artifacts = []
    for source, kind in copies:
        target = out / source.name
        shutil.copyfile(source, target)
        artifacts.append(Artifact(target, kind))
    return artifacts


# ---------------------------------------------------------------------------------------------
# Checking

# Run by the scratch virtualenv's Python: the wheel's own data, the bundle from out/ alone.
SCHEMA_CHECK: Final = """
import json, socket, sys
from pathlib import Path
def refuse(*args, **kwargs):
    raise AssertionError("a schema lookup tried to use the network")
socket.socket.connect = refuse
from jsonschema import Draft202012Validator
from reasoning_replay.schemas import DIAGNOSTIC_CODES_SCHEMA_ID, validator_for
out = Path(sys.argv[1])
bundle_text = (out / "reasoning-replay.v1.bundle.json").read_text("utf-8")
bundle = Draft202012Validator(json.loads(bundle_text))
record = json.loads(sys.argv[2])
assert bundle.is_valid(record), "the schema bundle refuses the golden record"
assert not bundle.is_valid({**record, "version": 2}), "the schema bundle accepts version 2"
codes = json.loads((out / "diagnostic-codes.v1.json").read_text("utf-8"))
validator_for(DIAGNOSTIC_CODES_SCHEMA_ID).validate(codes)
print(len(codes["codes"]))
"""

NODE_TEST: Final = """
import { test } from 'node:test';
import { casesFor, checkCase } from 'PACKAGE/node-test';
import { IMPLEMENTATION, runCase } from 'PACKAGE/adapter';
test('the packed helper serves the packed vectors', async (t) => {
  for (const c of casesFor({ operation: IMPLEMENTATION.operations, levels: ['MUST'] })) {
    await t.test(c.id, () => checkCase(c, runCase(c.operation, c.input)));
  }
});
"""


def scratch_venv(
    scratch: Path, wheel: Path, python: Interpreter, *, name: str, deps_from_here: bool
) -> Path:
    venv = scratch / name
    env = clean_env()
    # No pip inside: this interpreter's pip installs into it (--python), which saves ensurepip.
    run([str(python.path), "-m", "venv", "--without-pip", str(venv)], scratch, env=env)
    venv_python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(venv_python), "install"]
    if deps_from_here:
        purelib = run(
            [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            scratch,
            env=env,
        )
        # appended after the venv's own site-packages: they never shadow the installed wheel
        Path(purelib.strip(), "zz_release_dependencies.pth").write_text(
            "".join(f"{d}\n" for d in dependency_directories()), encoding="utf-8"
        )
        # --ignore-installed: those directories may hold this package too (a non-editable install,
        # as in CI), which pip would take for the wheel and then install nothing, not even the
        # `conformance` script
        run([*pip, "--no-deps", "--no-index", "--ignore-installed", str(wheel)], scratch, env=env)
    else:
        run([*pip, str(wheel)], scratch, env=env)
    return venv


# Run by the scratch virtualenv's Python: which accelerators the installed reader and history
# reading use.
ACCELERATOR_CHECK: Final = """
import sys
from reasoning_replay.history import history_files
from reasoning_replay.record import reader
names = [f"reasoning_replay.{m}" for m in ("_canonical", "_strict", "_history")]
files = [sys.modules[n].__file__.rsplit("/", 1)[1] for n in names if n in sys.modules]
print(reader.ACCELERATED, reader.parse_strict_is_accelerated(), *files)
"""


def check_wheel(venv: Path, table: Versions, scratch: Path, *, module_suffix: str | None) -> str:
    """``conformance --version`` and ``conformance run`` of the installed wheel, whose reader
    uses the accelerators ending in ``module_suffix`` (``None``: none)."""
    conformance = str(venv / "bin" / "conformance")
    version = run([conformance, "--version"], scratch, env=clean_env())
    if not version.endswith(versions_text(table) + "\n"):
        raise ReleaseError(f"the installed wheel's --version is not versions.json's:\n{version}")
    used = run([str(venv / "bin" / "python"), "-c", ACCELERATOR_CHECK], scratch, env=clean_env())
    expected = (
        "False False"
        if module_suffix is None
        else f"True True _canonical{module_suffix} _strict{module_suffix} _history{module_suffix}"
    )
    if used.strip() != expected:
        raise ReleaseError(
            f"the installed wheel's accelerators are {used.strip()!r}, not {expected!r}"
        )
    summary = run([conformance, "run", "--no-progress"], scratch, env=clean_env())
    accelerators = "no accelerator" if module_suffix is None else f"*{module_suffix}"
    return f"{accelerators}; {summary.strip().splitlines()[-1]}"


def check_npm(venv: Path, tarball: Path, scratch: Path) -> str:
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        raise ReleaseError("node and npm are needed to check the npm package")
    project = scratch / "npm"
    project.mkdir()
    (project / "package.json").write_text('{"private": true, "type": "module"}\n', encoding="utf-8")
    run([npm, "install", "--no-audit", "--no-fund", "--offline", str(tarball)], project)
    installed = project / "node_modules" / NPM_PACKAGE_NAME
    (project / "helper.test.mjs").write_text(
        NODE_TEST.replace("PACKAGE", NPM_PACKAGE_NAME), "utf-8"
    )
    run([node, "--test", "helper.test.mjs"], project)
    adapter = f"{node} {installed / 'bin' / 'adapter.js'}"
    summary = run(
        [str(venv / "bin" / "conformance"), "run", "--no-progress", "--impl", adapter],
        scratch,
        env=clean_env(),
    )
    return summary.strip().splitlines()[-1]


def check_schemas(venv: Path, out: Path, scratch: Path) -> str:
    count = run(
        [str(venv / "bin" / "python"), "-c", SCHEMA_CHECK, str(out), GOLDEN_RECORD],
        scratch,
        env=clean_env(),
    )
    result = f"bundle validates offline; {count.strip()} codes validate"
    check_jsonschema = shutil.which("check-jsonschema")
    if check_jsonschema is not None:
        record = scratch / "record.json"
        record.write_text(GOLDEN_RECORD, encoding="utf-8")
        refused = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
        run(
            [check_jsonschema, "--schemafile", str(out / BUNDLE_FILE_NAME), str(record)],
            scratch,
            env=clean_env() | refused,
        )
        result += "; check-jsonschema agrees"
    return result


# ---------------------------------------------------------------------------------------------
# Manifest


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(out: Path, artifacts: Sequence[Artifact]) -> None:
    raw_versions = json.loads((REPO / "versions.json").read_text(encoding="utf-8"))
    entries = [
        {
            "file": a.path.name,
            "kind": a.kind,
            "bytes": a.path.stat().st_size,
            "sha256": sha256(a.path),
        }
        for a in sorted(artifacts, key=lambda a: a.path.name)
    ]
    manifest = {"versions": raw_versions, "artifacts": entries}
    replace_file(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    sums = "".join(f"{e['sha256']}  {e['file']}\n" for e in entries)
    replace_file(out / SUMS, sums.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# Command line


def timed(name: str, action: Callable[[], T], describe: Callable[[T], str]) -> T:
    """Runs one step, printing its name, what it gave and how long it took."""
    started = time.monotonic()
    print(f"{name} ...", end=" ", flush=True)
    result = action()
    print(f"{describe(result)} ({time.monotonic() - started:.1f} s)", flush=True)
    return result


def names(artifacts: Sequence[Artifact]) -> str:
    return ", ".join(a.path.name for a in artifacts)


def check_abi3_wheel(
    wheel: Path, python: Interpreter, table: Versions, scratch: Path, deps_from_here: bool
) -> Path:
    """The abi3 wheel installed in a scratch virtualenv of ``python``, checked; that venv."""
    venv = timed(
        f"abi3 wheel into a scratch virtualenv of {python.name}",
        lambda: scratch_venv(
            scratch,
            wheel,
            python,
            name=f"venv-abi3-{python.version[0]}.{python.version[1]}",
            deps_from_here=deps_from_here,
        ),
        lambda _: "installed" + (" (dependencies from here)" if deps_from_here else ""),
    )
    timed(
        f"{python.name}, abi3 wheel: conformance run",
        lambda: check_wheel(venv, table, scratch, module_suffix=".abi3.so"),
        str,
    )
    return venv


def release(out: Path, *, deps_from_here: bool, pythons: Sequence[Path] = ()) -> list[Artifact]:
    table = versions()
    stale_files = stale(generated_files(table))
    if stale_files:
        raise ReleaseError(
            "stale generated files: "
            + "; ".join(f"{g.path.relative_to(REPO)} (run `{g.how}`)" for g in stale_files)
        )
    checked = interpreters(pythons, deps_from_here=deps_from_here)
    here = interpreter(Path(sys.executable))
    assert here is not None
    prepare_out(out)
    with tempfile.TemporaryDirectory(prefix="reasoning-replay-release-") as tmp:
        scratch = Path(tmp)
        python = timed("sdist, and the wheels from it", lambda: build_python(out, scratch), names)
        wheels = {a.kind: a.path for a in python}
        npm = timed("npm package", lambda: [build_npm(out)], names)
        data = timed("data files", lambda: copy_data(out), names)
        how = " (dependencies from here)" if deps_from_here else ""
        venvs = [
            check_abi3_wheel(wheels["python-wheel-abi3"], each, table, scratch, deps_from_here)
            for each in checked
        ]
        if deps_from_here:
            print(f"other interpreters: not checked (--deps-from-here: {here.name} only)")
        pure = timed(
            f"pure wheel into a scratch virtualenv of {here.name}",
            lambda: scratch_venv(
                scratch,
                wheels["python-wheel-pure"],
                here,
                name="venv-pure",
                deps_from_here=deps_from_here,
            ),
            lambda _: "installed" + how,
        )
        timed(
            f"{here.name}, pure wheel: conformance run",
            lambda: check_wheel(pure, table, scratch, module_suffix=None),
            str,
        )
        timed(
            "npm package: its node:test helper, and the suite through its adapter",
            lambda: check_npm(venvs[0], npm[0].path, scratch),
            str,
        )
        timed("schema bundle and code registry", lambda: check_schemas(venvs[0], out, scratch), str)
    artifacts = [*python, *npm, *data]
    write_manifest(out, artifacts)
    return artifacts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=REPO / "dist", help="output directory (default dist/)"
    )
    parser.add_argument(
        "--python",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="a CPython >= 3.11 to check the abi3 wheel on (repeatable; default: pyenv's or "
        "PATH's 3.11, 3.12 and 3.13)",
    )
    parser.add_argument(
        "--deps-from-here",
        action="store_true",
        help="scratch venvs use this interpreter's dependencies (offline; this interpreter only)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--sync", action="store_true", help="rewrite the stale generated files and stop"
    )
    mode.add_argument(
        "--check-sync", action="store_true", help="exit 1 when a generated file is stale"
    )
    args = parser.parse_args(argv)
    try:
        files = generated_files(versions())
        if args.sync:
            for path in sync(files):
                print(f"wrote {path.relative_to(REPO)}")
            left = stale(files)
            for g in left:
                print(f"still stale: {g.path.relative_to(REPO)} (run `{g.how}`)", file=sys.stderr)
            return 1 if left else 0
        if args.check_sync:
            left = stale(files)
            for g in left:
                print(f"stale: {g.path.relative_to(REPO)} (run `{g.how}`)", file=sys.stderr)
            return 1 if left else 0
        artifacts = release(
            args.out.resolve(), deps_from_here=args.deps_from_here, pythons=args.python
        )
    except ReleaseError as exc:
        print(f"\nrelease: {exc}", file=sys.stderr)
        return 1
    print(f"{len(artifacts)} artifacts in {args.out}, digests in {MANIFEST} and {SUMS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
