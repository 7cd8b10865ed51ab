"""SPEC §15's examples, computed by the reference, so that they never drift from what it does.

    python tools/spec_examples.py [--spec PATH] [--write | --check]

Each example in SPEC.md is a fenced block right after a marker ``<!-- example: NAME -->``; NAME is
a key of :data:`EXAMPLES`, a function that computes the block's exact text from the reference:
the captured envelope and the replayed item of the golden SDK item (C2, C3, P1), a history file
in H1's shape whose blocks the writer, the display text and the planner made, the redacted record
and the markers an export writes (H2, H6), and what ``conformance validate`` and ``conformance
scan`` print for it (H3, H8). The commands run in-process on files in a private temporary
session directory (0700, files 0600), so their output does not depend on the caller's umask.

Without ``--write`` or ``--check`` the differences are printed. ``--write`` rewrites SPEC.md's
blocks; ``--check`` exits 1 when one differs. Exit status: 0 in sync or written, 1 stale, 2 an
unknown or missing example, or SPEC.md cannot be read or written.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from reasoning_replay import parse_reasoning_replay_envelope
from reasoning_replay.atomic_files import replace_file
from reasoning_replay.cli import scan, validate
from reasoning_replay.cli.export import cmd_export
from reasoning_replay.cli.main import build_parser
from reasoning_replay.operations import dispatch
from reasoning_replay.record.display import display_text

REPO: Final = Path(__file__).resolve().parents[1]
SPEC_PATH: Final = REPO / "SPEC.md"
_BLOCK: Final = re.compile(
    r"<!-- example: (?P<name>[a-z0-9-]+) -->\n```[a-z]*\n(?P<body>(?:(?!```).)*)```",
    re.DOTALL,
)

# The golden SDK item of §15 (the same as tests/support.py's), as the SDK returns it.
SDK_ITEM: Final = (
    '{"id": "rs_1", "type": "reasoning", "status": "completed", "content": null,\n'
    ' "summary": [{"type": "summary_text", "text": "é", "annotations": []}],\n'
    ' "encrypted_content": "c", "new_sdk_field": 7}'
)
SOURCE: Final = "response.output_item.done"
# The history file's reasoning item, as the provider returned it on response.output_item.done.
HISTORY_ITEM: Final = {
    "id": "rs_68a1",
    "type": "reasoning",
    "status": "completed",
    "summary": [{"type": "summary_text", "text": "Checking the forecast for rain."}],
    "encrypted_content": "gAAAAABpZXhhbXBsZS1yZWFzb25pbmctc3RhdGU=",
}
USER_TURN: Final = "Will it rain in Lisbon today?"
ANSWER: Final = "No rain is expected in Lisbon today."
MODEL: Final = "gpt-6-astra"
EFFORT: Final = "medium"
INSTANCE_KEY: Final = "9f2c4e1a7b3d5f608e1c2a4b6d8f0e13"
HISTORY_NAME: Final = "history_agent.json"
LOG_NAME: Final = "debug.log"


# ---------------------------------------------------------------------------------------------
# The examples (pure, apart from the commands run on a private temporary directory)


def _operation(name: str, data: dict[str, Any]) -> dict[str, Any]:
    result = dispatch(name, data)
    if result.output is None:
        raise ExampleError(f"the reference refused the {name} example with {result.code}")
    return dict(result.output)


def captured(output_item: dict[str, Any]) -> str:
    """The envelope text capture stores for ``output_item`` (C2, C3)."""
    text: str = _operation("capture", {"output_item": output_item, "source": SOURCE})[
        "envelope_text"
    ]
    return text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pretty(value: Any, indent: int = 0, lead: int = 0) -> str:
    """``value`` as indented JSON, each object or array that fits in 100 columns on one line
    (``lead``: the characters before it on its first line, after the indentation)."""
    one_line = json.dumps(value, ensure_ascii=False)
    if indent + lead + len(one_line) <= 100 or not isinstance(value, dict | list) or not value:
        return one_line
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        keys = [json.dumps(k, ensure_ascii=False) + ": " for k in value]
        entries = [
            inner + key + _pretty(v, indent + 2, len(key))
            for key, v in zip(keys, value.values(), strict=True)
        ]
        opening, closing = "{", "}"
    else:
        entries = [inner + _pretty(v, indent + 2) for v in value]
        opening, closing = "[", "]"
    return opening + "\n" + ",\n".join(entries) + "\n" + " " * indent + closing


def example_sdk_item() -> str:
    return SDK_ITEM


def example_captured() -> str:
    return captured(json.loads(SDK_ITEM))


def example_replayed() -> str:
    item = _operation("read", {"text": example_captured()})["item"]
    return _compact(item)


def _text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


@cache
def history() -> dict[str, Any]:
    """A history file in H1's shape: a user turn, then the assistant's answer with its reasoning
    item in the replay channel (ST1), the item's display text in the display channel (ST3) and
    the cache-state record of the plan that sent the turn (§9.1, F11)."""
    user = {"role": "user", "content": [_text_block(USER_TURN)]}
    envelope = captured(HISTORY_ITEM)
    item = parse_reasoning_replay_envelope(envelope).item
    shown = None if item is None else display_text(item)
    plan = _operation(
        "plan",
        {
            "history": {"messages": [{"role": "user", "items": [_message_item(USER_TURN)]}]},
            "model": MODEL,
            "desired_effort": EFFORT,
            "instance_key": INSTANCE_KEY,
        },
    )
    channels = {
        "reasoning": [] if shown is None else [_text_block(shown)],
        "openai-reasoning-encrypted": [_text_block(envelope)],
        "fast-agent-responses-cache-state": [_text_block(_compact(plan["record"]))],
    }
    assistant = {"role": "assistant", "content": [_text_block(ANSWER)], "channels": channels}
    return {"messages": [user, assistant]}


def _message_item(text: str) -> dict[str, str]:
    return {"type": "message", "role": "user", "content": text}


def example_history() -> str:
    return _pretty(history())


def _exported(mode: str) -> dict[str, Any]:
    exported: dict[str, Any] = _operation("export", {"history": history(), "mode": mode})["history"]
    return exported


def example_redacted_record() -> str:
    block = _exported("redacted")["messages"][1]["channels"]["openai-reasoning-encrypted"][0]
    text: str = block["text"]
    return text


def example_resumable_marker() -> str:
    return _pretty({"reasoning_replay_export": _exported("resumable")["reasoning_replay_export"]})


def example_redacted_marker() -> str:
    return _pretty({"reasoning_replay_export": _exported("redacted")["reasoning_replay_export"]})


def log_line() -> str:
    """A debug log line that a capture wrote raw: it holds the item's ciphertext."""
    event = {"type": "response.output_item.done", "item": HISTORY_ITEM}
    return _compact(event)


