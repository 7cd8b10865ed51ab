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
adapter must not import ``reasoning_replay`` (it is measured, not helped). pip's and npm's own
caches make a second install of the same pinned versions fast; ``--force`` rebuilds.

At the end it prints, per implementation, the time the install took and the adapter's command
line. Exit status: 0 installed, 1 a step failed or the installed version is not the pinned one,
2 a usage error (an unknown name, no suitable interpreter).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from install_fast_agent import candidates, env_python, python_version

REPO: Final = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS: Final = REPO / "conformance" / "implementations"
ENVIRONMENTS: Final = REPO / ".implementations"


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
            python=tuple(data.get("python", (3, 11))),  # type: ignore[arg-type]
            python_below=tuple(data.get("python_below", (4, 0))),  # type: ignore[arg-type]
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
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
    run([*pip, "-r", str(environment.directory / environment.requirements)])
    return installed_version([str(python), "-c", environment.check], environment.directory)


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
