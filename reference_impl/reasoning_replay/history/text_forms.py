"""Secrets in text that is not JSON (SPEC H8 "Text forms"): what the leak scan and the text
redaction of SPEC H6 read in the parts of a text that no JSON value or fragment covers.

Three things are recognised there, each stated in SPEC H8:

- **assignments**: a name, a separator and a value, the way programs write a name and its value
  outside JSON: ``api_key=...`` (env lines, URL queries, ``key=value`` logs), ``Authorization:
  Bearer ...`` (header lines, YAML), ``'token': '...'`` (Python ``repr``, JS ``inspect``, JSON5),
  ``--api-key ...`` (command lines), ``<api_key>...</api_key>`` (XML). Whether the name is
  sensitive is SPEC R2's rule, on the name's normal form;
- **ciphertext-shaped runs**: a base64 or base64url run that starts with the Fernet prefix
  ``gAAAAA`` and has at least 100 characters (OpenAI's ``encrypted_content``), or any run of at
  least 200 characters that mixes upper case, lower case and digits;
- **encoded texts**: a base64 run that decodes to UTF-8 text, a text with percent escapes, a text
  with HTML character references: the decoded text is read again, at most
  :data:`MAX_DECODINGS` decodings deep.

Everything here is pure and works on one *gap* (a slice of a text) at a time: the same regular
expressions run in the JavaScript implementation, so both read a gap alike.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from reasoning_replay.record.redaction import CIPHERTEXT_NORMAL_NAME, is_sensitive_name, normal_name
from reasoning_replay.record.telemetry import utf8_bytes

# SPEC H8: a base64 run is a maximal run of the base64 and base64url alphabets, with at most two
# "=" of padding; it is delimited by any other character or by the ends of the gap.
BASE64_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]+={0,2}(?![A-Za-z0-9+/_=-])")
FERNET_PREFIX: Final = "gAAAAA"  # version byte 0x80 and a timestamp's high zero bytes
MIN_FERNET_CHARS: Final = 100  # 73 bytes: version, timestamp, IV, one block, HMAC
MIN_LONG_RUN_CHARS: Final = 200
MIN_DECODED_RUN_CHARS: Final = 16
MAX_DECODINGS: Final = 4
_UPPER: Final = re.compile(r"[A-Z]")
_LOWER: Final = re.compile(r"[a-z]")
_DIGIT: Final = re.compile(r"[0-9]")

# SPEC H8: the measures of R1's diagnostic view are no assignment of a secret in a text form (a
# view printed by Python or JavaScript keeps its counts and digest).
VIEW_MEASURE_NAMES: Final = frozenset(("encryptedcontentbytes", "encryptedcontentsha256"))

# SPEC H8: what replaces a secret found in a text form (no quote, so that it fits any quoting).
REDACTED_VALUE: Final = "[redacted]"

# SPEC H8 assignments. A name: a double-quoted or single-quoted name, an XML start tag, or a bare
# name (letters, digits, "_", "-", "."); a bare name may be followed by the closing quote of an
# escaped context. Then the separator: ":" or "=" with spaces or tabs around, or (after a name
# that starts with "-", a command-line option) spaces or tabs alone.
ASSIGNMENT_NAME: Final = re.compile(
    r"(?P<dq>\"(?:[^\"\\\n]|\\[^\n])*\")"
    r"|(?P<sq>'[^'\\\n]*')"
    r"|<(?P<tag>[A-Za-z_][A-Za-z0-9_.:-]*)(?:[ \t][^<>]*)?>"
    r"|(?<![A-Za-z0-9_.-])(?P<bare>[A-Za-z0-9_.-]+)(?:\\*[\"'])?"
)
SEPARATOR: Final = re.compile(r"[ \t]*[:=][ \t]*|[ \t]+")
_BARE_AFTER_COLON: Final = re.compile(r"[^\n\r\"'`<>{}\[\](),;&]*")
_BARE_AFTER_EQUALS: Final = re.compile(r"[^ \t\n\r\f\v\"'`<>{}\[\](),;&]*")
_XML_CONTENT: Final = re.compile(r"[^<]*")
# SPEC H8: a YAML block scalar header (indicator, chomping and indentation digit in either order,
# a comment) ending its line; the value is then the lines after it more indented than the
# assignment's line, blank lines among them.
BLOCK_SCALAR_HEADER: Final = re.compile(
    r"[|>](?:[1-9][-+]?|[-+][1-9]?)?(?:[ \t]+#[^\n\r]*)?[ \t]*(?![^\n\r])"
)
_LINE: Final = re.compile(r"(\r\n|\r|\n)([^\n\r]*)")
# SPEC H8: the spaces an XML element's text is trimmed of (U+0009 to U+000D and U+0020, as
# around a fragment's colon); a text of nothing else is blank.
XML_SPACES: Final = "\t\n\x0b\x0c\r "
_OPENING_QUOTE: Final = re.compile(r"(\\*)([\"'])")
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_REFERENCE: Final = re.compile(r"&(?:(quot|amp|lt|gt|apos)|#([0-9]{1,7})|#[xX]([0-9A-Fa-f]{1,6}));")
_NAMED_REFERENCES: Final = {"quot": '"', "amp": "&", "lt": "<", "gt": ">", "apos": "'"}


def is_ciphertext_shaped(run: str) -> bool:
    """SPEC H8: a base64 run that is replay material by its shape alone."""
    if run.startswith(FERNET_PREFIX) and len(run) >= MIN_FERNET_CHARS:
        return True
    return (
        len(run) >= MIN_LONG_RUN_CHARS
        and _UPPER.search(run) is not None
        and _LOWER.search(run) is not None
        and _DIGIT.search(run) is not None
    )


def ciphertext_token(size: int, digest: str) -> str:
    """SPEC H6: what replaces a ciphertext-shaped run: its UTF-8 length and SHA-256."""
    return f"[redacted encrypted_content bytes={size} sha256={digest}]"


@dataclass(frozen=True, slots=True)
class Assignment:
    """A name and the span of its value in a gap; ``quote`` is the value's quote, if any."""

    name: str
    value_start: int
    value_end: int
    end: int

    @property
    def is_ciphertext(self) -> bool:
        """SPEC H8: the name's normal form is exactly ``encryptedcontent``."""
        return normal_name(self.name) == CIPHERTEXT_NORMAL_NAME