def example_log_line() -> str:
    return log_line()


@dataclass(frozen=True, slots=True)
class CommandOutput:
    status: int
    out: str


def run_command(argv: Sequence[str]) -> CommandOutput:
    """``conformance ARGV`` in-process, in a private session directory holding the history file
    (0600) and the log line; its standard output."""
    handlers: dict[str, Callable[[argparse.Namespace, Any, Any], int]] = {
        "validate": validate.cmd_validate,
        "scan": scan.cmd_scan,
        "export": cmd_export,
    }
    with tempfile.TemporaryDirectory() as scratch:
        session = Path(scratch, "session")
        session.mkdir(mode=0o700)
        session.chmod(0o700)
        for name, text in ((HISTORY_NAME, example_history() + "\n"), (LOG_NAME, log_line() + "\n")):
            path = session / name
            path.write_text(text, encoding="utf-8")
            path.chmod(0o600)
        args = build_parser().parse_args(list(argv))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(session):
            status = handlers[args.command](args, out, err)
    return CommandOutput(status, out.getvalue().rstrip("\n"))


def example_validate_text() -> str:
    return run_command(["validate", HISTORY_NAME]).out


def example_validate_json() -> str:
    return run_command(["validate", "--format", "json", HISTORY_NAME]).out


def example_scan_text() -> str:
    return run_command(["scan", LOG_NAME]).out


def example_scan_json() -> str:
    return run_command(["scan", "--format", "json", LOG_NAME]).out


EXAMPLES: Final[dict[str, Callable[[], str]]] = {
    "sdk-item": example_sdk_item,
    "captured": example_captured,
    "replayed": example_replayed,
    "history": example_history,
    "redacted-record": example_redacted_record,
    "resumable-marker": example_resumable_marker,
    "redacted-marker": example_redacted_marker,
    "log-line": example_log_line,
    "validate-text": example_validate_text,
    "validate-json": example_validate_json,
    "scan-text": example_scan_text,
    "scan-json": example_scan_json,
}


# ---------------------------------------------------------------------------------------------
# SPEC.md's blocks


class ExampleError(Exception):
    """An example SPEC.md names that this tool does not know, or one it does not name."""


@dataclass(frozen=True, slots=True)
class Block:
    name: str
    start: int  # of the body: the lines between the fences, each ending in a line feed
    end: int
    body: str


def blocks(spec: str) -> Iterator[Block]:
    for match in _BLOCK.finditer(spec):
        yield Block(match["name"], match.start("body"), match.end("body"), match["body"])


def rendered(spec: str) -> str:
    """``spec`` with every example block replaced by what the reference computes."""
    found = list(blocks(spec))
    names = [b.name for b in found]
    unknown = sorted(set(names) - set(EXAMPLES))
    missing = sorted(set(EXAMPLES) - set(names))
    if unknown or missing or len(names) != len(set(names)):
        raise ExampleError(
            f"SPEC.md's examples do not match the tool's: unknown {unknown}, missing {missing}, "
            f"each named once: {len(names) == len(set(names))}"
        )
    pieces, at = [], 0
    for block in found:
        pieces += [spec[at : block.start], EXAMPLES[block.name]() + "\n"]
        at = block.end
    return "".join([*pieces, spec[at:]])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=SPEC_PATH)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="rewrite SPEC.md's examples")
    action.add_argument("--check", action="store_true", help="exit 1 if an example is stale")
    args = parser.parse_args(argv)
    try:
        current = args.spec.read_text(encoding="utf-8")
        expected = rendered(current)
        if args.write and expected != current:
            replace_file(args.spec, expected.encode("utf-8"))
    except (OSError, ExampleError) as error:
        print(f"spec_examples: {error}", file=sys.stderr)
        return 2
    if expected == current or args.write:
        return 0
    if not args.check:
        sys.stdout.writelines(
            difflib.unified_diff(
                current.splitlines(keepends=True),
                expected.splitlines(keepends=True),
                str(args.spec),
                "computed",
            )
        )
    else:
        print(f"{args.spec}: §15's examples are stale: run tools/spec_examples.py --write")
    return 1


if __name__ == "__main__":
    sys.exit(main())
