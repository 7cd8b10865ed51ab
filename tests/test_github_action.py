"""action.yml, the composite GitHub Action: its shell steps run here as a runner runs them.

The test reads action.yml, checks it against the GitHub Action schema that check-jsonschema
ships (offline), and runs each ``run:`` step with bash in a scratch checkout: ``${{ inputs.X }}``
and ``${{ steps.S.outputs.Y }}`` replaced as the runner replaces them, ``GITHUB_OUTPUT`` and
``GITHUB_ACTION_PATH`` set. The ``uses:`` steps (setup-python, upload-sarif) are the runner's
own; the test checks what they are given. The SARIF log the steps write is checked against the
SARIF 2.1.0 schema.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import check_jsonschema
import pytest
import yaml
from jsonschema import Draft7Validator
from support import envelope_text, history_of_blocks

REPO = Path(__file__).resolve().parents[1]
ACTION: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
SARIF_SCHEMA = json.loads(
    (Path(__file__).parent / "vendor" / "sarif-schema-2.1.0.json").read_text("utf-8")
)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_old"}'


def evaluate(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The two kinds of expression the action's shell steps use, as the runner evaluates them."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        assert step is not None, f"the test cannot evaluate {expression!r}"
        return outputs.get(step.group(1), {}).get(step.group(2), "")

    return EXPRESSION.sub(value, text)


def run_shell_steps(checkout: Path, given: dict[str, str]) -> tuple[list[int], dict[str, str]]:
    """Every ``run:`` step in order, stopping at the first that fails, as a runner does; each
    step's exit status, and the outputs of the step ``validate``."""
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    assert set(given) <= set(inputs), set(given) - set(inputs)
    inputs |= given
    outputs: dict[str, dict[str, str]] = {}
    statuses = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        output_file = checkout.parent / f"output-{len(statuses)}"
        output_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_ACTION_PATH": str(REPO),
        }
        env |= {k: evaluate(str(v), inputs, outputs) for k, v in step.get("env", {}).items()}
        assert not EXPRESSION.search(step["run"]), "expressions belong in env, never in run"
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        statuses.append(result.returncode)
        if "id" in step:
            lines = output_file.read_text().splitlines()
            outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        if result.returncode != 0:
            break
    return statuses, outputs.get("validate", {})


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository checkout as actions/checkout leaves it: files 0644, a package.json, a
    session directory of histories."""
    root = tmp_path / "checkout"
    session = root / ".fast-agent" / "sessions" / "s1"
    session.mkdir(parents=True)
    (root / "package.json").write_text('{"name": "web"}')
    (session / "history_dev.json").write_text(history_of_blocks(envelope_text("rs_a", "c")))
    (session / "compacted_1.json").write_text(history_of_blocks(MINIMAL))
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules" / "x" / "history_vendored.json").write_text("{")
    return root


def test_action_yml_is_a_valid_composite_action() -> None:
    schema_file = (
        Path(check_jsonschema.__file__).parent / "builtin_schemas/vendor/github-actions.json"
    )
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    Draft7Validator(schema).validate(ACTION)
    assert ACTION["runs"]["using"] == "composite"


def test_the_steps_set_up_python_and_upload_the_sarif_log_the_validate_step_writes() -> None:
    uses = {s["uses"].split("@")[0]: s for s in ACTION["runs"]["steps"] if "uses" in s}
    assert set(uses) == {"actions/setup-python", "github/codeql-action/upload-sarif"}
    upload = uses["github/codeql-action/upload-sarif"]
    assert upload["with"]["sarif_file"] == "${{ steps.validate.outputs.sarif-file }}"
    assert upload["if"] == "inputs.upload == 'true'"


def test_the_shell_steps_write_a_valid_sarif_log_and_fail_on_error_findings(
    checkout: Path,
) -> None:
    given = {"exclude": "node_modules/\n", "sarif-file": "out/validate.sarif"}
    (checkout / "out").mkdir()
    statuses, outputs = run_shell_steps(checkout, given)
    assert statuses == [0, 0, 0]  # install (already installed here), validate, fail-on-error
    assert outputs == {"sarif-file": "out/validate.sarif", "exit-status": "0"}
    log = json.loads((checkout / "out" / "validate.sarif").read_text())
    assert list(Draft7Validator(SARIF_SCHEMA).iter_errors(log)) == []
    (result,) = log["runs"][0]["results"]  # the legacy record: a warning; permissions ignored
    assert result["ruleId"] == "legacy_minimal_record"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        ".fast-agent/sessions/s1/compacted_1.json"
    )

    (checkout / ".fast-agent" / "sessions" / "s1" / "history_dev.json").write_text("{")
    statuses, outputs = run_shell_steps(checkout, given)
    assert statuses == [0, 0, 1] and outputs["exit-status"] == "1"
    statuses, _ = run_shell_steps(checkout, {**given, "fail-on-error": "false"})
    assert statuses == [0, 0, 0]


def test_nothing_to_validate_fails_the_validate_step(checkout: Path) -> None:
    statuses, outputs = run_shell_steps(checkout, {"paths": "node_modules/x/missing"})
    assert statuses == [0, 2] and outputs["exit-status"] == "2"
    statuses, _ = run_shell_steps(checkout, {"exclude": "*.json"})
    assert statuses == [0, 2]
