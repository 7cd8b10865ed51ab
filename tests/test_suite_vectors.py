"""Vector files: schema validation, ids and aliases, selection, bundle and hashing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.suite_fixture import case, write_suite
from reasoning_replay.suite import protocol, safe_yaml, vectors
from reasoning_replay.suite.expectations import parse_expectations
from reasoning_replay.suite.safe_yaml import MAX_ALIAS_EXPANSION
from reasoning_replay.suite.selection import Selection, select
from reasoning_replay.suite.vectors import (
    bundle_text,
    load_bundle,
    load_suite,
    load_vector_dirs,
    suite_hash,
)


def test_loads_cases_with_file_version_and_aliases(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"echo/a.yaml": [case("e/one", aliases=["e/old-one"])]})
    suite = load_vector_dirs([conf / "vectors"])
    assert suite.problems == ()
    (c,) = suite.cases
    assert c.file == "vectors/echo/a.yaml" and suite.version == "9.9.9"
    assert suite.find("e/old-one") is c and suite.find("e/one") is c


def test_schema_errors_drop_only_the_bad_case(tmp_path: Path) -> None:
    bad = case("e/bad")
    del bad["spec"]
    conf = write_suite(tmp_path, {"a.yaml": [case("e/good"), bad]})
    suite = load_vector_dirs([conf / "vectors"])
    assert [c.id for c in suite.cases] == ["e/good"]
    (p,) = suite.problems
    assert p.kind == "schema" and p.case_id == "e/bad" and "spec" in p.message


def test_expect_must_hold_exactly_one_of_output_and_reject(tmp_path: Path) -> None:
    both = case("e/both")
    both["expect"] = {"output": {}, "reject": {"code": "x"}}
    conf = write_suite(tmp_path, {"a.yaml": [both]})
    assert [p.kind for p in load_vector_dirs([conf / "vectors"]).problems] == ["schema"]


def test_duplicate_ids_and_aliases_are_problems(tmp_path: Path) -> None:
    conf = write_suite(
        tmp_path,
        {
            "a.yaml": [case("e/x"), case("e/y", aliases=["e/x"])],
            "b.yaml": [case("e/y")],
        },
    )
    suite = load_vector_dirs([conf / "vectors"])
    assert [p.kind for p in suite.problems] == ["duplicate_id", "duplicate_id"]


def test_yaml_values_without_json_form_are_reported(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {})
    (conf / "vectors" / "d.yaml").write_text(
        "description: d\ncases:\n- id: e/d\n  description: d\n  spec: X1\n  operation: echo\n"
        "  level: MUST\n  tags: []\n  input: {value: 2024-01-01}\n  expect: {output: {}}\n"
    )
    (p,) = load_vector_dirs([conf / "vectors"]).problems
    assert p.kind == "not_json" and p.pointer == "/cases/0/input/value"


def test_broken_yaml_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {})
    (conf / "vectors" / "bad.yaml").write_text("cases: [unclosed\n")
    (p,) = load_vector_dirs([conf / "vectors"]).problems
    assert p.kind == "yaml" and p.file == "vectors/bad.yaml"


def billion_laughs() -> str:
    """A few hundred bytes of YAML whose aliases stand for 10^9 strings."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    return "\n".join([*lines, "cases: [*l8]", ""])


def test_billion_laughs_vector_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"ok.yaml": [case("e/ok")]})
    (conf / "vectors" / "laughs.yaml").write_text(billion_laughs())
    suite = load_vector_dirs([conf / "vectors"])
    (p,) = suite.problems
    assert p.kind == "yaml" and p.file == "vectors/laughs.yaml"
    assert "aliases expand" in p.message and str(MAX_ALIAS_EXPANSION) in p.message
    assert [c.id for c in suite.cases] == ["e/ok"]


def test_alias_referring_to_its_own_node_is_refused(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {})
    (conf / "vectors" / "loop.yaml").write_text("cases: &c [*c]\n")
    (p,) = load_vector_dirs([conf / "vectors"]).problems
    assert p.kind == "yaml" and p.file == "vectors/loop.yaml" and "own node" in p.message


def test_a_key_written_twice_in_a_vector_file_is_a_named_problem(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"ok.yaml": [case("e/ok")]})
    (conf / "vectors" / "twice.yaml").write_text(
        "description: d\ncases:\n"
        "- id: e/twice\n  description: d\n  spec: X1\n  operation: echo\n  level: MUST\n"
        "  tags: []\n  input: {value: 1}\n  expect: {output: {value: 1}}\n"
        "  expect: {output: {value: 2}}\n"
    )
    suite = load_vector_dirs([conf / "vectors"])
    (p,) = suite.problems
    assert p.kind == "duplicate_key" and p.file == "vectors/twice.yaml"
    assert "'expect'" in p.message and "lines 10 and 11" in p.message
    assert [c.id for c in suite.cases] == ["e/ok"]


@pytest.mark.parametrize(
    ("text", "twice"),
    [
        ("a: 1\n'a': 2\n", True),  # a quoted key is the same key
        ("x: {b: [1, {c: 1, c: 2}]}\n", True),  # at any depth
        ("1: a\n'1': b\n", False),  # the integer 1 and the string '1' are two keys
        ("base: &b {k: 1}\nm: {<<: *b, j: 2}\nn: {<<: *b, k: 3}\n", False),  # merges
    ],
)
def test_duplicate_keys_are_found_by_tag_and_value(text: str, twice: bool) -> None:
    if twice:
        with pytest.raises(safe_yaml.YAMLDuplicateKeyError, match="written twice"):
            safe_yaml.load_yaml(text)
    else:
        assert safe_yaml.load_yaml(text) is not None


