"""The redaction of a text (SPEC H6): what the leak scan would find is replaced, nothing else.

A text is read as the leak scanner reads it (SPEC H8; :mod:`.jsonspans`,
:func:`.scan.embedded_parts`): one JSON value, or else the JSON values and ``encrypted_content``
fragments embedded in it. Each
value is redacted by SPEC R2 where it stands (its strings and member names as texts, again), and
each fragment's value is replaced; every other character of the text is kept. When the result
would still be changed by a second pass (a replacement made a broken text readable, say), the
whole text is replaced by its text marker, so that a redacted text never holds what SPEC H8
reports, whatever its form.
"""

from __future__ import annotations

import json
import re
from typing import Final

from reasoning_replay.record.redaction import (
    CIPHERTEXT_NORMAL_NAME,
    DIAGNOSTIC_VIEW_MEMBERS,
    PAIR_NAME_MEMBERS,
    PAIR_VALUE_MEMBER,
    is_sensitive_name,
    is_sha256_hex,
    normal_name,
    redact_value,
    sha256_hex,
)
from reasoning_replay.record.telemetry import utf8_length

from .jsonspans import JArray, JNode, JObject, JScalar, JString, parse_whole
from .scan import CIPHERTEXT_NAME, EmbeddedFragment, EmbeddedValue, embedded_parts, gaps
from .text_forms import (
    MAX_DECODINGS,
    REDACTED_VALUE,
    assignments,
    base64_decoded,
    base64_runs,
    ciphertext_token,
    is_ciphertext_shaped,
    percent_decoded,
    references_decoded,
)

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_NON_NUMBERS: Final = frozenset(("true", "false", "null", "NaN", "Infinity", "-Infinity"))
_Edit = tuple[int, int, str]


def json_string(value: str) -> str:
    """A JSON string literal, escaped as SPEC C3 escapes; a lone surrogate as ``\\udxxx``."""
    literal = json.dumps(value, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", literal)


def compact_json(value: object) -> str:
    """Compact JSON text of a view, a replacement object or a record (strings, integers, null)."""
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, dict):
        members = (f"{json_string(name)}:{compact_json(member)}" for name, member in value.items())
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(compact_json(element) for element in value) + "]"
    return json.dumps(value)


def text_marker(text: str) -> str:
    """SPEC H6: what replaces a whole text that no partial edit makes safe."""
    return compact_json(
        {"redacted": "text", "bytes": utf8_length(text), "sha256": sha256_hex(text)}
    )


def redact(value: object) -> object:
    """The redaction of any JSON value for people to read (SPEC H7): SPEC R2, with every string
    it keeps, member names included, redacted as a text (SPEC H6 step 2), so that no secret
    stays in any string: a JSON text, an envelope, a header line or a ciphertext held in one.

    :func:`reasoning_replay.record.redaction.redact_structural` is SPEC R2 alone (the ``redact``
    operation of the vectors), which keeps every string as it is.
    """
    return redact_value(value, redact_text)


def redact_text(text: str) -> str:
    """SPEC H6: the redaction of a text; the text itself when nothing in it is redacted."""
    return _redact_text(text, 0)


def _redact_text(text: str, decodings: int) -> str:
    redacted = _redact_once(text, decodings)
    if redacted is text or _redact_once(redacted, decodings) == redacted:
        return redacted
    return text_marker(text)


def _changes(text: str, decodings: int) -> bool:
    return _redact_text(text, decodings) != text


def _redact_once(text: str, decodings: int) -> str:
    edits: list[_Edit] = []
    whole = parse_whole(text) if '"' in text or "[" in text or "{" in text else None
    if whole is not None:
        _value_edits(whole, edits, decodings)
    else:
        spans: list[tuple[int, int]] = []
        for part in embedded_parts(text):
            if isinstance(part, EmbeddedValue):
                _value_edits(part.value, edits, decodings)
                spans.append((part.start, part.end))
            else:
                opening_quote = part.value_start - part.backslashes - 1
                edits.append((opening_quote, part.fragment.end, _fragment_replacement(part)))
                spans.append((part.start, part.fragment.end))
        for start, gap in gaps(text, spans):
            _gap_edits(gap, start, edits, decodings)
    redacted = _apply(text, edits)
    if decodings < MAX_DECODINGS:  # SPEC H8: encoded texts, read decoded
        for decode in (percent_decoded, references_decoded):
            decoded = decode(redacted)
            if decoded is not None and _changes(decoded, decodings + 1):
                return text_marker(text)
    return redacted


