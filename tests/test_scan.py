"""Leak scan (SPEC H8): planted replay material is found, and only digests are ever reported."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from reasoning_replay import serialize_reasoning_replay_envelope
from reasoning_replay.cli.main import main as conformance
from reasoning_replay.history.scan import (
    ScanFinding,
    entries_under,
    material_in_text,
    scan_file,
    scan_paths,
    scan_text,
)
from reasoning_replay.operations import dispatch
from reasoning_replay.record.envelope import ReasoningReplayItem
from reasoning_replay.record.redaction import redact_structural as redact

SECRET = "gAAAAAB-scan-test-SECRET-0123456789abcdef=="
SECRET_2 = "gAAAAAB-scan-test-OTHER-SECRET-fedcba9876=="
FERNET_SHAPED = "gAAAAAB" + "pZk4yMrZw3XD" * 10  # 127 characters: a ciphertext by its shape


def prefix(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


def envelope(ciphertext: str) -> str:
    return serialize_reasoning_replay_envelope(
        ReasoningReplayItem(id="rs_1", summary=("Thinking.",), encrypted_content=ciphertext)
    )


def prefixes(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.sha256_prefix) for f in scan_text(text)]


def test_json_line_member_at_any_depth_and_case() -> None:
    text = "\n".join(
        [
            json.dumps({"encrypted_content": SECRET}),
            json.dumps({"a": [{"b": {"Encrypted_CONTENT": SECRET_2}}]}),
            json.dumps({"nothing": "here"}),
        ]
    )
    assert prefixes(text) == [(1, prefix(SECRET)), (2, prefix(SECRET_2))]


def test_envelope_text_as_json_string_is_one_finding_of_the_envelope_text() -> None:
    text = envelope(SECRET)
    line = json.dumps(
        {"channels": {"openai-reasoning-encrypted": [{"type": "text", "text": text}]}}
    )
    assert prefixes(line) == [(1, prefix(text))]  # the envelope, not also its member


def test_envelope_nested_three_json_levels_deep() -> None:
    text = envelope("c")
    line = json.dumps({"msg": json.dumps({"history": json.dumps({"block": text})})})
    assert prefixes(line) == [(1, prefix(text))]


def test_short_values_and_non_strings_are_not_findings() -> None:
    lines = [
        json.dumps({"encrypted_content": "x" * 15}),
        json.dumps({"encrypted_content": 10**20}),
        json.dumps({"encrypted_content": None}),
        '"encrypted_content": "...",',
    ]
    assert prefixes("\n".join(lines)) == []


def test_redacted_forms_are_not_findings() -> None:
    payload = {"input": [json.loads(envelope(SECRET))["item"], {"encrypted_content": SECRET}]}
    redacted = redact(payload)
    assert prefixes(json.dumps(redacted)) == []
    assert prefixes(json.dumps(redacted, indent=2)) == []
    assert prefixes(json.dumps(redact(redacted))) == []
    record = json.dumps(
        {
            "schema": "fast-agent.openai-responses.reasoning-replay.redacted",
            "version": 1,
            "was": "resumable",
            "view": redacted["input"][0],  # type: ignore[index]
        }
    )
    assert prefixes(json.dumps({"text": record})) == []


def test_fragments_in_plain_text_and_escaped_levels() -> None:
    level0 = f'DEBUG "encrypted_content": "{SECRET}" rest'
    level1 = json.dumps(json.dumps({"encrypted_content": SECRET}))[:-2] + " (truncated"
    level2 = json.dumps(json.dumps(json.dumps({"encrypted_content": SECRET_2})))[:-4]
    assert prefixes("\n".join([level0, level1, level2])) == [
        (1, prefix(SECRET)),
        (2, prefix(SECRET)),
        (3, prefix(SECRET_2)),
    ]


def test_embedded_json_in_plain_line_and_multiple_per_line() -> None:
    body = {"input": [{"encrypted_content": SECRET}, {"encrypted_content": SECRET_2}]}
    line = f"12:00 DEBUG [openai] request={json.dumps(body)} status=200"
    assert prefixes(line) == [(1, prefix(SECRET)), (1, prefix(SECRET_2))]


def test_duplicate_members_both_found() -> None:
    line = f'{{"encrypted_content": "{SECRET}", "encrypted_content": "{SECRET_2}"}}'
    assert prefixes(line) == [(1, prefix(SECRET)), (1, prefix(SECRET_2))]


def test_escaped_member_name_in_a_json_line() -> None:
    line = '{"encrypted\\u005fcontent": "' + SECRET + '"}'
    assert prefixes(line) == [(1, prefix(SECRET))]


def test_names_are_matched_by_their_normal_form() -> None:
    # SPEC R2's normal form removes every character that is not an ASCII letter or digit, so a
    # Unicode hyphen or a KELVIN SIGN before the name changes nothing; a Cyrillic letter in the
    # name is removed, never folded to its ASCII lookalike.
    for name in ("encrypted\u2010content", "\u212aencrypted_content", "encryptedContent"):
        assert prefixes(json.dumps({name: SECRET})) == [(1, prefix(SECRET))]
    assert prefixes(json.dumps({"encrypted_cont\u0435nt": SECRET})) == []


def test_pathological_lines_terminate() -> None:
    hostile = "encrypted " + "[" * 5000 + '"encrypted_content": "' + "A" * 20
    assert prefixes(hostile) == [(1, prefix("A" * 20))]  # a value cut off is still a leak
    deep = "[" * 100_000 + "]" * 100_000  # deeper than the JSON parser's recursion limit
    assert prefixes(deep + ' "encrypted_content": "' + SECRET + '"') == [(1, prefix(SECRET))]


def test_findings_never_carry_the_value() -> None:
    finding = scan_text(json.dumps({"encrypted_content": SECRET}))[0]
    assert finding == ScanFinding(1, prefix(SECRET))
    assert SECRET not in repr(finding) and SECRET not in json.dumps(finding.to_json())
    assert finding.to_json() == {
        "line": 1,
        "code": "replay_material_exposed",
        "sha256_prefix": prefix(SECRET),
    }


def test_material_in_text_yields_values_for_hashing() -> None:
    assert list(material_in_text(json.dumps({"x": {"encrypted_content": SECRET}}))) == [SECRET]


def test_scan_operation_matches_scan_text() -> None:
    text = json.dumps({"encrypted_content": SECRET}) + "\nplain\n"
    result = dispatch("scan", {"text": text})
    assert result.output == {
        "findings": [
            {"line": 1, "code": "replay_material_exposed", "sha256_prefix": prefix(SECRET)}
        ]
    }


# --- files and the command line -----------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "logs" / "nested").mkdir(parents=True)
    (tmp_path / "logs" / "app.jsonl").write_text(
        json.dumps({"msg": "ok"})
        + "\n"
        + json.dumps({"data": {"encrypted_content": SECRET}})
        + "\n"
    )
    (tmp_path / "logs" / "nested" / "trace.log").write_text(
        "start\n\n" + f"body={json.dumps({'block': envelope(SECRET_2)})}\n"
    )
    (tmp_path / "logs" / "clean.log").write_text("nothing to see\n")
    (tmp_path / "logs" / "blob.bin").write_bytes(b"\0\1\2" + FERNET_SHAPED.encode())
    (tmp_path / "logs" / "latin1.log").write_bytes(
        b"caf\xe9\n" + json.dumps({"encrypted_content": SECRET_2}).encode() + b"\n"
    )
    return tmp_path / "logs"


def test_scan_paths_recurses_skips_binary_and_notes_bad_utf8(tree: Path) -> None:
    results = {r.path.relative_to(tree).as_posix(): r for r in scan_paths([tree])}
    assert list(results) == sorted(results)
    assert [(f.line, f.sha256_prefix) for f in results["app.jsonl"].findings] == [
        (2, prefix(SECRET))
    ]
    assert [(f.line, f.sha256_prefix) for f in results["nested/trace.log"].findings] == [
        (3, prefix(envelope(SECRET_2)))
    ]
    assert results["clean.log"].findings == ()
    # Not text: a finding of its own, and read all the same (SPEC H8 fails closed).
    blob = results["blob.bin"].findings
    assert [f.code for f in blob] == ["scan_file_not_text", "replay_material_exposed"]
    assert results["blob.bin"].skipped is None
    latin1 = results["latin1.log"].findings
    assert [(f.code, f.line) for f in latin1] == [
        ("scan_file_not_text", 1),
        ("replay_material_exposed", 2),
    ]
    skipping = {r.path.name: r for r in scan_paths([tree], skip_binary=True)}
    assert skipping["blob.bin"].skipped is not None and skipping["blob.bin"].findings == ()
    assert skipping["latin1.log"].skipped is not None


def test_scan_file_reports_io_errors(tmp_path: Path) -> None:
    assert scan_file(tmp_path / "missing").error is not None
    assert list(entries_under(tmp_path / "x.log")) == [tmp_path / "x.log"]


def test_cli_text_output_exit_codes_and_no_values(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert conformance(["scan", str(tree)]) == 1
    out, err = capsys.readouterr()
    assert f"{tree / 'app.jsonl'}:2: replay_material_exposed sha256:{prefix(SECRET)}" in out
    assert f"{tree / 'blob.bin'}:1: scan_file_not_text sha256:" in out
    assert SECRET not in out + err and SECRET_2 not in out + err
    assert conformance(["scan", str(tree / "clean.log")]) == 0
    capsys.readouterr()
    assert conformance(["scan", str(tree / "clean.log"), str(tree / "nope")]) == 2
    assert "nope: error" in capsys.readouterr().err


def test_cli_json_output(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance(["scan", "--format", "json", str(tree)]) == 1
    out = capsys.readouterr().out
    document = json.loads(out)
    assert {"file": str(tree / "app.jsonl"), "line": 2} | {
        "code": "replay_material_exposed",
        "sha256_prefix": prefix(SECRET),
    } in document["findings"]
    assert document["skipped"] == []
    assert document["files_scanned"] == 5
    assert SECRET not in out and SECRET_2 not in out


def test_cli_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        conformance(["scan"])
    assert exit_info.value.code == 2
    capsys.readouterr()
