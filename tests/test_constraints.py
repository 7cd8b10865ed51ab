"""CI's tool versions are pinned in constraints/ci.txt, which README's test command names and
.ci/run installs with exactly as README says: every requirement of every extra, and every
package that tests/ and tools/ import, is pinned there (``==``), within the bounds pyproject.toml
gives it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "constraints" / "ci.txt"
README_COMMANDS = re.compile(r"\A.*?^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Imported only by programs that run in another environment, pinned there.
OTHER_ENVIRONMENTS = {
    "fast_agent": "fast-agent's own environment, pinned by tools/install_fast_agent.py",
    "mcp_types": "fast-agent's own environment, pinned by tools/install_fast_agent.py",
    "pydantic_ai": "pydantic-ai's own environment, pinned by its requirements.txt "
    "(conformance/implementations/pydantic-ai, tools/install_implementation.py)",
    "agents": "openai-agents' own environment, pinned by its requirements.txt "
    "(conformance/implementations/openai-agents, tools/install_implementation.py)",
}


@cache
def pins() -> dict[str, Version]:
    pinned: dict[str, Version] = {}
    for number, line in enumerate(CONSTRAINTS.read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, equals, version = line.partition("==")
        assert equals and re.fullmatch(r"[A-Za-z0-9._-]+", name), f"line {number}: {line!r}"
        assert canonicalize_name(name) not in pinned, f"line {number}: {name} pinned twice"
        pinned[canonicalize_name(name)] = Version(version)
    return pinned


def project() -> dict[str, object]:
    document = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    project_table: dict[str, object] = document["project"]
    return project_table


def requirements() -> list[tuple[str, Requirement]]:
    table = project()
    extras: dict[str, list[str]] = table["optional-dependencies"]  # type: ignore[assignment]
    found = [("dependencies", Requirement(r)) for r in table["dependencies"]]  # type: ignore[attr-defined]
    found += [(extra, Requirement(r)) for extra, reqs in extras.items() for r in reqs]
    return found


def readme_install_lines() -> list[str]:
    text = (REPO / "README.md").read_text("utf-8")
    first_block = README_COMMANDS.match(text)
    assert first_block is not None, "README.md opens with no sh block"
    return first_block.group(1).splitlines()


def test_the_extras_are_split_by_purpose() -> None:
    extras: dict[str, list[str]] = project()["optional-dependencies"]  # type: ignore[assignment]

    assert set(extras) == {"test", "lint", "sdk", "openai", "distributed"}
    names = {extra: {Requirement(r).name for r in reqs} for extra, reqs in extras.items()}
    assert {"ruff", "mypy"} <= names["lint"]
    assert "openai" in names["sdk"] and "openai" in names["openai"]
    assert not names["test"] & (names["lint"] | names["sdk"])


@pytest.mark.parametrize(
    ("where", "requirement"), requirements(), ids=[str(r) for _, r in requirements()]
)
def test_every_requirement_is_pinned_within_its_bounds(
    where: str, requirement: Requirement
) -> None:
    if requirement.name == project()["name"]:  # an extra of this package: its own rows check it
        extras: dict[str, object] = project()["optional-dependencies"]  # type: ignore[assignment]
        assert requirement.extras <= set(extras)
        return
    pinned = pins().get(canonicalize_name(requirement.name))

    assert pinned is not None, f"{requirement.name} ({where}) is not pinned in constraints/ci.txt"
    assert requirement.specifier.contains(pinned, prereleases=True), (
        f"constraints/ci.txt pins {requirement.name}=={pinned}, outside {where}'s {requirement}"
    )
    for extra in requirement.extras:  # openai[realtime]: what the extra adds is pinned too
        assert extra == "realtime"
        assert "websockets" in pins()


def imported_modules() -> dict[str, str]:
    """Every top-level module that tests/ and tools/ import and neither the standard library
    nor the repository provides, with a file that imports it."""
    local = {"reasoning_replay", "hatch_build"}
    for directory in ("tests", "tools"):
        local |= {p.stem for p in (REPO / directory).rglob("*.py")}
        local |= {p.name for p in (REPO / directory).rglob("*") if p.is_dir()}
    found: dict[str, str] = {}
    for directory in ("tests", "tools"):
        for path in sorted((REPO / directory).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_bytes())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top not in local:
                        found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_package_the_tests_and_tools_import_is_pinned() -> None:
    distributions = packages_distributions()
    unpinned = []
    for module, where in imported_modules().items():
        if module in OTHER_ENVIRONMENTS:
            continue
        names = distributions.get(module)
        if not names:
            unpinned.append(f"{module} (imported by {where}) is not installed here")
        elif not any(canonicalize_name(n) in pins() for n in names):
            unpinned.append(f"{module} ({', '.join(names)}; imported by {where})")

    assert unpinned == [], "not pinned in constraints/ci.txt: " + "; ".join(unpinned)


def test_readme_names_the_constraints_and_ci_installs_exactly_as_readme_says() -> None:
    install, test = readme_install_lines()
    ci_lines = (REPO / ".ci" / "run").read_text("utf-8").splitlines()

    assert install == "pip install . && conformance run"
    assert test.startswith("pip install -c constraints/ci.txt '.[test,lint,sdk]' && ")
    assert install in ci_lines
    assert test in ci_lines
    assert ci_lines.index(install) < ci_lines.index(test)
    pip_lines = [line for line in ci_lines if re.match(r"\s*(python -m )?pip install", line)]
    assert all(line in (install, test) or "--upgrade pip" in line for line in pip_lines), pip_lines