def _name_of(match: re.Match[str]) -> str:
    quoted = match.group("dq")
    if quoted is not None:
        try:
            decoded = json.loads(quoted)
        except ValueError:
            return quoted[1:-1]
        return decoded if isinstance(decoded, str) else quoted[1:-1]
    for group in ("sq", "tag", "bare"):
        found = match.group(group)
        if found is not None:
            return found[1:-1] if group == "sq" else found
    raise AssertionError("an assignment always has a name")  # pragma: no cover


def quoted_end(text: str, start: int, quote: str, backslashes: int) -> tuple[int, int]:
    """The end of a value quoted by ``quote`` after ``backslashes`` backslashes (an escape level
    of SPEC H8), from ``start``: (where the value ends, the index after its closing quote). An
    unterminated value ends at the end of the text.

    As a fragment's (SPEC H8): the closing quote is preceded by the b backslashes plus escaped
    pairs of the value, or by none at all, at every level (it ends the string around the value).
    """
    index = start
    end = len(text)
    step = 2 * (backslashes + 1)
    while index < end:
        char = text[index]
        if char == "\\":
            run_start = index
            while index < end and text[index] == "\\":
                index += 1
            run = index - run_start
            closing = run >= backslashes and (run - backslashes) % step == 0
            if index < end and text[index] == quote and closing:
                return index - backslashes, index + 1
            index += 1
        elif char == quote:
            return index, index + 1
        else:
            index += 1
    return end, end


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def block_scalar_end(gap: str, name_start: int, header_end: int) -> int:
    """SPEC H8: where the value of an assignment whose value is a block scalar header ends: at
    the end of the last of the lines after the header that are more indented (leading spaces)
    than the assignment's line, blank lines (spaces and tabs only) among them; at the header's
    end when there is none."""
    line_start = max(gap.rfind("\n", 0, name_start), gap.rfind("\r", 0, name_start)) + 1
    indentation = _indentation(gap[line_start:name_start])
    end = position = header_end
    while (line := _LINE.match(gap, position)) is not None:
        position = line.end()
        text = line.group(2)
        if not text.strip(" \t"):
            continue
        if _indentation(text) <= indentation:
            break
        end = position
    return end