def test_aliases_within_the_bound_load_as_their_values(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {})
    (conf / "vectors" / "a.yaml").write_text(
        "description: d\ncases:\n"
        "- {id: e/a, description: d, spec: X1, operation: echo, level: MUST, tags: [],\n"
        "   input: &v {value: [1, 2]}, expect: {output: *v}}\n"
    )
    suite = load_vector_dirs([conf / "vectors"])
    assert suite.problems == ()
    assert suite.cases[0].expect.output == {"value": [1, 2]}


def test_vector_file_over_the_size_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = write_suite(tmp_path, {"small.yaml": [case("e/s")]})
    (conf / "vectors" / "big.yaml").write_text("# padding\n" * 100)
    monkeypatch.setattr(vectors, "MAX_VECTOR_FILE", 500)
    suite = load_vector_dirs([conf / "vectors"])
    (p,) = suite.problems
    assert p.kind == "too_large" and p.file == "vectors/big.yaml"
    assert [c.id for c in suite.cases] == ["e/s"]


def test_billion_laughs_expectations_file_is_a_problem() -> None:
    got = parse_expectations(billion_laughs().replace("cases:", "entries:"), "exp.yaml")
    assert isinstance(got, list) and "aliases expand" in got[0].message


def test_hash_covers_paths_and_bytes_in_sorted_order() -> None:
    a = suite_hash([("vectors/b.yaml", b"1"), ("vectors/a.yaml", b"2")])
    assert a == suite_hash([("vectors/a.yaml", b"2"), ("vectors/b.yaml", b"1")])
    assert a != suite_hash([("vectors/a.yaml", b"1"), ("vectors/b.yaml", b"2")])
    want = hashlib.sha256(b"vectors/a.yaml\x002\x00vectors/b.yaml\x001\x00").hexdigest()
    assert a == want


def test_bundle_round_trips(tmp_path: Path) -> None:
    conf = write_suite(
        tmp_path,
        {"a.yaml": [case("e/x", aliases=["e/w"], comment="c"), case("e/r", reject="bad_value")]},
    )
    suite = load_vector_dirs([conf / "vectors"])
    path = tmp_path / "bundle.json"
    path.write_text(bundle_text(suite))
    again = load_bundle(path)
    assert again.problems == ()
    assert again.cases == suite.cases
    assert (again.version, again.sha256) == (suite.version, suite.sha256)


def test_selection_filters_and_globs(tmp_path: Path) -> None:
    conf = write_suite(
        tmp_path,
        {
            "a.yaml": [
                case("read/a/one", tags=["t1"], level="MUST"),
                case("read/b/two", tags=["t2"], level="SHOULD", aliases=["legacy/two"]),
                case("cap/c", operation="other", tags=["t1"]),
            ]
        },
    )
    cases = load_vector_dirs([conf / "vectors"]).cases

    def ids(sel: Selection) -> list[str]:
        return [c.id for c in select(cases, sel)]

    assert ids(Selection(patterns=("read/*",))) == ["read/a/one", "read/b/two"]
    assert ids(Selection(patterns=("two",))) == ["read/b/two"]
    assert ids(Selection(patterns=("legacy/*",))) == ["read/b/two"]  # through the alias
    assert ids(Selection(operations=("other",))) == ["cap/c"]
    assert ids(Selection(tags=("t1",), levels=("MUST",))) == ["read/a/one", "cap/c"]
    assert ids(Selection(levels=("SHOULD",))) == ["read/b/two"]


def test_byte_members_decode_to_bytes() -> None:
    out = protocol.decode_byte_members({"text_base64": "77u/e30=", "other": 1})
    assert out == {"text": b"\xef\xbb\xbf{}", "other": 1}
    with pytest.raises(protocol.ByteMemberError):
        protocol.decode_byte_members({"text_base64": "!!"})
    with pytest.raises(protocol.ByteMemberError):
        protocol.decode_byte_members({"text": "", "text_base64": ""})


def test_load_suite_uses_a_fresh_bundle_and_ignores_a_stale_one(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case("e/x"), case("e/y", reject="bad_value")]})
    vectors = conf / "vectors"
    from_files = load_vector_dirs([vectors])
    bundle = conf / "vectors.bundle.json"
    bundle.write_text(bundle_text(from_files))
    fast = load_suite([vectors])
    assert fast.cases == from_files.cases and fast.sha256 == from_files.sha256
    # edit a vector: the bundle is stale, so the files are parsed
    (vectors / "a.yaml").write_text((vectors / "a.yaml").read_text().replace("e/y", "e/z"))
    assert [c.id for c in load_suite([vectors]).cases] == ["e/x", "e/z"]


@pytest.mark.parametrize("loader", [yaml.SafeLoader, safe_yaml._Loader], ids=["python", "default"])
def test_alias_bound_holds_for_either_yaml_loader(loader: type[Any]) -> None:
    with pytest.raises(safe_yaml.YAMLAliasError, match="aliases expand"):
        safe_yaml.load_yaml(billion_laughs(), loader)
    assert safe_yaml.load_yaml("a: &x [1, 2]\nb: *x\n", loader) == {"a": [1, 2], "b": [1, 2]}
