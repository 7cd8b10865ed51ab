"""versions.json is the one statement of every version line: each other place that carries a
version (the suite's VERSION, the protocol, the packages, the schema ids, the README, the
``--version`` output) agrees with it, and the planned public URL is named nowhere else."""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest
from reasoning_replay.cli.main import main
from reasoning_replay.schemas import schema_documents
from reasoning_replay.suite import PROTOCOL_VERSION
from reasoning_replay.versions import (
    NPM_PACKAGE_NAME,
    versions,
    versions_markdown,
    versions_text,
)

REPO = Path(__file__).resolve().parents[1]
README_BLOCK = re.compile(r"<!-- versions:start -->\n(.*?)\n<!-- versions:end -->", re.DOTALL)
# Where a URL could be written; node_modules and virtualenvs are not ours.
SEARCHED = ("README.md", "SPEC.md", "CHANGELOG.md", "pyproject.toml", "hatch_build.py")
SEARCHED_TREES = ("reference_impl", "schema", "conformance", "tools", "tests", "docs", ".ci")


def test_conformance_version_prints_the_whole_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert out.splitlines()[0].startswith("conformance ")
    assert out.endswith(versions_text(versions()) + "\n")


def test_readme_shows_the_table() -> None:
    block = README_BLOCK.search((REPO / "README.md").read_text(encoding="utf-8"))

    assert block is not None, "README.md has no <!-- versions:start --> ... end block"
    assert block.group(1) == versions_markdown(versions()), (
        "README.md's version table is stale: run `python tools/release.py --sync`"
    )


def test_suite_version_file_is_the_tables() -> None:
    actual = (REPO / "conformance" / "VERSION").read_text(encoding="utf-8").strip()

    assert actual == versions().suite


def test_protocol_version_is_the_tables() -> None:
    assert versions().protocol == PROTOCOL_VERSION


def test_installed_package_version_is_the_tables() -> None:
    assert metadata.version("reasoning-replay") == versions().package


def test_npm_package_name_and_version_are_the_tables() -> None:
    package = json.loads((REPO / "conformance/adapters/js/package.json").read_text("utf-8"))

    assert (package["name"], package["version"]) == (NPM_PACKAGE_NAME, versions().npm_package)


def test_every_schema_id_carries_the_schema_version() -> None:
    suffix = f".v{versions().schema}"

    assert all(schema_id.endswith(suffix) for schema_id in schema_documents())


@pytest.mark.parametrize(
    ("anchor", "field"),
    [
        ("part-record", "record_spec"),
        ("part-ordering", "configuration_update_ordering_spec"),
        ("part-history", "stored_history_profile"),
    ],
)
def test_each_spec_part_states_the_tables_version(anchor: str, field: str) -> None:
    spec = (REPO / "SPEC.md").read_text(encoding="utf-8")
    part = re.search(rf'<a id="{anchor}"></a>\n# Part [IV]+\. [^\n]+\n\nVersion ([0-9.]+),', spec)
    title_rows = re.findall(rf"\(#{anchor}\) \| ([0-9.]+),", spec)

    assert part is not None, f"SPEC.md has no part heading at #{anchor} with a version line"
    assert part.group(1) == getattr(versions(), field)
    assert title_rows == [getattr(versions(), field)], "the title block's table disagrees"


def test_code_registry_version_is_the_tables() -> None:
    registry = json.loads((REPO / "schema/diagnostic-codes.v1.json").read_text("utf-8"))

    assert registry["version"] == versions().codes_registry


def test_the_planned_public_url_is_named_only_in_versions_json() -> None:
    url = versions().public_url
    host = url.split("//", 1)[1].rstrip("/")
    files = [REPO / name for name in SEARCHED]
    for tree in SEARCHED_TREES:
        files += [p for p in (REPO / tree).rglob("*") if p.is_file() and _ours(p)]

    naming = [str(p.relative_to(REPO)) for p in files if host.encode() in p.read_bytes()]

    assert naming == [], f"name {url} only in versions.json; read it with versions().public_url"


def _ours(path: Path) -> bool:
    parts = set(path.relative_to(REPO).parts)
    return not parts & {"node_modules", "__pycache__", ".venv", ".mypy_cache"} and (
        path.suffix not in {".so", ".pyc"}
    )
