"""Install the deployed implementation, fast-agent, into its own virtualenv.

Usage::

    python tools/install_fast_agent.py [--python PATH] [--env DIR] [--with-reference] [--force]

Creates a virtualenv (default ``.fast-agent-env/`` in the repository root, git-ignored) with the
pinned ``fast-agent-mcp`` release, so that ``conformance/implementations/fast-agent/adapter.py``
can call the published package's own functions. fast-agent is never a dependency of this
project: it lives only in that environment.

``fast-agent-mcp`` 0.10.48 requires Python >= 3.12 and < 3.16. The interpreter is ``--python``
when given; otherwise the first that runs and fits of ``python3.13``, ``python3.12``,
``python3.14`` and ``python3.15`` on ``PATH``, then the pyenv installs under
``$PYENV_ROOT/versions`` (default ``~/.pyenv``), newest first, then ``python3``. If none fits,
the tool says so and exits 2.

``--with-reference`` also installs this repository's package, non-editable, into the same
environment: ``tools/bench_vs_fast_agent.py`` needs both there. The adapter does not (it must
not import the reference: it is an independent implementation).

At the end it prints the time the install took and the adapter's command line. Exit status: 0
installed, 1 a step failed, 2 no suitable interpreter or a usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[1]
FAST_AGENT_REQUIREMENT: Final = "fast-agent-mcp==0.10.48"
FAST_AGENT_VERSION: Final = "0.10.48"
#: Requires-Python of fast-agent-mcp 0.10.48: ">=3.12,<3.16".
PYTHON_MIN: Final = (3, 12)
PYTHON_BELOW: Final = (3, 16)
DEFAULT_ENV: Final = REPO / ".fast-agent-env"
ADAPTER: Final = Path("conformance/implementations/fast-agent/adapter.py")
PATH_CANDIDATES: Final = ("python3.13", "python3.12", "python3.14", "python3.15")


def env_python(env: Path) -> Path:
    """The interpreter of a virtualenv."""
    if os.name == "nt":
        return env / "Scripts" / "python.exe"
    return env / "bin" / "python"


def python_version(executable: str) -> tuple[int, int] | None:
    """The (major, minor) version of an interpreter, or ``None`` when it does not run."""
    try:
        result = subprocess.run(
            [executable, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"(\d+) (\d+)\s*", result.stdout)
    if result.returncode != 0 or match is None:
        return None  # e.g. a pyenv shim for a version that is not selected
    return int(match.group(1)), int(match.group(2))


def fits(version: tuple[int, int] | None) -> bool:
    return version is not None and PYTHON_MIN <= version < PYTHON_BELOW


def _pyenv_candidates() -> Iterator[str]:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    versions = root / "versions"
    if not versions.is_dir():
        return
    found: list[tuple[tuple[int, ...], Path]] = []
    for directory in versions.iterdir():
        match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", directory.name)
        executable = directory / "bin" / "python3"
        if match and executable.exists():
            found.append((tuple(int(part) for part in match.groups()), executable))
    for _, executable in sorted(found, reverse=True):  # newest first
        yield str(executable)


def candidates() -> Iterator[str]:
    for name in PATH_CANDIDATES:
        located = shutil.which(name)
        if located is not None:
            yield located
    yield from _pyenv_candidates()
    located = shutil.which("python3")  # last: whatever python3 is, if it is new enough
    if located is not None:
        yield located


def find_python(explicit: str | None) -> tuple[str, tuple[int, int]] | str:
    """The interpreter to use and its version, or a message saying why there is none."""
    wanted = f">= {PYTHON_MIN[0]}.{PYTHON_MIN[1]} and < {PYTHON_BELOW[0]}.{PYTHON_BELOW[1]}"
    if explicit is not None:
        version = python_version(explicit)
        if version is None:
            return f"--python {explicit}: does not run"
        if not fits(version):
            return (
                f"--python {explicit} is Python {version[0]}.{version[1]}; "
                f"{FAST_AGENT_REQUIREMENT} needs Python {wanted}"
            )
        return explicit, version
    tried: list[str] = []
    for executable in candidates():
        version = python_version(executable)
        if fits(version):
            assert version is not None
            return executable, version
        found = "does not run" if version is None else f"{version[0]}.{version[1]}"
        tried.append(f"{executable} ({found})")
    return (
        f"no Python {wanted} found for {FAST_AGENT_REQUIREMENT} "
        f"(tried: {', '.join(tried) or 'nothing on PATH or under pyenv'}); "
        "install one (e.g. pyenv install 3.13) or pass --python PATH"
    )


def run(command: Sequence[str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/install_fast_agent.py",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("--python", help="interpreter to build the env from (Python 3.12-3.15)")
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV, help="virtualenv directory")
    parser.add_argument(
        "--with-reference",
        action="store_true",
        help="also install this repository's package (non-editable), for the benchmark",
    )
    parser.add_argument(
        "--force", action="store_true", help="delete and recreate an existing environment"
    )
    args = parser.parse_args(argv)
    env: Path = args.env.resolve()

    found = find_python(args.python)
    if isinstance(found, str):
        print(f"install_fast_agent: {found}", file=sys.stderr)
        return 2
    interpreter, version = found
    print(f"interpreter: {interpreter} (Python {version[0]}.{version[1]})", flush=True)

    started = time.perf_counter()
    try:
        if args.force and env.exists():
            shutil.rmtree(env)
        python = env_python(env)
        if not python.exists():
            run([interpreter, "-m", "venv", str(env)])
        elif not fits(python_version(str(python))):
            print(
                f"install_fast_agent: {env} exists with an unsuitable Python; use --force",
                file=sys.stderr,
            )
            return 2
        pip = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
        run([*pip, FAST_AGENT_REQUIREMENT])
        if args.with_reference:
            run([*pip, str(REPO)])  # non-editable: a snapshot of this checkout
        check = (
            "import importlib.metadata as m; "
            "import fast_agent.llm.provider.openai.reasoning_replay, "
            "fast_agent.llm.provider.openai.responses_cache; "
            "print(m.version('fast-agent-mcp'))"
        )
        installed = subprocess.run(
            [str(python), "-c", check], capture_output=True, text=True, check=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        print(f"install_fast_agent: failed: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - started
    if installed != FAST_AGENT_VERSION:
        print(
            f"install_fast_agent: installed fast-agent-mcp {installed}, "
            f"expected {FAST_AGENT_VERSION}",
            file=sys.stderr,
        )
        return 1

    adapter = REPO / ADAPTER
    print(f"installed fast-agent-mcp {installed} into {env} in {elapsed:.1f} s")
    print("adapter command:")
    print(f'  conformance run --impl "{python} {adapter}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
