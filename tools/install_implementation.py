"""Install a known implementation (an agent framework) into its own environment, pinned.

Usage::

    python tools/install_implementation.py NAME [NAME ...] [--force] [--python PATH]
    python tools/install_implementation.py --all

Each ``conformance/implementations/NAME/`` that this tool serves holds an ``environment.json``:

- ``{"kind": "python", "python": [3, 11], "python_below": [3, 14], "requirements":
  "requirements.txt", "check": "<python code that prints the installed version>", "version":
  "<the pinned version it must print>", "adapter": ["{python}", "adapter.py"]}``: a virtualenv
  ``.implementations/NAME/`` (git-ignored) with exactly the pinned requirements;
- ``{"kind": "node", "check": "<node code that prints the installed version>", "version": ...,
  "adapter": ["node", "adapter.mjs"]}``: ``npm ci`` in the implementation's own directory, from
  its ``package.json`` and ``package-lock.json`` (``node_modules/`` is git-ignored).

The framework is never a dependency of this project: it lives only in that environment, and its
adapter must not import ``reasoning_replay`` (it is measured, not helped). ``--force`` rebuilds.

A Python environment is installed from a wheelhouse: the pinned requirements' wheels, downloaded
once per requirements file, Python version and platform into
``$XDG_CACHE_HOME/reasoning-replay/wheels/NAME-KEY/`` (default ``~/.cache/...``; the variable
``REASONING_REPLAY_WHEELS`` names another directory), then installed with ``--no-index``. So a
second install of the same pins (a fresh clone in CI) reads no package index, whether or not
pip's own HTTP cache works where it runs. npm's cache does the same for ``npm ci``.

At the end it prints, per implementation, the time the install took and the adapter's command
line. Exit status: 0 installed, 1 a step failed or the installed version is not the pinned one,
2 a usage error (an unknown name, no suitable interpreter).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from install_fast_agent import candidates, env_python, python_version

REPO: Final = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS: Final = REPO / "conformance" / "implementations"
ENVIRONMENTS: Final = REPO / ".implementations"
#: the file a complete wheelhouse holds (a copy of the requirements it was downloaded for)
COMPLETE: Final = "requirements.txt"


@dataclass(frozen=True)
class Environment:
    """What ``environment.json`` says about one implementation."""

    name: str
    kind: str  # "python" | "node"
    check: str
    version: str
    adapter: tuple[str, ...]
    python: tuple[int, int] = (3, 11)
    python_below: tuple[int, int] = (4, 0)
    requirements: str = "requirements.txt"

    @property
    def directory(self) -> Path:
        return IMPLEMENTATIONS / self.name

    @property
    def env(self) -> Path:
        return ENVIRONMENTS / self.name


class UsageError(Exception):
    """A name that is not served, a broken ``environment.json``, no interpreter that fits."""


def served() -> list[str]:
    """The implementations this tool can install, by name."""
    return sorted(p.parent.name for p in IMPLEMENTATIONS.glob("*/environment.json"))


def load(name: str) -> Environment:
    path = IMPLEMENTATIONS / name / "environment.json"
    if not path.is_file():
        raise UsageError(f"{name}: no {path.relative_to(REPO)} (served: {', '.join(served())})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = data["kind"]
        if kind not in ("python", "node"):
            raise UsageError(f"{path}: kind {kind!r} is neither 'python' nor 'node'")
        return Environment(
            name=name,
            kind=kind,
            check=str(data["check"]),
            version=str(data["version"]),
            adapter=tuple(str(part) for part in data["adapter"]),
            python=tuple(data.get("python", (3, 11))),
            python_below=tuple(data.get("python_below", (4, 0))),
            requirements=str(data.get("requirements", "requirements.txt")),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: unreadable or incomplete ({exc})") from exc


def find_python(environment: Environment, explicit: str | None) -> str:
    def fits(version: tuple[int, int] | None) -> bool:
        return version is not None and environment.python <= version < environment.python_below

    wanted = (
        f">= {environment.python[0]}.{environment.python[1]} "
        f"and < {environment.python_below[0]}.{environment.python_below[1]}"
    )
    options = [explicit] if explicit is not None else [sys.executable, *candidates()]
    for executable in options:
        if fits(python_version(executable)):
            return executable
    raise UsageError(f"{environment.name}: no Python {wanted} found; pass --python PATH")


def run(command: Sequence[str], cwd: Path | None = None) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=cwd)


def installed_version(command: Sequence[str], cwd: Path) -> str:
    return subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=cwd
    ).stdout.strip()


def adapter_command(environment: Environment) -> str:
    python = str(env_python(environment.env))

    def resolve(part: str) -> str:
        if "{python}" in part:
            return part.replace("{python}", python)
        local = environment.directory / part
        return str(local) if local.exists() else part

    return " ".join(resolve(part) for part in environment.adapter)


def install(environment: Environment, explicit_python: str | None, force: bool) -> str:
    """Install one environment; return the installed version (raises on failure)."""
    if environment.kind == "node":
        if force:
            shutil.rmtree(environment.directory / "node_modules", ignore_errors=True)
        run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(environment.directory)])
        return installed_version(["node", "-e", environment.check], environment.directory)
    interpreter = find_python(environment, explicit_python)
    if force and environment.env.exists():
        shutil.rmtree(environment.env)
    python = env_python(environment.env)
    if not python.exists():
        environment.env.parent.mkdir(exist_ok=True)
        run([interpreter, "-m", "venv", str(environment.env)])
    requirements = environment.directory / environment.requirements
    house = fill_wheelhouse(environment, python, requirements)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
    run([*pip, "--no-index", "--find-links", str(house), "-r", str(requirements)])
    return installed_version([str(python), "-c", environment.check], environment.directory)


def wheel_cache() -> Path:
    """Where the wheelhouses are kept (see the module docstring)."""
    if os.environ.get("REASONING_REPLAY_WHEELS"):
        return Path(os.environ["REASONING_REPLAY_WHEELS"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reasoning-replay" / "wheels"


def wheelhouse_key(requirements: bytes, python: tuple[int, int], platform: str) -> str:
    """One wheelhouse per pinned requirements file, Python version and platform."""
    tag = f"\n# python {python[0]}.{python[1]} on {platform}\n".encode()
    return hashlib.sha256(requirements + tag).hexdigest()[:16]


def fill_wheelhouse(environment: Environment, python: Path, requirements: Path) -> Path:
    """The environment's wheelhouse, downloaded first if it is not complete. A download goes to
    a directory of its own, renamed into place when complete and removed if it fails."""
    version = python_version(str(python))
    if version is None:
        raise UsageError(f"{environment.name}: {python} does not run")
    key = wheelhouse_key(requirements.read_bytes(), version, sysconfig.get_platform())
    house = wheel_cache() / f"{environment.name}-{key}"
    if (house / COMPLETE).is_file():
        print(f"+ wheels of {environment.name} from {house}", flush=True)
        return house
    partial = house.with_name(f"{house.name}.partial-{os.getpid()}")
    try:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
        run([*pip, "download", "--quiet", "--dest", str(partial), "-r", str(requirements)])
        (partial / COMPLETE).write_text(requirements.read_text(encoding="utf-8"), encoding="utf-8")
        if (house / COMPLETE).is_file():  # another install filled it meanwhile
            return house
        shutil.rmtree(house, ignore_errors=True)  # an incomplete one, from an older layout
        partial.rename(house)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return house


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/install_implementation.py",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="implementations to install")
    parser.add_argument("--all", action="store_true", help="every implementation served")
    parser.add_argument("--python", help="interpreter to build Python environments from")
    parser.add_argument("--force", action="store_true", help="rebuild existing environments")
    args = parser.parse_args(argv)
    names: list[str] = served() if args.all else args.names
    if not names:
        parser.error(f"name an implementation or pass --all (served: {', '.join(served())})")
    try:
        environments = [load(name) for name in names]
    except UsageError as exc:
        print(f"install_implementation: {exc}", file=sys.stderr)
        return 2
    status = 0
    for environment in environments:
        started = time.perf_counter()
        try:
            version = install(environment, args.python, args.force)
        except UsageError as exc:
            print(f"install_implementation: {exc}", file=sys.stderr)
            return 2
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"install_implementation: {environment.name}: failed: {exc}", file=sys.stderr)
            status = 1
            continue
        elapsed = time.perf_counter() - started
        if version != environment.version:
            print(
                f"install_implementation: {environment.name}: installed {version}, "
                f"pinned {environment.version}",
                file=sys.stderr,
            )
            status = 1
            continue
        print(f"installed {environment.name} {version} in {elapsed:.1f} s")
        print(f'  conformance run --impl "{adapter_command(environment)}"')
    return status


if __name__ == "__main__":
    sys.exit(main())
