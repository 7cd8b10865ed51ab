"""Every form of the leak corpus through every sink (issue 20; SPEC H6, H7, H8, R2).

A sink leaks a form when its output still shows the secret; ``scan`` must find every ciphertext
form. The sinks: a redacted export (the function and the CLI), the log filter with a plain and a
JSON formatter, the public ``redact()``, ``scan``, ``validate``'s reports (text, JSON, SARIF)
over a history that holds the form, and the error messages of every command given the form as a
file name, an option value and malformed input.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout, suppress
from pathlib import Path

import pytest
from reasoning_replay import redact
from reasoning_replay.cli.main import main
from reasoning_replay.history.export import ExportMode, export_history
from reasoning_replay.history.log_redaction import (
    ReplayRedactingFilter,
    ReplayRedactingJsonFormatter,
)
from reasoning_replay.history.scan import scan_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from leak_corpus import API_KEY, CIPHERTEXT, Form, corpus, leaks

FORMS = corpus()
CIPHERTEXT_FORMS = tuple(f for f in FORMS if f.kind == "ciphertext")


def _history(text: str) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "channels": {"tool-data": [{"type": "text", "text": text}]},
                "tool_calls": {"c1": {"name": "f", "arguments": text}},
            },
        ]
    }


def export_sink(text: str) -> str:
    exported = export_history(_history(text), ExportMode.REDACTED)
    return json.dumps(exported, ensure_ascii=False)


def _log(formatter: logging.Formatter, text: str) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ReplayRedactingFilter())
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"leak-corpus.{id(formatter)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        logger.warning(f"item {text}")
        logger.warning("item %s", text)
        logger.warning("data %(body)s", {"body": text})
        logger.warning("extra", extra={"payload": {"body": text}})
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def log_plain_sink(text: str) -> str:
    return _log(logging.Formatter("%(message)s"), text)


def log_json_sink(text: str) -> str:
    return _log(ReplayRedactingJsonFormatter(), text)


def redact_sink(text: str) -> str:
    return json.dumps(redact({"body": text, "items": [text]}), ensure_ascii=False)


SINKS: dict[str, Callable[[str], str]] = {
    "export": export_sink,
    "log-plain": log_plain_sink,
    "log-json": log_json_sink,
    "redact": redact_sink,
}


def leak_figures() -> dict[str, int]:
    """How many forms each sink lets through, and how many ciphertext forms scan misses."""
    figures = {name: sum(leaks(sink(f.text), f) for f in FORMS) for name, sink in SINKS.items()}
    figures["scan-missed"] = sum(not scan_text(f.text) for f in CIPHERTEXT_FORMS)
    return figures


def test_the_corpus_has_at_least_a_hundred_forms_of_both_secrets() -> None:
    assert len(FORMS) >= 100
    assert {f.kind for f in FORMS} == {"ciphertext", "api-key"}
    assert len({(f.kind, f.form_class, f.name) for f in FORMS}) == len(FORMS)


@pytest.mark.parametrize("sink", sorted(SINKS))
def test_no_form_leaks_through_a_sink(sink: str) -> None:
    leaked = [f"{f.kind}/{f.form_class}/{f.name}" for f in FORMS if leaks(SINKS[sink](f.text), f)]
    assert leaked == []


def test_scan_finds_every_ciphertext_form() -> None:
    missed = [f"{f.form_class}/{f.name}" for f in CIPHERTEXT_FORMS if not scan_text(f.text)]
    assert missed == []


def test_a_redacted_export_holds_nothing_scan_finds() -> None:
    found = [f"{f.kind}/{f.name}" for f in FORMS if scan_text(export_sink(f.text))]
    assert found == []


def _run(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), suppress(SystemExit):
        main(argv)
    return out.getvalue() + err.getvalue()


def _write(path: Path, form: Form) -> None:
    path.write_text(json.dumps(_history(form.text)), encoding="utf-8")
    path.chmod(0o600)


@pytest.mark.parametrize("report", ["text", "json", "sarif"])
def test_validate_reports_show_no_form(tmp_path: Path, report: str) -> None:
    for index, form in enumerate(FORMS):
        _write(tmp_path / f"history_{index}.json", form)
    shown = _run(["validate", "--no-progress", "--format", report, str(tmp_path)])
    assert [f.name for f in FORMS if leaks(shown, f)] == []


def test_export_cli_writes_no_form_and_says_none(tmp_path: Path) -> None:
    for index, form in enumerate(FORMS[::7]):
        source = tmp_path / f"in_{index}.json"
        _write(source, form)
        target = tmp_path / f"out_{index}.json"
        shown = _run(["export", "--mode", "redacted", str(source), str(target)])
        assert not leaks(shown + target.read_text(encoding="utf-8"), form), form.name


def test_error_messages_do_not_echo_a_canary(tmp_path: Path) -> None:
    # A ciphertext in option values and malformed input, an API key in a file name, for every
    # history command and the suite commands that name what they were given. (`run --impl`
    # shows the implementation's command line as given: the user's own command, not data.)
    named = tmp_path / f"api_key={API_KEY}.json"
    named.write_text("{not json " + CIPHERTEXT, encoding="utf-8")
    named.chmod(0o600)
    commands = [
        ["validate", "--no-progress", str(named)],
        ["validate", "--no-progress", "--format", CIPHERTEXT, str(named)],
        ["export", "--mode", "redacted", str(named), str(tmp_path / "o.json")],
        ["export", "--mode", CIPHERTEXT, str(named), str(tmp_path / "o.json")],
        ["scan", str(named)],
        ["scan", "--format", CIPHERTEXT, str(named)],
        ["list", "-k", CIPHERTEXT],
        ["request", CIPHERTEXT],
    ]
    shown = {argv[0] + " " + argv[1]: _run(argv) for argv in commands}
    echoed = [name for name, text in shown.items() if CIPHERTEXT in text or API_KEY in text]
    assert echoed == []
