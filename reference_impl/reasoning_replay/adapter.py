"""The reference implementation as a conformance adapter program (SPEC §13, PROTOCOL.md).

    python -m reasoning_replay.adapter            # persistent: JSON lines until stop or EOF
    python -m reasoning_replay.adapter --oneshot  # one request line in, one reply line out

It speaks conformance/PROTOCOL.md on stdin/stdout and is the model for adapters in other
languages: read a line, answer exactly one line, flush, log only to stderr.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import Any, BinaryIO

from reasoning_replay.suite import PROTOCOL_VERSION, jsontext
from reasoning_replay.suite.inprocess import Dispatch, call, reference_dispatch, reference_info
from reasoning_replay.suite.protocol import ErrorReply, reply_document


def handle(line: bytes, dispatch: Dispatch, operations: Sequence[str]) -> dict[str, Any] | None:
    """The reply to one request line; ``None`` for ``stop``."""
    try:
        request = jsontext.loads(line)
    except jsontext.JSONTextError as exc:
        return {"seq": 0, "error": {"message": f"request is not JSON: {exc}"}}
    if not isinstance(request, dict):
        return {"seq": 0, "error": {"message": "request is not a JSON object"}}
    cmd = request.get("cmd")
    if cmd == "start":
        return {
            "protocol": PROTOCOL_VERSION,
            "implementation": reference_info(operations).to_document(),
        }
    if cmd == "stop":
        return None
    seq = request.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else 0
    if cmd != "run":
        return reply_document(seq, ErrorReply(f"unknown cmd {cmd!r}"))
    operation, input = request.get("operation"), request.get("input")
    if not isinstance(operation, str) or not isinstance(input, dict):
        return reply_document(seq, ErrorReply("run needs a string operation and object input"))
    return reply_document(seq, call(dispatch, operations, operation, input))


def serve(stdin: BinaryIO, stdout: BinaryIO, *, oneshot: bool) -> int:
    try:
        dispatch, operations = reference_dispatch()
    except Exception:
        traceback.print_exc(file=sys.stderr)  # the runner shows the stderr tail
        return 1
    for line in stdin:
        if not line.strip():
            continue
        reply = handle(line, dispatch, operations)
        if reply is None:
            return 0
        stdout.write(jsontext.dumps(reply) + b"\n")
        stdout.flush()  # the runner waits for each line: never leave one in a buffer
        if oneshot:
            return 0
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reasoning_replay.adapter",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument(
        "--oneshot", action="store_true", help="answer one request and exit (process-per-case mode)"
    )
    args = parser.parse_args(argv)
    return serve(sys.stdin.buffer, sys.stdout.buffer, oneshot=args.oneshot)


if __name__ == "__main__":
    sys.exit(main())
