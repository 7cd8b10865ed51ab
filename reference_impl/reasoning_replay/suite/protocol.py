"""The adapter protocol (conformance/PROTOCOL.md): message values, encoding and validation.

Runner and adapters exchange one JSON object per line. Every message the runner receives is
checked against ``conformance/schemas/protocol/*.schema.json``; a message that fails becomes a
:class:`ProtocolViolation` value carrying the schema error, never an exception.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from . import jsontext, schemas
from .identity import PROTOCOL_VERSION
from .vectors import Case

BASE64_SUFFIX: Final = "_base64"
START_LINE: Final = jsontext.dumps({"cmd": "start", "protocol": PROTOCOL_VERSION}) + b"\n"
STOP_LINE: Final = b'{"cmd":"stop"}\n'


@dataclass(frozen=True, slots=True)
class ImplementationInfo:
    """The handshake's ``implementation`` object. ``history_formats`` and ``provenance`` are
    ``None`` when the handshake does not announce them (SPEC CL3, CL4)."""

    name: str
    version: str
    language: str
    operations: tuple[str, ...]
    homepage: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)
    history_formats: tuple[str, ...] | None = None
    provenance: str | None = None

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> ImplementationInfo:
        formats = doc.get("history_formats")
        return cls(
            name=doc["name"],
            version=doc["version"],
            language=doc["language"],
            operations=tuple(doc["operations"]),
            homepage=doc.get("homepage"),
            metadata=dict(doc),
            history_formats=None if formats is None else tuple(formats),
            provenance=doc.get("provenance"),
        )

    def to_document(self) -> dict[str, Any]:
        doc = dict(self.metadata)
        doc.update(name=self.name, version=self.version, language=self.language)
        if self.homepage is not None:
            doc["homepage"] = self.homepage
        doc["operations"] = list(self.operations)
        if self.history_formats is not None:
            doc["history_formats"] = list(self.history_formats)
        if self.provenance is not None:
            doc["provenance"] = self.provenance
        return doc

    @property
    def formats(self) -> tuple[str, ...]:
        """The history forms read: as announced, else the channels form only (PROTOCOL.md)."""
        return self.history_formats if self.history_formats is not None else ("channels",)

    def label(self) -> str:
        return f"{self.name} {self.version} ({self.language})"


# Replies: what a well-behaved adapter answers to one run request.


@dataclass(frozen=True, slots=True)
class OutputReply:
    output: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RejectReply:
    code: str
    message: str | None = None


@dataclass(frozen=True, slots=True)
class SkippedReply:
    reason: str


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """The adapter caught an internal failure and said so (outcome ``adapter_error``)."""

    message: str
    traceback: str | None = None


Reply = OutputReply | RejectReply | SkippedReply | ErrorReply


# Failures: what the runner observes instead of a reply.


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """A line that is not a valid reply. ``desync`` means the line stream can no longer be
    trusted (garbage, a wrong seq, an over-long line), so the process must be restarted."""

    message: str
    desync: bool = False


@dataclass(frozen=True, slots=True)
class Crash:
    message: str
    returncode: int | None = None


@dataclass(frozen=True, slots=True)
class Timeout:
    seconds: float


@dataclass(frozen=True, slots=True)
class ReplyTooLong:
    """A stdout line longer than ``limit`` bytes (PROTOCOL.md, Transport). It is never read
    whole: ``head`` is its first bytes, for the report, and the process is restarted."""

    limit: int
    head: bytes = b""

    @property
    def message(self) -> str:
        return (
            f"reply line longer than {self.limit} bytes, the protocol's limit; "
            "the process was killed and restarted"
        )


Failure = ProtocolViolation | Crash | Timeout | ReplyTooLong


# ---------------------------------------------------------------------------------------------
# Encoding requests


def run_request(seq: int, case: Case) -> dict[str, Any]:
    return {
        "cmd": "run",
        "seq": seq,
        "id": case.id,
        "operation": case.operation,
        "input": case.input,
    }


def run_request_line(seq: int, case: Case) -> bytes:
    """The exact bytes sent for a case, newline included."""
    return jsontext.dumps(run_request(seq, case)) + b"\n"


# ---------------------------------------------------------------------------------------------
# Decoding replies


def _parse_object(line: bytes) -> dict[str, Any] | ProtocolViolation:
    try:
        value = jsontext.loads(line)
    except jsontext.JSONTextError as exc:
        return ProtocolViolation(
            f"not a JSON line ({exc}); stdout must carry only protocol lines, log to stderr",
            desync=True,
        )
    if not isinstance(value, dict):
        return ProtocolViolation("the line is JSON but not an object", desync=True)
    return value


def _schema_violation(name: str, doc: Any) -> ProtocolViolation | None:
    errs = schemas.errors(name, doc, limit=3)
    if not errs:
        return None
    title = name.rsplit("/", 1)[-1].removesuffix(".schema.json")
    return ProtocolViolation(f"invalid {title} message: " + "; ".join(str(e) for e in errs))


def parse_start_response(line: bytes) -> ImplementationInfo | ProtocolViolation:
    doc = _parse_object(line)
    if isinstance(doc, ProtocolViolation):
        return doc
    if doc.get("protocol") != PROTOCOL_VERSION and "protocol" in doc:
        return ProtocolViolation(
            f"the adapter speaks protocol {doc.get('protocol')!r}; "
            f"this runner speaks {PROTOCOL_VERSION}"
        )
    bad = _schema_violation(schemas.START_RESPONSE, doc)
    if bad is not None:
        return bad
    return ImplementationInfo.from_document(doc["implementation"])


def parse_run_response(line: bytes, seq: int) -> Reply | ProtocolViolation:
    doc = _parse_object(line)
    if isinstance(doc, ProtocolViolation):
        return doc
    got = doc.get("seq")
    if got != seq or isinstance(got, bool):
        # A reply for another request: the adapter answered out of step, so every later
        # line would be blamed on the wrong case unless the process is restarted.
        return ProtocolViolation(
            f"reply has seq {got!r}, expected {seq} (echo the request's seq unchanged)",
            desync=True,
        )
    fast = _common_reply(doc, got)
    if fast is not None:
        return fast
    bad = _schema_violation(schemas.RUN_RESPONSE, doc)
    if bad is not None:
        return bad
    return reply_from_document(doc)


_CODE = re.compile(r"[a-z][a-z0-9_]*")


def _common_reply(doc: dict[str, Any], seq: Any) -> Reply | None:
    """The two common replies, recognised without the (slow) general validator. Returns a reply
    only when ``doc`` certainly satisfies run-response.schema.json; otherwise ``None`` and the
    schema decides. This keeps a fast adapter above thousands of cases per second."""
    if len(doc) != 2 or type(seq) is not int or seq < 0:
        return None
    output = doc.get("output")
    if type(output) is dict:
        return OutputReply(output)
    reject = doc.get("reject")
    if type(reject) is dict and reject.keys() <= {"code", "message"}:
        code, message = reject.get("code"), reject.get("message", "")
        if type(code) is str and type(message) is str and _CODE.fullmatch(code):
            return RejectReply(code, reject.get("message"))
    return None


def reply_from_document(doc: Mapping[str, Any]) -> Reply:
    """A reply from a schema-valid run response."""
    if "output" in doc:
        return OutputReply(doc["output"])
    if "reject" in doc:
        return RejectReply(doc["reject"]["code"], doc["reject"].get("message"))
    if "skipped" in doc:
        return SkippedReply(doc["skipped"]["reason"])
    return ErrorReply(doc["error"]["message"], doc["error"].get("traceback"))


def reply_document(seq: int, reply: Reply) -> dict[str, Any]:
    """The run response an adapter writes for a reply."""
    match reply:
        case OutputReply(output):
            return {"seq": seq, "output": output}
        case RejectReply(code, message):
            rej: dict[str, Any] = {"code": code}
            if message is not None:
                rej["message"] = message
            return {"seq": seq, "reject": rej}
        case SkippedReply(reason):
            return {"seq": seq, "skipped": {"reason": reason}}
        case ErrorReply(message, tb):
            err: dict[str, Any] = {"message": message}
            if tb is not None:
                err["traceback"] = tb
            return {"seq": seq, "error": err}


# ---------------------------------------------------------------------------------------------
# Byte members


class ByteMemberError(ValueError):
    """A ``X_base64`` member is not base64, or ``X`` is given too."""


def decode_byte_members(input: Mapping[str, Any]) -> dict[str, Any]:
    """Replace each top-level ``X_base64`` member by ``X`` holding the decoded bytes.

    Vectors use ``X_base64`` for inputs YAML cannot carry (invalid UTF-8, a BOM). The runner
    passes them through unchanged; adapters decode them (this function is the reference's)."""
    if not any(k.endswith(BASE64_SUFFIX) for k in input):
        return dict(input)
    out: dict[str, Any] = {}
    for key, value in input.items():
        if not key.endswith(BASE64_SUFFIX):
            out.setdefault(key, value)
            continue
        name = key.removesuffix(BASE64_SUFFIX)
        if name in input:
            raise ByteMemberError(f"both {name!r} and {key!r} are given")
        if not isinstance(value, str):
            raise ByteMemberError(f"{key!r} is not a string")
        try:
            out[name] = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ByteMemberError(f"{key!r} is not base64: {exc}") from exc
    return out
