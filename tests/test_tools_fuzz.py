"""``tools/fuzz.py`` at a tiny budget: it runs, it is reproducible, and it catches planted bugs.

The fuzzer is a test that can fail: a reader path that trusts ``json.loads`` (which keeps the
last of two duplicate members and reads ``NaN``) and an export that redacts nothing are planted
next to the real ones, and each must come back as a finding with a reduced reproducer. Budgets
are iteration counts, never times, so the results do not depend on the machine's speed.
"""

from __future__ import annotations

import base64
import importlib
import json
import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from reasoning_replay import Code
from reasoning_replay.history.export import ExportMode, export_history
from reasoning_replay.record.envelope import check_envelope_value

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
SEED = 20261201


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("fuzz")


def run(fuzz: ModuleType, iterations: int, **overrides: Any) -> dict[str, Any]:
    targets = overrides.pop("targets", None)
    overrides.setdefault("reduce", False)
    config = fuzz.Config(seed=SEED, seconds=600, iterations=iterations, js=None, **overrides)
    fuzzer = fuzz.Fuzzer(config, targets)
    fuzzer.run()
    report: dict[str, Any] = fuzzer.report(0.0)
    return report


def test_the_reader_paths_and_capture_agree_on_a_short_run(fuzz: ModuleType) -> None:
    report = run(fuzz, 400)
    assert report["executions"] >= 400
    assert report["executions_by_kind"]["read"] > 0
    assert report["executions_by_kind"]["capture"] > 0
    assert report["executions_by_kind"]["history"] > 0
    assert report["comparisons"] > report["executions"]
    assert any(
        path.startswith("reader[canonical=py,strict=py]") for path in report["paths_compared"]
    )
    reader_findings = [f for f in report["findings"] if f["check"] in ("read", "capture")]
    assert reader_findings == []


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_implementation_reads_as_the_reference(fuzz: ModuleType) -> None:
    config = fuzz.Config(seed=SEED, seconds=600, iterations=300, reduce=False)
    fuzzer = fuzz.Fuzzer(config)
    fuzzer.run()
    report = fuzzer.report(0.0)
    assert "js(bytes)" in report["paths_compared"]
    assert report["js_restarts"] == 0
    assert [f for f in report["findings"] if f["check"] in ("read", "capture")] == []


def test_a_run_is_determined_by_its_seed(fuzz: ModuleType) -> None:
    first, second = run(fuzz, 100, reduce=True), run(fuzz, 100, reduce=True)
    assert first == second
    other = fuzz.Fuzzer(fuzz.Config(seed=SEED + 1, iterations=100, js=None, reduce=False))
    other.run()
    assert other.report(0.0)["history_forms"] != first["history_forms"]


