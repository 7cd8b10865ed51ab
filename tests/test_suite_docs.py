"""The examples in conformance/PROTOCOL.md and conformance/README.md are valid messages and
vectors: the documentation cannot drift from the schemas unnoticed."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from reasoning_replay.resources import data_path
from reasoning_replay.suite import schemas


def _json_lines(text: str) -> list[dict[str, Any]]:
    found = []
    for raw in text.splitlines():
        line = re.sub(r"^(runner →|adapter ←)\s*", "", raw.strip())
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            found.append(value)
    return found


def _schema_for(message: dict[str, Any]) -> str:
    cmd = message.get("cmd")
    if cmd == "start":
        return schemas.START_REQUEST
    if cmd == "run":
        return schemas.RUN_REQUEST
    if cmd == "stop":
        return schemas.STOP_REQUEST
    if "implementation" in message:
        return schemas.START_RESPONSE
    return schemas.RUN_RESPONSE


def test_protocol_examples_validate() -> None:
    messages = _json_lines(data_path("conformance", "PROTOCOL.md").read_text())
    assert len(messages) >= 10
    for m in messages:
        assert schemas.errors(_schema_for(m), m) == (), m


def test_readme_sample_vector_file_validates() -> None:
    text = data_path("conformance", "README.md").read_text()
    block = text.split("## A sample vector file", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    assert schemas.errors(schemas.VECTOR_FILE, yaml.safe_load(block)) == ()
