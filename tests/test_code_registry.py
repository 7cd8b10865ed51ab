"""schema/diagnostic-codes.v1.json, the closed registry as data, against every other statement of
it: SPEC §12's table, the reference's ``Code`` enum, the validator's severities (SPEC H3) and the
JavaScript implementation's ``CODES``. Each failure says what to add or change, and where."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from reasoning_replay.diagnostics import Code
from reasoning_replay.history.validation import severity_of
from reasoning_replay.schemas import DIAGNOSTIC_CODES_SCHEMA_ID, validator_for
from reasoning_replay.suite.specdoc import parse_spec

REPO = Path(__file__).resolve().parents[1]
REGISTRY_PATH = REPO / "schema" / "diagnostic-codes.v1.json"
REGISTRY_FILE = "schema/diagnostic-codes.v1.json"
ENUM_FILE = "reference_impl/reasoning_replay/diagnostics.py"
JS_FILE = "conformance/adapters/js/lib/codes.js"


def registry() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
    return document


def entries() -> list[dict[str, Any]]:
    return list(registry()["codes"])


def registry_codes() -> list[str]:
    return [entry["code"] for entry in entries()]


def js_codes() -> list[str]:
    text = (REPO / JS_FILE).read_text(encoding="utf-8")
    block = re.search(r"export const CODES = Object\.freeze\(\[(.*?)\]\);", text, re.DOTALL)
    assert block is not None, f"{JS_FILE}: no `export const CODES = Object.freeze([...]);`"
    return re.findall(r"'([^']+)'", block.group(1))


def test_registry_file_validates_against_its_schema() -> None:
    validator = validator_for(DIAGNOSTIC_CODES_SCHEMA_ID)
    Draft202012Validator.check_schema(validator.schema)

    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(registry())]

    assert not errors, f"{REGISTRY_FILE} breaks its schema:\n" + "\n".join(errors)


def test_registry_file_lists_each_code_once() -> None:
    codes = registry_codes()

    repeated = sorted({code for code in codes if codes.count(code) > 1})
    assert not repeated, f"{REGISTRY_FILE} lists these codes more than once: {repeated}"


def test_registry_file_equals_the_spec_table_row_by_row() -> None:
    spec = parse_spec((REPO / "SPEC.md").read_text(encoding="utf-8")).registry
    expected = [(row.code, row.anchor, row.meaning) for row in spec]
    by_code = {entry["code"]: entry for entry in entries()}
    problems = []
    for position, (code, rule, summary) in enumerate(expected):
        entry = by_code.get(code)
        wanted = {"code": code, "rule": rule, "summary": summary}
        if entry is None:
            after = f"after `{expected[position - 1][0]}`" if position else "first"
            problems.append(
                f'add {json.dumps(wanted, ensure_ascii=False)} to "codes" in {REGISTRY_FILE} '
                f'({after}), with a "severity" if SPEC H3 gives the code one'
            )
        elif (entry["rule"], entry["summary"]) != (rule, summary):
            problems.append(
                f"in {REGISTRY_FILE}, set `{code}` to rule {rule!r} and summary {summary!r}, "
                "as SPEC §12 says"
            )
    spec_codes = [code for code, _, _ in expected]
    problems += [
        f"remove `{code}` from {REGISTRY_FILE}, or add its row to SPEC §12"
        for code in registry_codes()
        if code not in spec_codes
    ]
    if not problems and registry_codes() != spec_codes:
        problems.append(f'order "codes" in {REGISTRY_FILE} as SPEC §12 does: {spec_codes}')

    sync = f"(`python tools/release.py --sync` rewrites {REGISTRY_FILE} from SPEC §12)"
    assert not problems, "\n".join([*problems, sync])


def test_reference_code_enum_holds_exactly_the_registry() -> None:
    enum_codes = [code.value for code in Code]
    problems = [
        f'add `{code.upper()} = "{code}"` to class Code in {ENUM_FILE}'
        for code in registry_codes()
        if code not in enum_codes
    ]
    problems += [
        f"`{code}` of class Code in {ENUM_FILE} is not in {REGISTRY_FILE}: register it there "
        "(and in SPEC §12), or remove it from the enum"
        for code in enum_codes
        if code not in registry_codes()
    ]

    assert not problems, "\n".join(problems)


def test_javascript_codes_hold_exactly_the_registry() -> None:
    actual = js_codes()
    problems = [
        f"add '{code}' to CODES in {JS_FILE}" for code in registry_codes() if code not in actual
    ]
    problems += [
        f"'{code}' of CODES in {JS_FILE} is not in {REGISTRY_FILE}: register it there "
        "(and in SPEC §12), or remove it from CODES"
        for code in actual
        if code not in registry_codes()
    ]

    assert not problems, "\n".join(problems)


def test_severities_are_the_reference_validators() -> None:
    problems = [
        f"`{entry['code']}` has severity {entry['severity']!r} in {REGISTRY_FILE} but "
        f"{severity_of(Code(entry['code'])).value!r} in "
        "reasoning_replay.history.validation.severity_of; "
        "SPEC H3 decides which is right"
        for entry in entries()
        if "severity" in entry and severity_of(Code(entry["code"])).value != entry["severity"]
    ]

    assert not problems, "\n".join(problems)


def test_registry_version_is_its_schema_ids() -> None:
    assert DIAGNOSTIC_CODES_SCHEMA_ID.endswith(f".v{registry()['version']}")


def test_validate_report_schema_pairs_each_code_with_its_registry_severity() -> None:
    """conformance/schemas/validate-report.schema.json lists the codes of each severity; they
    must be the registry's, plus the permission codes as warnings (SPEC H3 lets a user lower
    them), so that a validator's JSON report is checked against SPEC H3 and nothing else."""
    schema = json.loads(
        (REPO / "conformance/schemas/validate-report.schema.json").read_text(encoding="utf-8")
    )
    listed = {
        branch["properties"]["severity"]["const"]: set(branch["properties"]["code"]["enum"])
        for branch in schema["$defs"]["finding"]["oneOf"]
    }
    lowerable = {"file_mode_too_open", "directory_mode_too_open"}
    expected: dict[str, set[str]] = {}
    for entry in entries():
        if "severity" in entry:
            expected.setdefault(entry["severity"], set()).add(entry["code"])
    expected.setdefault("warning", set()).update(lowerable)

    assert listed == expected
