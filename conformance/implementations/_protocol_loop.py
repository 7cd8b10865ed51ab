"""The protocol loop of the Python framework adapters (conformance/PROTOCOL.md).

Every ``NAME/adapter.py`` beside this file puts a framework behind the adapter protocol: it
reads request lines on stdin and answers each with one reply line (PROTOCOL.md#messages),
persistently or one request per process (PROTOCOL.md#one-shot-mode). What differs between the
adapters is the framework and its operations; the loop, the handshake and the error replies are
this module's, written once. An adapter describes itself as an :class:`Adapter` and ends with::

    if __name__ == "__main__":
        sys.exit(main(ADAPTER))

An adapter runs in its framework's own environment, where this project's package is not
installed, so this module uses the standard library only and an adapter imports it by path: the
directory of its own directory goes on ``sys.path`` (``sys.path.append``, so nothing of the
framework's environment is shadowed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, BinaryIO, Final, Generic, TypeVar

PROTOCOL_VERSION: Final = 1
#: the code of a rejection where the framework raised: not in SPEC.md's registry (the frameworks
#: have no codes), the exception is its message
RAISED: Final = "raised"

F = TypeVar("F")
Operation = Callable[[F, Mapping[str, Any]], dict[str, Any]]


class Reply(Exception):
    """A finished reply other than an output, ``reject`` or ``skipped`` (raised to leave an
    operation early)."""

    def __init__(self, document: dict[str, Any]) -> None:
        super().__init__(document)
        self.document = document


def reject(code: str, message: str) -> Reply:
    return Reply({"reject": {"code": code, "message": message}})


def skipped(reason: str) -> Reply:
    return Reply({"skipped": {"reason": reason}})


def defaults_output(body: Mapping[str, Any]) -> dict[str, Any]:
    """A ``defaults`` output from the request body the framework sent: every member but the
    conversation (``input``) and the transport's ``stream`` (PROTOCOL.md, ``defaults``)."""
    return {
        "request": {name: value for name, value in body.items() if name not in ("input", "stream")}
    }


class Refused(Exception):
    """The framework raised before it sent the request: its verdict, a rejection ``RAISED``."""


@dataclass(frozen=True)
class Adapter(Generic[F]):
    """One framework behind the protocol."""

    name: str  # the implementation's name in the handshake
    distribution: str  # the PyPI distribution measured: the handshake's version and homepage
    load: Callable[[], F]  # imports the framework's pieces once, before the first request
    operations: Mapping[str, Operation[F]]  # what ``run`` dispatches, in the handshake's order
    #: further members of the handshake's ``implementation`` (``history_formats``,
    #: ``provenance``: PROTOCOL.md#start--the-handshake)
    announce: Mapping[str, Any] = field(default_factory=dict)
    #: the most characters of a refusal's message a reply carries; ``None``: the whole message
    refusal_limit: int | None = None

    def implementation(self) -> dict[str, Any]:
        """The handshake's ``implementation`` object."""
        return {
            "name": self.name,
            "version": metadata.version(self.distribution),
            "language": "python",
            "homepage": f"https://pypi.org/project/{self.distribution}/",
            "operations": list(self.operations),
            **self.announce,
            "python": sys.version.split()[0],
        }


def handle(
    adapter: Adapter[F], framework: F, implementation: Mapping[str, Any], request: Any
) -> dict[str, Any] | None:
    """The reply to one request; ``None`` for ``stop``."""
    if not isinstance(request, dict):
        return {"seq": 0, "error": {"message": "request is not a JSON object"}}
    cmd = request.get("cmd")
    if cmd == "start":
        return {"protocol": PROTOCOL_VERSION, "implementation": dict(implementation)}
    if cmd == "stop":
        return None
    seq = request.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else 0
    operation, data = request.get("operation"), request.get("input")
    run = adapter.operations.get(operation) if isinstance(operation, str) else None
    if cmd != "run" or run is None or not isinstance(data, dict):
        return {"seq": seq, "error": {"message": f"cannot run {cmd!r} {operation!r}"}}
    try:
        output = run(framework, data)
    except Reply as answer:
        return {"seq": seq, **answer.document}
    except Refused as refused:
        message = str(refused)[: adapter.refusal_limit]
        return {"seq": seq, "reject": {"code": RAISED, "message": message}}
    except Exception as error:
        return {
            "seq": seq,
            "error": {
                "message": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(),
            },
        }
    return {"seq": seq, "output": output}


def encode(reply: dict[str, Any]) -> bytes:
    """One reply line: UTF-8 JSON, or ASCII escapes where a string holds a lone surrogate (only
    escapes carry one); a value JSON cannot hold becomes an error reply."""
    try:
        text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(reply, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    except ValueError as error:
        seq = reply.get("seq", 0)
        return json.dumps({"seq": seq, "error": {"message": f"not JSON: {error}"}}).encode() + b"\n"


def serve(adapter: Adapter[F], stdin: BinaryIO, stdout: BinaryIO, *, oneshot: bool) -> int:
    try:
        framework = adapter.load()
        implementation = adapter.implementation()
    except Exception:
        traceback.print_exc(file=sys.stderr)  # the runner shows the stderr tail
        return 1
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as error:
            reply: dict[str, Any] | None = {"seq": 0, "error": {"message": f"not JSON: {error}"}}
        else:
            reply = handle(adapter, framework, implementation, request)
        if reply is None:
            return 0
        stdout.write(encode(reply))
        stdout.flush()  # the runner waits for each line: never leave one in a buffer
        if oneshot:
            return 0
    return 0


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[BinaryIO]:
    """Hands the real stdout to the protocol and points fd 1 (and ``sys.stdout``) at stderr, so
    nothing a framework prints can corrupt the line stream."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield protocol
    finally:
        protocol.flush()


def main(adapter: Adapter[F], argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"{adapter.name} behind the conformance protocol")
    parser.add_argument("--oneshot", action="store_true", help="answer one request and exit")
    args = parser.parse_args(argv)
    with stdout_to_stderr() as protocol:
        return serve(adapter, sys.stdin.buffer, protocol, oneshot=args.oneshot)