def _value_span(gap: str, match: re.Match[str]) -> tuple[int, int, int] | None:
    """The value after an assignment's separator: (start, end, index after it), or None."""
    index = match.end()
    if match.group("tag") is not None:
        content = _XML_CONTENT.match(gap, index)
        assert content is not None
        text = content.group()
        trimmed = text.strip(XML_SPACES)  # SPEC H8: the element's text, trimmed; blank: none
        if not trimmed:
            return None
        start = index + len(text) - len(text.lstrip(XML_SPACES))
        return start, start + len(trimmed), content.end()
    found = SEPARATOR.match(gap, index)
    if found is None:
        return None
    separator = found.group()
    index = found.end()
    if ":" not in separator and "=" not in separator:
        name = match.group("bare")
        if name is None or not name.startswith("-"):
            return None  # whitespace alone separates only a command-line option and its value
    opening = _OPENING_QUOTE.match(gap, index)
    if opening is not None:
        backslashes = len(opening.group(1))
        start = opening.end()
        value_end, after = quoted_end(gap, start, opening.group(2), backslashes)
        return (start, value_end, after) if value_end > start else None
    header = BLOCK_SCALAR_HEADER.match(gap, index) if ":" in separator else None
    if header is not None:
        end = block_scalar_end(gap, match.start(), header.end())
        return index, end, end
    bare = (_BARE_AFTER_COLON if ":" in separator else _BARE_AFTER_EQUALS).match(gap, index)
    assert bare is not None
    value = bare.group().rstrip(" \t")
    return (index, index + len(value), index + len(value)) if value else None


def assignments(gap: str) -> Iterator[Assignment]:
    """SPEC H8: the assignments of a sensitive name (R2) in a gap, left to right.

    A name that is not sensitive is passed over (the search goes on at the next character, so
    that ``https://h/?api_key=...`` and ``-H 'Authorization: ...'`` are read); a sensitive one
    consumes its value.
    """
    position = 0
    while (match := ASSIGNMENT_NAME.search(gap, position)) is not None:
        name = _name_of(match)
        sensitive = is_sensitive_name(name) and normal_name(name) not in VIEW_MEASURE_NAMES
        span = _value_span(gap, match) if sensitive else None
        if span is None:
            position = match.start() + 1
            continue
        start, end, after = span
        yield Assignment(name, start, end, after)
        position = after


def base64_runs(gap: str) -> Iterator[re.Match[str]]:
    """SPEC H8: the base64 runs of a gap."""
    return BASE64_RUN.finditer(gap)


def base64_decoded(run: str) -> str | None:
    """SPEC H8: the UTF-8 text a base64 or base64url run of at least 16 characters decodes to,
    or None (too short, both alphabets mixed, a length no padding explains, not UTF-8). The
    characters before the ``=`` decide: padding is optional and not checked (``QUJD=`` decodes
    as ``QUJD`` does), nor are the unused bits of the last character."""
    if len(run) < MIN_DECODED_RUN_CHARS:
        return None
    body = run.rstrip("=")
    standard = "+" in body or "/" in body
    url_safe = "-" in body or "_" in body
    if (standard and url_safe) or len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        data = (
            base64.urlsafe_b64decode(padded)
            if url_safe
            else base64.b64decode(padded, validate=True)
        )
        return data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def percent_decoded(text: str) -> str | None:
    """SPEC H8: the text with every percent escape decoded, or None when it has none: the text's
    UTF-8 (a lone surrogate as U+FFFD, SPEC §1.1) with each escape's byte in its place, read as
    UTF-8 with U+FFFD for what is not (as a file that is not text is read). ``+`` stays ``+``
    (base64 runs hold it)."""
    if _PERCENT.search(text) is None:
        return None
    pieces = _PERCENT.split(text)
    escapes = _PERCENT.findall(text)
    data = bytearray()
    for index, piece in enumerate(pieces):
        data += utf8_bytes(piece)
        if index < len(escapes):
            data.append(int(escapes[index][1:], 16))
    return data.decode("utf-8", errors="replace")


def _reference(match: re.Match[str]) -> str:
    named, decimal, hexadecimal = match.groups()
    if named is not None:
        return _NAMED_REFERENCES[named]
    code = int(decimal, 10) if decimal is not None else int(hexadecimal, 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return match.group()
    return chr(code)


def references_decoded(text: str) -> str | None:
    """SPEC H8: the text with its HTML character references decoded (the five named ones and
    numeric ones), or None when it has none."""
    if _REFERENCE.search(text) is None:
        return None
    return _REFERENCE.sub(_reference, text)