def _apply(text: str, edits: list[_Edit]) -> str:
    if not edits:
        return text
    edits.sort()
    pieces: list[str] = []
    copied = 0
    for start, end, replacement in edits:
        pieces += (text[copied:start], replacement)
        copied = end
    pieces.append(text[copied:])
    return "".join(pieces)


def _gap_edits(gap: str, offset: int, edits: list[_Edit], decodings: int) -> None:
    """SPEC H6 on a gap (H8): sensitive assignments' values, then base64 runs outside them."""
    values: list[tuple[int, int]] = []
    for found in assignments(gap):
        if gap[found.value_start : found.value_end] != REDACTED_VALUE:
            edits.append((offset + found.value_start, offset + found.value_end, REDACTED_VALUE))
        values.append((found.value_start, found.value_end))
    for start, part in gaps(gap, values):
        for run in base64_runs(part):
            found_run = run.group()
            at = offset + start + run.start()
            decoded = base64_decoded(found_run)
            if decoded is not None:  # SPEC H8: a run that decodes to text is that text
                if decodings < MAX_DECODINGS and _changes(decoded, decodings + 1):
                    edits.append((at, at + len(found_run), REDACTED_VALUE))
            elif is_ciphertext_shaped(found_run):
                token = ciphertext_token(utf8_length(found_run), sha256_hex(found_run))
                edits.append((at, at + len(found_run), token))


def _fragment_replacement(part: EmbeddedFragment) -> str:
    """The R2 replacement of a fragment's value, written at the fragment's escape level (a value
    that is unterminated or does not unescape cannot be measured: the plain replacement)."""
    value = part.fragment.value
    if part.fragment.terminated and value is not None:
        text = _ciphertext_replacement(value)
    else:
        text = compact_json({"redacted": CIPHERTEXT_NAME})
    for _ in range((part.backslashes + 1).bit_length() - 1):
        text = json_string(text)[1:-1]
    return text


def _ciphertext_replacement(value: str) -> str:
    return compact_json(
        {"redacted": "encrypted_content", "bytes": utf8_length(value), "sha256": sha256_hex(value)}
    )


def _pair_name(node: JObject) -> str | None:
    """SPEC R2 on a value read from a text: the sensitive name a name/value pair names."""
    named = None
    for member in node.members:
        held = member.value
        if normal_name(redact_text(member.name.value)) in PAIR_NAME_MEMBERS and isinstance(
            held, JString
        ):
            written = redact_text(held.value)
            named = written if is_sensitive_name(written) else named
    return named


def _value_edits(node: JNode, edits: list[_Edit], decodings: int = 0) -> None:
    """The edits that redact one JSON value read from a text (SPEC R2 on it, strings as texts)."""
    stack: list[JNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, JString):
            redacted = _redact_text(current.value, decodings)
            if redacted != current.value:
                edits.append((current.start, current.end, json_string(redacted)))
        elif isinstance(current, JArray):
            stack.extend(current.elements)
        elif isinstance(current, JObject):
            kind = current.last("type")
            if isinstance(kind, JString) and kind.value == "reasoning":
                if _is_view(current):  # left as it is; its strings are texts all the same
                    stack.extend(
                        m.value for m in current.members if m.name.value in ("id", "fields")
                    )
                else:
                    edits.append((current.start, current.end, _view_text(current)))
                continue
            paired = _pair_name(current)
            for member in current.members:
                stack.append(member.name)
                name, value = redact_text(member.name.value), member.value  # as written out
                if (
                    not is_sensitive_name(name)
                    and paired is not None
                    and normal_name(name) == PAIR_VALUE_MEMBER
                ):
                    name = paired  # SPEC R2: the value of a name/value pair
                elif not is_sensitive_name(name):
                    stack.append(value)
                    continue
                if _is_replacement(value, name):
                    stack.append(value)  # its strings are texts too
                elif normal_name(name) == CIPHERTEXT_NORMAL_NAME and isinstance(value, JString):
                    edits.append((value.start, value.end, _ciphertext_replacement(value.value)))
                else:
                    replacement = compact_json({"redacted": name})
                    edits.append((value.start, value.end, replacement))


