"""Every case id, rule id and SPEC section a document names exists (issue 11 §2).

Documents link rules instead of restating them, so a link that points nowhere is a broken
contract. Checked: SPEC.md, README.md, conformance/*.md, docs/*.md, tools/README.md, the
implementations' READMEs and expectations files, and the descriptions and comments of every
vector file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Final

import pytest
from reasoning_replay.resources import data_path
from reasoning_replay.suite.vectors import load_suite

REPO: Final = Path(__file__).resolve().parents[1]
SPEC: Final = (REPO / "SPEC.md").read_text(encoding="utf-8")
ANCHORS: Final = frozenset(re.findall(r'<a id="([^"]+)"></a>', SPEC))
SECTIONS: Final = frozenset(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", SPEC, re.MULTILINE))
_SUITE: Final = load_suite([data_path("conformance", "vectors")])
CASE_NAMES: Final = frozenset(name for case in _SUITE.cases for name in case.names)
OPERATIONS: Final = frozenset(case.operation for case in _SUITE.cases)

# A case id (or an expectations glob) where a document quotes one: in backticks, in quotes, or
# after `id:` / `-k`.
_QUOTED: Final = re.compile(r"""`([^`\s]+)`|"([^"\s]+)"|(?:\bid:|-k)\s+"?([^\s,"]+)""")
_CASE_LIKE: Final = re.compile(r"^[a-z][a-z0-9._-]*(?:/[a-z0-9._*?\[\]-]+)+$")
_RULE_LINK: Final = re.compile(r"SPEC\.md#([A-Za-z0-9_-]+)")
_RULE_WORD: Final = re.compile(r"\brule ([A-Z]{1,2}[0-9]+(?:-[a-z]+)?)\b")
_SPEC_FIELD: Final = re.compile(r"\bspec: ([A-Za-z0-9_-]+)")
_LOCAL_LINK: Final = re.compile(r"\]\(#([A-Za-z0-9_-]+)\)")
_SECTION: Final = re.compile(r"§\s?(\d+(?:\.\d+)*)")
# "RFC 7493 §2.2" and "[RFC7493] §2.2" (a citation label, SPEC §20) are another document's
_OTHER_DOCUMENT: Final = re.compile(r"(?:RFC \d+|\[[A-Z][A-Z0-9-]*\])\s*$")


def _documents() -> list[Path]:
    found = [
        REPO / "SPEC.md",
        REPO / "README.md",
        REPO / "tools" / "README.md",
        *sorted((REPO / "conformance").glob("*.md")),
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "conformance" / "implementations").glob("*/README.md")),
        *sorted((REPO / "conformance" / "implementations").glob("*/expectations.yaml")),
    ]
    return [path for path in found if path.is_file()]


def _vector_prose() -> Iterator[tuple[str, str]]:
    """(where, text) of each vector file's comments and each case's description and comment."""
    for path in sorted((REPO / "conformance" / "vectors").rglob("*.yaml")):
        rel = path.relative_to(REPO).as_posix()
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("#"):
                yield rel, line
    for case in _SUITE.cases:
        yield case.id, f"{case.description}\n{case.comment or ''}\nspec: {case.spec}"


def _texts() -> Iterator[tuple[str, str]]:
    for path in _documents():
        yield path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")
    yield from _vector_prose()


def _is_case_reference(token: str) -> bool:
    if not _CASE_LIKE.match(token) or token.split("/", 1)[0] not in OPERATIONS:
        return False
    return not token.endswith((".yaml", ".json", ".md", "/")) and "vectors/" not in token


def _case_exists(token: str) -> bool:
    if any(ch in token for ch in "*?["):
        return any(fnmatchcase(name, token) for name in CASE_NAMES)
    return token in CASE_NAMES


def broken_references(where: str, text: str) -> list[str]:
    """What ``text`` names that does not exist, each as ``where: what``."""
    broken = []
    for match in _QUOTED.finditer(text):
        token = next(group for group in match.groups() if group)
        if _is_case_reference(token) and not _case_exists(token):
            broken.append(f"{where}: case {token}")
    rules = [*_RULE_LINK.findall(text), *_RULE_WORD.findall(text), *_SPEC_FIELD.findall(text)]
    if where == "SPEC.md":
        rules += _LOCAL_LINK.findall(text)
    broken += [f"{where}: rule {rule}" for rule in rules if rule not in ANCHORS]
    for match in _SECTION.finditer(text):
        cited_elsewhere = _OTHER_DOCUMENT.search(text, max(0, match.start() - 16), match.start())
        if match.group(1) not in SECTIONS and cited_elsewhere is None:
            broken.append(f"{where}: section §{match.group(1)}")
    return broken


def test_every_document_names_only_cases_rules_and_sections_that_exist() -> None:
    broken = [problem for where, text in _texts() for problem in broken_references(where, text)]
    assert broken == []


def test_the_checked_documents_include_the_protocol_and_an_expectations_file() -> None:
    names = {path.name for path in _documents()}
    assert {"SPEC.md", "README.md", "PROTOCOL.md", "expectations.yaml"} <= names


@pytest.mark.parametrize(
    "text",
    [
        "see `read/bytes/bom`",
        '  - id: "read/basic/not-json"',
        "as SPEC.md#F99 says",
        "by rule X9",
        "  spec: Q1",
        "SPEC.md §99",
        "see §9.7",
        "[RFC7493], §2.2",
    ],
)
def test_a_reference_to_nothing_is_reported(text: str) -> None:
    assert broken_references("doc.md", text) != []


@pytest.mark.parametrize(
    "text",
    [
        "see `read/version/boolean-true` and `read/surrogate/*`",
        "as SPEC.md#F6 says, by rule E4, SPEC.md §13 and §9.1",
        "RFC 7493 §2.2 and RFC 8785 §3.2.2.2",
        "[RFC7493] §2.2 and [JSON-SCHEMA-CORE] §9.3",
        "the file `conformance/vectors/read/limits.yaml` and read/write access",
    ],
)
def test_a_reference_to_something_that_exists_is_not_reported(text: str) -> None:
    assert broken_references("doc.md", text) == []