def trusting_json_loads(text: str | bytes) -> tuple[str, str]:
    """A planted bug: a reader that checks the value ``json.loads`` makes of the text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return ("reject", Code.JSON_MALFORMED.value)
    checked = check_envelope_value(value)
    if isinstance(checked, Code):
        return ("reject", checked.value)
    return ("item", json.dumps(checked.to_provider_input(), sort_keys=True))


def test_a_planted_reader_bug_is_found_with_a_reduced_reproducer(fuzz: ModuleType) -> None:
    targets = fuzz.Targets()
    targets.paths["planted"] = trusting_json_loads
    report = run(fuzz, 200, targets=targets, reduce=True)
    planted = [
        f for f in report["findings"] if f["check"] == "read" and "planted" in f["signature"]
    ]
    assert planted, report["findings"]
    for finding in planted:
        data = finding["reproducer"]["input"]
        text = base64.b64decode(data["text_base64"]) if "text_base64" in data else data["text"]
        assert fuzz.read_failures(targets, text), "the reproducer no longer fails"
        # Reduced: no single character (or byte) can go without losing the difference.
        for at in range(len(text)):
            smaller = text[:at] + text[at + 1 :]
            assert finding["signature"] not in fuzz.read_failures(targets, smaller)


def test_an_export_that_redacts_nothing_is_found(fuzz: ModuleType) -> None:
    def export_as_stored(history: object, mode: ExportMode, **options: bool) -> object:
        return export_history(history, ExportMode.RESUMABLE)

    targets = fuzz.Targets(export=export_as_stored)
    # Enough executions that some history holds its canary in the replay channel (the forms and
    # places follow the seed and the read vectors, which seed the read batches before them).
    report = run(fuzz, 800, targets=targets)
    leaks = [f for f in report["findings"] if f["signature"].startswith(fuzz.LEAK)]
    # The real export redacts the replay channel; this one keeps its envelopes.
    places = {place.split("/")[0] for place in report["export_leaks_by_place_and_form"]}
    assert leaks
    assert "replay-channel" in places


def test_a_c_history_reading_that_drops_the_provider_is_found(
    fuzz: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C reading of history files is compared with json's on every history the fuzzer
    makes: one that forgets a message's recorded provider (SPEC P4) must come back."""
    from reasoning_replay.history import history_files  # noqa: PLC0415

    real = history_files._accelerator
    if real is None:
        pytest.skip("the C accelerator is not built")

    def forgetful(data: str | bytes, no_channels: Any, stored_texts: str | None) -> Any:
        read = real(data, no_channels, stored_texts)
        return None if read is None else [(role, channels, None) for role, channels, _ in read]

    monkeypatch.setattr(history_files, "_accelerator", forgetful)
    text = json.dumps({"messages": [{"role": "user", "content": [], "provider": "xai"}]})
    assert "_history reads otherwise than json (str)" in fuzz.history_reading_differences(text)
    rng = random.Random(SEED)
    found: set[str] = set()
    # The fuzzer's own histories, some of which record a provider; many others are left to the
    # slower readings (an escaped lone surrogate, a member nested deeper than the C reading goes).
    for _ in range(200):
        if "_history reads otherwise than json (bytes)" in found:
            break
        history, _canary, _form = fuzz.random_history(rng)
        found |= set(fuzz.history_failures(fuzz.Targets(), fuzz.history_text(history, rng), None))
    assert "_history reads otherwise than json (bytes)" in found


def test_the_command_writes_its_report_and_exits_1_on_a_finding(
    fuzz: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "fuzz.json"
    status = fuzz.main(
        ["--iterations", "40", "--no-js", "--seed", str(SEED), "--report", str(report_path)]
    )
    report = json.loads(report_path.read_text())
    assert report["executions"] >= 40
    assert status == (1 if report["findings"] else 0)
    out = capsys.readouterr().out
    assert f"{report['executions']} executions" in out
    assert out.count("reproducer: ") == len(report["findings"])


def test_a_scan_that_finds_nothing_is_found(fuzz: ModuleType) -> None:
    targets = fuzz.Targets(scan=lambda text: ())
    report = run(fuzz, 400, targets=targets)
    assert any(f["signature"].startswith(fuzz.SCAN_MISS) for f in report["findings"])


SANITIZER_STDERR = """\
=================================================================
==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020 at pc 0x7f bp 0x7f sp 0x7f
READ of size 1 at 0x6020 thread T0
    #0 0x7f in read_string reference_impl/reasoning_replay/_json_strings.h:88
reference_impl/reasoning_replay/_strict.c:120:9: runtime error: signed integer overflow

Direct leak of 48 byte(s) in 1 object(s) allocated from:
    #0 0x7f in malloc
    #1 0x7f in parse_value reference_impl/reasoning_replay/_strict.c:201

Indirect leak of 16 byte(s) in 1 object(s) allocated from:
    #0 0x7f in malloc
    #1 0x7f in PyList_New Objects/listobject.c:160

SUMMARY: AddressSanitizer: 64 byte(s) leaked in 2 allocation(s).
"""


def test_sanitize_counts_every_sanitizer_report() -> None:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    sanitize = importlib.import_module("sanitize")
    errors = sanitize.sanitizer_errors(SANITIZER_STDERR)
    assert len(errors) == 4
    assert (
        errors[0]
        == "Direct leak of 48 byte(s) in 1 object(s) allocated from: (in the accelerators)"
    )
    assert errors[1] == "Indirect leak of 16 byte(s) in 1 object(s) allocated from:"
    assert "heap-buffer-overflow" in errors[2]
    assert "runtime error: signed integer overflow" in errors[3]
    assert sanitize.sanitizer_errors("sanitize-result: {}\n") == []