def _is_count(node: JNode) -> bool:
    if not isinstance(node, JScalar) or node.lexeme in _NON_NUMBERS:
        return False
    number = float(node.lexeme)
    return number >= 0 and number.is_integer()


def _is_nullable(node: JNode, predicate: bool) -> bool:
    return (isinstance(node, JScalar) and node.lexeme == "null") or predicate


def _distinct_members(node: JObject) -> dict[str, JNode] | None:
    members = {m.name.value: m.value for m in node.members}
    return members if len(members) == len(node.members) else None


def _is_view(node: JObject) -> bool:
    """SPEC R2 rule 1 on a value read from a text (an object with duplicates is no view)."""
    members = _distinct_members(node)
    if members is None or members.keys() != set(DIAGNOSTIC_VIEW_MEMBERS):
        return False
    item_id, fields, size, digest = (members[name] for name in DIAGNOSTIC_VIEW_MEMBERS[1:5])
    return (
        _is_nullable(item_id, isinstance(item_id, JString))
        and isinstance(fields, JArray)
        and all(isinstance(field, JString) for field in fields.elements)
        and _is_nullable(size, _is_count(size))
        and _is_nullable(digest, isinstance(digest, JString) and is_sha256_hex(digest.value))
        and all(_is_count(members[name]) for name in DIAGNOSTIC_VIEW_MEMBERS[5:])
    )


def _is_replacement(node: JNode, name: str) -> bool:
    """SPEC R2: a replacement object read from a text (as
    :func:`reasoning_replay.record.redaction.is_replacement` reads a value)."""
    if not isinstance(node, JObject):
        return False
    members = _distinct_members(node)
    if members is None:
        return False
    if members.keys() == {"redacted"}:
        label = members["redacted"]
        return isinstance(label, JString) and label.value == name
    if members.keys() != {"redacted", "bytes", "sha256"}:
        return False
    label, digest = members["redacted"], members["sha256"]
    return (
        isinstance(label, JString)
        and label.value == "encrypted_content"
        and _is_count(members["bytes"])
        and isinstance(digest, JString)
        and is_sha256_hex(digest.value)
    )


def _parts(node: JNode | None) -> tuple[int, int]:
    if not isinstance(node, JArray):
        return 0, 0
    size = 0
    for part in node.elements:
        text = part.last("text") if isinstance(part, JObject) else None
        size += utf8_length(text.value) if isinstance(text, JString) else 0
    return len(node.elements), size


def _view_text(node: JObject) -> str:
    """SPEC R1 for an object read from a text (a repeated member counts by its last value), its
    strings redacted as texts."""
    item_id = node.last("id")
    ciphertext = node.last("encrypted_content")
    summary_parts, summary_bytes = _parts(node.last("summary"))
    content_parts, content_bytes = _parts(node.last("content"))
    secret = ciphertext.value if isinstance(ciphertext, JString) else None
    view = {
        "type": "reasoning",
        "id": redact_text(item_id.value) if isinstance(item_id, JString) else None,
        "fields": [redact_text(name) for name in sorted({m.name.value for m in node.members})],
        "encrypted_content_bytes": None if secret is None else utf8_length(secret),
        "encrypted_content_sha256": None if secret is None else sha256_hex(secret),
        "summary_parts": summary_parts,
        "summary_bytes": summary_bytes,
        "content_parts": content_parts,
        "content_bytes": content_bytes,
    }
    return compact_json(view)
