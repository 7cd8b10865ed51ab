"""conformance/README.md's examples of the test helpers run exactly as they are written: the
Python block as a pytest file beside a ``my_sdk`` made of the reference, the JavaScript block as a
``node:test`` file beside a ``my-sdk.js`` made of the JavaScript implementation, the package
found by its name. Each passes every case it selects, ``text_base64`` inputs included; against a
wrong SDK each fails every case, with a traceback that shows the test's line and no line of the
helper."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reasoning_replay.suite import vector_cases
from reasoning_replay.versions import NPM_PACKAGE_NAME

REPO = Path(__file__).resolve().parents[1]
JS_PACKAGE = REPO / "conformance" / "adapters" / "js"
SECTION = "### Use the vectors from pytest or node:test"
GUARD_SECONDS = 600  # a hang guard, not a measurement

# The reference as the README's `my_sdk`, and a wrong one: every block read as the same item.
MY_SDK = """
from types import SimpleNamespace

from reasoning_replay import parse_reasoning_replay_envelope


def read_block(block):
    result = parse_reasoning_replay_envelope(block)
    item = None if result.item is None else result.item.to_provider_input()
    return SimpleNamespace(code=result.code, item=item)
"""
WRONG_SDK = """
from types import SimpleNamespace


def read_block(block):
    return SimpleNamespace(code=None, item={"id": "wrong"})
"""
MY_SDK_JS = f"export {{ readEnvelope as read }} from '{NPM_PACKAGE_NAME}';\n"
WRONG_SDK_JS = "export function read() {\n  return { ok: true, item: { id: 'wrong' } };\n}\n"


def example(language: str) -> str:
    """The one ``language`` block of the README's helper section, as written."""
    text = (REPO / "conformance" / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) : text.index("\n### ", text.index(SECTION) + 1)]
    blocks = re.findall(rf"^```{language}\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, f"expected one {language} block in {SECTION!r}"
    return str(blocks[0])


def read_must_cases() -> int:
    return len(vector_cases(operation="read", levels="MUST"))


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTEST_ADDOPTS"}}


def run_python_example(directory: Path, sdk: str) -> subprocess.CompletedProcess[str]:
    (directory / "test_conformance.py").write_text(example("python"), encoding="utf-8")
    (directory / "my_sdk.py").write_text(sdk, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_conformance.py"],
        cwd=directory,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )


def run_js_example(directory: Path, sdk: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: the JavaScript implementation needs Node >= 20 (see README)")
    (directory / "package.json").write_text('{"private": true, "type": "module"}\n', "utf-8")
    (directory / "node_modules").mkdir()
    (directory / "node_modules" / NPM_PACKAGE_NAME).symlink_to(JS_PACKAGE)
    (directory / "my-sdk.js").write_text(sdk, encoding="utf-8")
    (directory / "conformance.test.js").write_text(example("js"), encoding="utf-8")
    return subprocess.run(
        [node, "--test", "--test-reporter=tap", "conformance.test.js"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )


def tap_count(output: str, name: str) -> int:
    found = re.search(rf"^# {name} (\d+)$", output, re.MULTILINE)
    assert found is not None, output[-3000:]
    return int(found.group(1))


def test_the_examples_select_cases_given_as_bytes() -> None:
    cases = vector_cases(operation="read", levels="MUST")
    as_bytes = [case for case in cases if "text_base64" in case.input]

    assert as_bytes, "no read MUST case carries text_base64: the examples' decoding is untested"


def test_the_python_example_passes_every_case_it_selects(tmp_path: Path) -> None:
    completed = run_python_example(tmp_path, MY_SDK)

    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert re.search(rf"^{read_must_cases()} passed", completed.stdout, re.MULTILINE), (
        completed.stdout[-500:]
    )


def test_the_python_example_fails_a_wrong_sdk_showing_the_tests_line_and_no_helper_line(
    tmp_path: Path,
) -> None:
    completed = run_python_example(tmp_path, WRONG_SDK)

    failures = read_must_cases()
    summary = re.search(rf"^{failures} failed", completed.stdout, re.MULTILINE)
    assert summary is not None, completed.stdout[-500:]
    tracebacks = completed.stdout.split("short test summary info")[0]
    sections = re.split(r"^_+ test_read\[.*\] _+$", tracebacks, flags=re.MULTILINE)
    shown = sections[1:]
    assert len(shown) == failures
    budget = len(example("python").splitlines())  # the test's own source, at most
    for section in shown:
        assert re.search(r"^>\s+assert_case\(", section, re.MULTILINE), section
        assert "def assert_case" not in section, section
        assert "cases.py" not in section, section
        assert len(section.strip().splitlines()) <= budget, section


def test_the_js_example_passes_every_case_it_selects(tmp_path: Path) -> None:
    completed = run_js_example(tmp_path, MY_SDK_JS)

    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert tap_count(completed.stdout, "pass") == read_must_cases()
    assert tap_count(completed.stdout, "fail") == 0


def test_the_js_example_fails_a_wrong_sdk_with_stacks_that_start_in_the_test(
    tmp_path: Path,
) -> None:
    completed = run_js_example(tmp_path, WRONG_SDK_JS)

    assert tap_count(completed.stdout, "fail") == read_must_cases()
    stacks = re.findall(r"^\s+stack: \|-\n\s+(.*)$", completed.stdout, re.MULTILINE)
    assert len(stacks) == read_must_cases()
    assert all("conformance.test.js" in first for first in stacks), stacks[:3]
    assert "node-test.js" not in completed.stdout
