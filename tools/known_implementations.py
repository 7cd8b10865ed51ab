"""The known implementations: where each lives, how its adapter starts, what it is judged against.

One entry per report in ``conformance/implementations/reports/`` (the entry's ``key`` is the
report's file name without ``.json``): the reference (in process), the JavaScript and Rust
implementations of this specification, fast-agent (the deployed implementation SPEC.md was
written from), and every agent framework that has a ``conformance/implementations/NAME/
environment.json`` (``tools/install_implementation.py``), so a framework added there is known
here without an edit. Paths are relative to the repository root, so the commands a run records
in its report are the same on every checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from install_fast_agent import env_python
from install_implementation import IMPLEMENTATIONS, Environment, UsageError, load, served

REPO: Final = Path(__file__).resolve().parents[1]
REFERENCE: Final = "reference"


@dataclass(frozen=True, slots=True)
class Known:
    """One implementation the suite is run against."""

    key: str  # the report's file name without .json
    directory: str  # where it lives, relative to the repository, ending in "/"
    #: the adapter's command line, relative to the repository; () for the in-process reference
    adapter: tuple[str, ...]
    expectations: str | None  # its expectations file, relative to the repository
    ready: str | None  # the file or directory whose presence says it can run; None: always
    prepare: str | None  # the command that makes ``ready``
    framework: bool = False  # an agent framework, judged in the framework-neutral profile

    @property
    def report(self) -> str:
        return f"conformance/implementations/reports/{self.key}.json"

    def is_ready(self, root: Path = REPO) -> bool:
        return self.ready is None or (root / self.ready).exists()


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


BUILT_IN: Final = (
    Known(
        key=REFERENCE,
        directory="reference_impl/reasoning_replay/",
        adapter=(),
        expectations=None,
        ready=None,
        prepare=None,
    ),
    Known(
        key="javascript",
        directory="conformance/adapters/js/",
        adapter=("node", "conformance/adapters/js/bin/adapter.js"),
        expectations=None,
        ready="conformance/adapters/js/node_modules",
        prepare="npm ci --prefix conformance/adapters/js",
    ),
    Known(
        key="rust",
        directory="conformance/adapters/rust/",
        adapter=("conformance/adapters/rust/target/release/reasoning-replay-adapter",),
        expectations=None,
        ready="conformance/adapters/rust/target/release/reasoning-replay-adapter",
        prepare=(
            "cargo build --release --offline --manifest-path conformance/adapters/rust/Cargo.toml"
        ),
    ),
    Known(
        key="fast-agent",
        directory="conformance/implementations/fast-agent/",
        adapter=(
            _relative(env_python(REPO / ".fast-agent-env")),
            "conformance/implementations/fast-agent/adapter.py",
        ),
        expectations="conformance/implementations/fast-agent/expectations.yaml",
        ready=_relative(env_python(REPO / ".fast-agent-env")),
        prepare="python tools/install_fast_agent.py",
    ),
)


def framework(environment: Environment) -> Known:
    """A framework of ``tools/install_implementation.py``, from its ``environment.json``."""
    here = f"conformance/implementations/{environment.name}"
    python = _relative(env_python(environment.env))

    def part(word: str) -> str:
        if "{python}" in word:
            return word.replace("{python}", python)
        return f"{here}/{word}" if (environment.directory / word).exists() else word

    # The node environment is npm's node_modules/ beside the adapter; a Python one, its venv.
    ready = f"{here}/node_modules" if environment.kind == "node" else python
    return Known(
        key=environment.name,
        directory=f"{here}/",
        adapter=tuple(part(word) for word in environment.adapter),
        expectations=f"{here}/expectations.yaml",
        ready=ready,
        prepare=f"python tools/install_implementation.py {environment.name}",
        framework=True,
    )


def known() -> tuple[Known, ...]:
    """Every known implementation, in the order the pages list them: the reference, the other
    implementations of this specification, fast-agent, then the frameworks by name."""
    try:
        frameworks = tuple(framework(load(name)) for name in served())
    except UsageError as exc:  # a broken environment.json: say which, never guess
        raise SystemExit(f"known_implementations: {exc}") from exc
    return (*BUILT_IN, *frameworks)


def by_key() -> dict[str, Known]:
    return {entry.key: entry for entry in known()}


def directory_of(key: str) -> str:
    """Where the implementation of a report lives (an unknown key: its directory under
    conformance/implementations/, as for the frameworks)."""
    entry = by_key().get(key)
    return entry.directory if entry is not None else f"{_relative(IMPLEMENTATIONS)}/{key}/"


def sort_key(key: str, order: tuple[str, ...]) -> tuple[int, str]:
    """Known implementations in ``order``; any other report after them, by name."""
    return (order.index(key), "") if key in order else (len(order), key.casefold())
