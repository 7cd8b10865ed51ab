"""tools/spec_examples.py: every example of SPEC §15 is what the reference computes, so a change
of the reference that changes an example fails here until SPEC.md is regenerated."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS_DIR = REPO / "tools"
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("spec_examples")


def test_every_example_of_spec_is_what_the_reference_computes(tool: ModuleType) -> None:
    assert tool.rendered(SPEC) == SPEC


def test_spec_names_every_example_once(tool: ModuleType) -> None:
    names = [block.name for block in tool.blocks(SPEC)]

    assert sorted(names) == sorted(tool.EXAMPLES)


def test_the_captured_example_has_the_byte_count_the_text_gives(tool: ModuleType) -> None:
    count = re.search(r"is captured \(C2, C3\) as exactly these (\d+) bytes", SPEC)

    assert count is not None
    assert int(count.group(1)) == len(tool.example_captured().encode("utf-8")) == 181


def test_the_history_example_validates_clean_and_its_log_line_is_a_finding(
    tool: ModuleType,
) -> None:
    validated = tool.run_command(["validate", "--format", "json", tool.HISTORY_NAME])
    scanned = tool.run_command(["scan", "--format", "json", tool.LOG_NAME])
    (file,) = json.loads(validated.out)["files"]

    assert (validated.status, file["findings"], file["replays_as_stored"]) == (0, [], True)
    assert scanned.status == 1
    view = json.loads(tool.example_redacted_record())["view"]
    prefix = json.loads(scanned.out)["findings"][0]["sha256_prefix"]
    assert view["encrypted_content_sha256"].startswith(prefix)  # as §15 says


def test_a_changed_example_is_caught_and_rewritten(tool: ModuleType, tmp_path: Path) -> None:
    stale = SPEC.replace('"effort\\":\\"medium\\"', '"effort\\":\\"high\\"', 1)
    assert stale != SPEC
    spec = tmp_path / "SPEC.md"
    spec.write_text(stale, encoding="utf-8")

    assert tool.main(["--spec", str(spec), "--check"]) == 1
    assert tool.main(["--spec", str(spec), "--write"]) == 0
    assert spec.read_text(encoding="utf-8") == SPEC
    assert tool.main(["--spec", str(spec), "--check"]) == 0


@pytest.mark.parametrize(
    "edit",
    [
        lambda spec: spec.replace("<!-- example: scan-json -->", "<!-- example: scan-xml -->"),
        lambda spec: spec.replace("<!-- example: log-line -->", "<!-- elsewhere -->"),
    ],
    ids=["unknown", "missing"],
)
def test_an_unknown_or_missing_example_is_an_error(tool: ModuleType, edit: object) -> None:
    assert callable(edit)
    with pytest.raises(tool.ExampleError):
        tool.rendered(edit(SPEC))


def test_an_unreadable_spec_is_exit_status_2(tool: ModuleType, tmp_path: Path) -> None:
    assert tool.main(["--spec", str(tmp_path / "absent.md"), "--check"]) == 2
