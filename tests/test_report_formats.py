"""The report formats of ``validate`` (text, JSON, SARIF) and ``scan`` (text, JSON), byte for
byte, over one fixed tree: tests/golden/report_formats.json holds what each printed when the
formats moved out of the command line (issue 15), as issue 21 changed them (histories only, one
JSON document, per-code text lines, SARIF regions, fingerprints and rule links). The registry's
meanings, the runner version, the public URL and the working directory are replaced by
placeholders, so that a SPEC wording change does not break the pin, while every byte the formats
add does."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from reasoning_replay.cli.main import main
from reasoning_replay.history.report_formats import registry
from reasoning_replay.suite import runner_version, schemas
from reasoning_replay.versions import versions
from support import envelope_text, history_of_blocks

GOLDEN = Path(__file__).resolve().parent / "golden" / "report_formats.json"
SARIF_SCHEMA = Path(__file__).resolve().parent / "vendor" / "sarif-schema-2.1.0.json"
MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_old"}'
COMMANDS = (
    ["validate", "--no-progress", "sessions", "exports"],
    ["validate", "--no-progress", "-v", "sessions", "exports"],
    ["validate", "--no-progress", "--format", "json", "sessions", "exports"],
    ["validate", "--no-progress", "--format", "sarif", "sessions", "exports"],
    ["scan", "logs", "missing"],
    ["scan", "--format", "json", "logs"],
    ["scan", "--skip-binary", "logs"],
)


def _write(path: Path, text: str, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def _tree(root: Path) -> None:
    """A session directory (0755) with each kind of finding, a broken file, a log that leaks."""
    session = root / "sessions" / "s1"
    session.mkdir(parents=True)
    session.chmod(0o755)
    _write(session / "session.json", '{"id": "x"}', 0o644)
    duplicate = envelope_text("rs_a", "cipher-a")
    _write(session / "history_dev.json", history_of_blocks(duplicate, duplicate))
    previous = history_of_blocks(envelope_text("rs_b", "cipher-b"))
    _write(session / "history_dev_previous.json", previous, 0o644)
    _write(session / "compacted_1.json", history_of_blocks(MINIMAL))
    _write(root / "exports" / "broken.json", "{")  # not JSON, not named as a history: skipped
    _write(root / "exports" / "package.json", '{"name": "x"}')  # skipped
    _write(root / "exports" / "compacted_2.json", "{")  # named as a history: malformed
    _write(root / "logs" / "app.log", 'start\n{"encrypted_content": "' + "Q" * 40 + '"}\n')
    _write(root / "logs" / "blob.bin", "\x00\x01binary")


def _placeholders(text: str) -> str:
    for code, (_, meaning) in registry().items():
        text = text.replace(meaning, f"<meaning of {code}>")
    for key in ('"version": ', '"version":', '"semanticVersion": '):
        text = text.replace(f'{key}"{runner_version()}"', f'{key}"<runner version>"')
    text = text.replace(versions().public_url, "<public url>")
    return text.replace("file://" + Path.cwd().as_posix() + "/", "file://<cwd>/")


def _outputs() -> list[dict[str, Any]]:
    outputs = []
    for argv in COMMANDS:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = main(argv)
        outputs.append(
            {
                "argv": argv,
                "status": status,
                "out": _placeholders(out.getvalue()),
                "err": _placeholders(err.getvalue()),
            }
        )
    return outputs


def test_every_report_format_prints_the_pinned_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for got, want in zip(_outputs(), expected, strict=True):
        assert got == want, got["argv"]


def test_every_json_output_is_one_document_valid_against_its_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """validate --format json, validate --format sarif and scan --format json, as printed."""
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    sarif = Draft7Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    checked = 0
    for argv in COMMANDS:
        if "json" not in argv and "sarif" not in argv:
            continue
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            main(argv)
        document = json.loads(out.getvalue())
        if "sarif" in argv:
            assert list(sarif.iter_errors(document)) == []
        else:
            name = schemas.VALIDATE_REPORT if argv[0] == "validate" else schemas.SCAN_REPORT
            assert schemas.errors(name, document) == (), argv
        checked += 1
    assert checked == 3
