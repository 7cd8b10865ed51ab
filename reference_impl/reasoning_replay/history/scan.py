"""Leak scan (SPEC H8): find replay material in logs, captures and other text files.

Replay material is ``encrypted_content`` (a bearer secret, SPEC R1) and envelope texts (SPEC E1).
History files and resumable exports hold it by design; anywhere else it is a leak. A scan reports,
per finding, the line (from 1), the code ``replay_material_exposed`` and the first 12 hexadecimal
digits of the SHA-256 of the value found; it never reports or returns the value itself.

What one line is searched for (SPEC H8):

1. The line as a whole, when it is one JSON value (a JSON-lines log record, a history line).
2. Otherwise, JSON embedded in the line (``body: {...}``): every ``{`` or ``[`` at which a JSON
   value can be decoded, and ``"encrypted_content": "..."`` member fragments that are not inside a
   decodable value (a pretty-printed or truncated JSON text), also when their quotes are escaped
   because they sit inside a JSON string (``\\"encrypted_content\\": \\"...\\"``).
3. In every value found, at any depth: each member named ``encrypted_content`` in any ASCII case
   whose value is a string of at least 16 characters (code points, after JSON unescaping) is a
   finding, with the digest of that string. Every other string, member names included, is
   searched again as a text, by these same steps: that is how an envelope stored as a JSON
   string inside another JSON text (JSON in JSON, as in history files and logs of them) is
   found.
4. A text (a line, an embedded span, or a string) whose JSON value is an object with ``schema``
   exactly ``fast-agent.openai-responses.reasoning-replay`` and some ``encrypted_content`` member
   holding a non-empty string is an envelope text: one finding, with the digest of the envelope's
   JSON text (without surrounding whitespace), and its members are not reported again. Its
   ciphertext may be shorter than 16 characters: an envelope is unambiguous, a short
   ``encrypted_content`` elsewhere (``"x"``, a placeholder) is not.

Redaction replacement objects (SPEC R2) are objects, not strings, so they are never findings;
redacted records (SPEC H2) carry no ``encrypted_content`` member and another schema name. Members
with duplicate names are all searched (a leak in the first of two is still a leak).

Files are read line by line (split on ``\\n`` only: JSON strings may hold U+2028), so memory is
bounded by the longest line. A file with a NUL byte in its first 8 KiB is taken as binary and
skipped with a note; lines that are not UTF-8 are decoded with U+FFFD replacements and noted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from reasoning_replay.diagnostics import Code
from reasoning_replay.record.envelope import SCHEMA_NAME
from reasoning_replay.record.redaction import CIPHERTEXT_NORMAL_NAME, normal_name
from reasoning_replay.record.telemetry import utf8_bytes

from .jsonspans import JArray, JMember, JNode, JObject, JString, parse_at, parse_whole
from .safe_files import NotARegularFileError, listings, read_regular
from .text_forms import (
    MAX_DECODINGS,
    assignments,
    base64_decoded,
    base64_runs,
    is_ciphertext_shaped,
    percent_decoded,
    references_decoded,
)

MIN_CIPHERTEXT_CHARS: Final = 16  # SPEC H8
SHA256_PREFIX_HEX: Final = 12  # SPEC H8
BINARY_SNIFF_BYTES: Final = 8192
CIPHERTEXT_NAME: Final = "encrypted_content"

# A text can hold replay material only if it spells the member name, in some case, or escapes
# characters (``\\u0065ncrypted_content``): every other text is skipped without parsing.
MAY_HOLD: Final = re.compile(
    r"encrypted|\\u|[A-Za-z0-9+/_-]{16}|%[0-9A-Fa-f]{2}|&#?[A-Za-z0-9]+;", re.IGNORECASE | re.ASCII
)
# Where embedded JSON may start, or an ``"encrypted_content": "`` fragment at any escape level:
# the quotes of a fragment inside k JSON strings are preceded by 2**k - 1 backslashes.
_FRAGMENT: Final = r"(?P<q>\\*)\"encrypted_content(?P=q)\"\s*:\s*(?P=q)\""
CANDIDATE: Final = re.compile(r"[{\[]|" + _FRAGMENT, re.IGNORECASE | re.ASCII)
FRAGMENT_HEAD: Final = re.compile(_FRAGMENT, re.IGNORECASE | re.ASCII)
MAX_DECODE_FAILURES: Final = 64
_JSON_SPACE: Final = " \t\n\r"


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(name: str) -> str:
    return name.translate(_ASCII_LOWER)  # SPEC H8: "in any ASCII case"


def is_ciphertext_name(name: str) -> bool:
    """SPEC H8: a member name whose normal form (R2) is exactly ``encryptedcontent``
    (``encrypted_content`` in any ASCII case, ``encryptedContent``, ``Encrypted-Content``)."""
    return normal_name(name) == CIPHERTEXT_NORMAL_NAME


def sha256_prefix(value: str) -> str:
    """SPEC H8: the first 12 hex digits of the SHA-256 of ``value``'s UTF-8 (lone surrogates as
    U+FFFD, SPEC §1.1)."""
    return hashlib.sha256(utf8_bytes(value)).hexdigest()[:SHA256_PREFIX_HEX]


def _holds_ciphertext(value: JNode) -> bool:
    stack: list[JNode] = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, JObject):
            for member in current.members:
                if _is_ciphertext_string(member, minimum=1):
                    return True
                stack.append(member.value)
        elif isinstance(current, JArray):
            stack.extend(current.elements)
    return False


def _is_ciphertext_string(member: JMember, minimum: int) -> bool:
    found = member.value
    return (
        is_ciphertext_name(member.name.value)
        and isinstance(found, JString)
        and len(found.value) >= minimum
    )


def _is_schema_name(member: JMember) -> bool:
    found = member.value
    return (
        member.name.value == "schema" and isinstance(found, JString) and found.value == SCHEMA_NAME
    )


def is_envelope(value: JNode) -> bool:
    """SPEC H8 with E1: an object named by the envelope schema that carries a ciphertext."""
    return (
        isinstance(value, JObject)
        and any(_is_schema_name(m) for m in value.members)
        and _holds_ciphertext(value)
    )


@dataclass(frozen=True, slots=True)
class Material:
    """Replay material found in a text: where it starts (an index of the text read) and the value
    (for hashing; never displayed)."""

    offset: int
    value: str


@dataclass(frozen=True, slots=True)
class _Found:
    """A ciphertext member value already found (not to be searched as a text)."""

    offset: int
    value: str


def _values_in(value: JNode, decodings: int) -> Iterator[Material]:
    """The replay material in a JSON value read from a text, in order of appearance."""
    stack: list[JNode | _Found] = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, JObject):
            pending: list[JNode | _Found] = []
            for member in current.members:
                # SPEC H8: a member name is a string too (RFC 8259), read again as a text, as an
                # export redacts it (H6).
                pending.append(member.name)
                found = member.value
                if is_ciphertext_name(member.name.value) and isinstance(found, JString):
                    if len(found.value) >= MIN_CIPHERTEXT_CHARS:
                        pending.append(_Found(found.start, found.value))
                else:
                    pending.append(found)
            stack.extend(reversed(pending))
        elif isinstance(current, JArray):
            stack.extend(reversed(current.elements))
        elif isinstance(current, _Found):
            yield Material(current.offset, current.value)
        elif isinstance(current, JString):
            for inner in material(current.value, decodings):
                yield Material(current.start, inner.value)


@dataclass(frozen=True, slots=True)
class Fragment:
    """An ``encrypted_content`` member fragment's value, found in a text that is not JSON.

    ``value_end`` is where the escaped value ends in the text (the text's length when the fragment
    is unterminated), ``end`` the index after its closing quote; ``value`` is the unescaped value,
    or None when the fragment is unterminated or does not unescape.
    """

    value: str | None
    value_end: int
    end: int

    @property
    def terminated(self) -> bool:
        return self.end > self.value_end


def read_fragment(text: str, start: int, backslashes: int) -> Fragment:
    """The fragment whose value starts at ``start``, its quotes escaped by ``backslashes``.

    At escape level k (``backslashes`` = 2**k - 1), the closing quote is preceded by that many
    backslashes plus any number of escaped backslashes of the value (2**(k+1) each); a quote
    preceded by another count is an escaped quote of the value.
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
            if index < end and text[index] == '"' and closing:
                value_end = index - backslashes
                return Fragment(_unescape(text[start:value_end], backslashes), value_end, index + 1)
            index += 1  # the escaped character (a quote at a deeper level, or any other)
        elif char == '"':
            # A bare quote ends a plain fragment; inside an escaped one it is not JSON.
            value = _unescape(text[start:index], 0) if backslashes == 0 else None
            return Fragment(value, index, index + 1)
        else:
            index += 1
    return Fragment(None, end, end)


def _unescape(raw: str, backslashes: int) -> str | None:
    """Undo the JSON string escaping of a fragment value ``levels + 1`` times."""
    levels = (backslashes + 1).bit_length() - 1
    if (1 << levels) - 1 != backslashes:
        return None  # 2, 4, 5, ... backslashes before a quote: no escape level gives that
    value = raw
    for _ in range(levels + 1):
        try:
            decoded = json.loads(f'"{value}"')
        except ValueError:
            return None
        if not isinstance(decoded, str):  # pragma: no cover - a JSON string always decodes so
            return None
        value = decoded
    return value


@dataclass(frozen=True, slots=True)
class EmbeddedValue:
    """A JSON value read from ``text[start:end]`` of a text that is not one JSON value."""

    start: int
    end: int
    value: JNode


@dataclass(frozen=True, slots=True)
class EmbeddedFragment:
    """An ``encrypted_content`` fragment whose name starts at ``start`` and whose value starts at
    ``value_start``, its quotes escaped by ``backslashes`` backslashes (the opening quote and they
    precede ``value_start``)."""

    start: int
    value_start: int
    backslashes: int
    fragment: Fragment


def embedded_parts(text: str) -> Iterator[EmbeddedValue | EmbeddedFragment]:
    """JSON values and member fragments embedded in a text, left to right, not overlapping.

    A value is read (:func:`.jsonspans.parse_at`) at each ``{`` and ``[``, at most
    :data:`MAX_DECODE_FAILURES` failed times per text; after that only fragments are looked for,
    so that a hostile line (``[[[[...``) costs linear time, not quadratic.
    """
    position = failures = 0
    pattern = CANDIDATE
    while (match := pattern.search(text, position)) is not None:
        start = match.start()
        if match.group("q") is None:  # a { or [: try to read a JSON value starting there
            parsed = parse_at(text, start)
            if parsed is None:
                failures += 1
                if failures >= MAX_DECODE_FAILURES:
                    pattern = FRAGMENT_HEAD
                position = start + 1
                continue
            value, end = parsed
            yield EmbeddedValue(start, end, value)
            position = end
            continue
        backslashes = len(match.group("q"))
        fragment = read_fragment(text, match.end(), backslashes)
        yield EmbeddedFragment(start, match.end(), backslashes, fragment)
        position = fragment.end


def gaps(text: str, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[int, str]]:
    """SPEC H8: the parts of ``text`` outside ``spans`` (sorted, not overlapping), each with
    where it starts."""
    position = 0
    for start, end in spans:
        if start > position:
            yield position, text[position:start]
        position = max(position, end)
    if position < len(text):
        yield position, text[position:]


def _gap_material(gap: str, offset: int, decodings: int) -> Iterator[Material]:
    """SPEC H8 text forms in a gap: ciphertext assignments, then base64 runs outside them."""
    values: list[tuple[int, int]] = []
    for found in assignments(gap):
        if found.is_ciphertext:
            values.append((found.value_start, found.value_end))
            value = gap[found.value_start : found.value_end]
            if len(value) >= MIN_CIPHERTEXT_CHARS:
                yield Material(offset + found.value_start, value)
    for start, part in gaps(gap, values):
        for run in base64_runs(part):
            at = offset + start + run.start()
            decoded = base64_decoded(run.group())
            if decoded is not None:  # a run that decodes to text is that text
                if decodings < MAX_DECODINGS:
                    for inner in material(decoded, decodings + 1):
                        yield Material(at, inner.value)
            elif is_ciphertext_shaped(run.group()):
                yield Material(at, run.group())


def _embedded(text: str, decodings: int) -> Iterator[Material]:
    """Material in a text that is not one JSON value: embedded JSON, member fragments, and the
    text forms of the gaps between them."""
    spans: list[tuple[int, int]] = []
    for part in embedded_parts(text):
        if isinstance(part, EmbeddedValue):
            spans.append((part.start, part.end))
            if is_envelope(part.value):
                yield Material(part.start, text[part.start : part.end])
            else:
                yield from _values_in(part.value, decodings)
            continue
        spans.append((part.start, part.fragment.end))
        value = part.fragment.value
        if value is None:  # unterminated, or not unescaped: the characters as they stand
            value = text[part.value_start : part.fragment.value_end]
        if len(value) >= MIN_CIPHERTEXT_CHARS:
            yield Material(part.value_start, value)
    for start, gap in gaps(text, spans):
        yield from _gap_material(gap, start, decodings)


def _raw_material(text: str, decodings: int) -> Iterator[Material]:
    value = parse_whole(text)
    if value is None:
        yield from _embedded(text, decodings)
    elif is_envelope(value):
        yield Material(value.start, text[value.start : value.end])
    else:
        yield from _values_in(value, decodings)


def material(text: str, decodings: int = 0) -> Iterator[Material]:
    """SPEC H8: the replay material in one text (a line, a file, or a string found in one), in
    order; then what its decodings (percent escapes, character references) hold that the text
    itself did not show.

    Yields the values found (for hashing by the caller); never call this to display them.
    """
    if MAY_HOLD.search(text) is None:
        return
    found = list(_raw_material(text, decodings))
    yield from found
    if decodings >= MAX_DECODINGS:
        return
    seen = {each.value for each in found}
    for decode in (percent_decoded, references_decoded):
        decoded = decode(text)
        if decoded is None:
            continue
        for inner in material(decoded, decodings + 1):
            if inner.value not in seen:
                seen.add(inner.value)
                yield Material(0, inner.value)


def material_in_text(text: str) -> Iterator[str]:
    """SPEC H8: the values of :func:`material` (for hashing; never display them)."""
    for found in material(text):
        yield found.value


@dataclass(frozen=True, slots=True)
class ScanFinding:
    """One finding of SPEC H8: where, what code, and a digest prefix; never the value."""

    line: int
    sha256_prefix: str
    path: Path | None = None
    code: str = Code.REPLAY_MATERIAL_EXPOSED.value

    def to_json(self) -> dict[str, object]:
        """The shape of the ``scan`` operation (PROTOCOL.md), plus ``file`` when there is one."""
        out: dict[str, object] = {} if self.path is None else {"file": str(self.path)}
        out.update(line=self.line, code=self.code, sha256_prefix=self.sha256_prefix)
        return out


# SPEC H8: a line that ends with a fragment's name (and its colon) is read with the next line.
_HEAD_AT_END: Final = re.compile(
    r"(\\*)\"encrypted_content\1\"[ \t\n\r]*(?::[ \t\n\r]*)?$", re.IGNORECASE | re.ASCII
)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def scan_lines(lines: list[str], path: Path | None = None) -> Iterator[ScanFinding]:
    """The findings of lines numbered from 1, in line order, then in order on the line.

    A line that ends with an ``encrypted_content`` fragment's name, or its name and colon, is
    read together with the lines after it up to the one that holds the value (SPEC H8: a
    pretty-printed member may put its colon or value on the next line).
    """
    number = 0
    while number < len(lines):
        first = number
        chunk = lines[number].removesuffix("\r")
        number += 1
        while number < len(lines) and _HEAD_AT_END.search(chunk) is not None:
            chunk += "\n" + lines[number].removesuffix("\r")
            number += 1
        for found in material(chunk):
            line = first + 1 + _line_of(chunk, found.offset)
            yield ScanFinding(line, sha256_prefix(found.value), path)


def _not_text_finding(data: bytes, path: Path | None) -> ScanFinding:
    digest = hashlib.sha256(data).hexdigest()[:SHA256_PREFIX_HEX]
    return ScanFinding(1, digest, path, Code.SCAN_FILE_NOT_TEXT.value)


def scan_decoded(text: str, path: Path | None = None) -> Iterator[ScanFinding]:
    """SPEC H8: the findings of a file's text: a file that is one JSON value is read as that
    value (a pretty-printed document), any other file line by line."""
    head = text.lstrip(" \t\n\r")[:1]
    whole = parse_whole(text) if head in ("{", "[", '"') else None
    if whole is None:
        yield from scan_lines(text.split("\n"), path)
        return
    for found in material(text):
        yield ScanFinding(1 + _line_of(text, found.offset), sha256_prefix(found.value), path)


def scan_text(text: str) -> tuple[ScanFinding, ...]:
    """The findings of a whole file's text (the ``scan`` operation): a file whose UTF-8 holds a
    NUL byte in its first 8 KiB is not text (SPEC H8), and is read all the same."""
    data = text.encode("utf-8", "surrogatepass")
    findings = tuple(scan_decoded(text))
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return (_not_text_finding(data, None), *findings)
    return findings


# --- files: the I/O edge ----------------------------------------------------------------------

# SPEC H8: the byte-order marks a scanner reads; UTF-32 first (its LE mark begins like UTF-16's).
_BYTE_ORDER_MARKS: Final = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True, slots=True)
class DecodedFile:
    """A file's text, and why it is not text when it is not (then decoded with U+FFFD)."""

    text: str
    not_text: str | None = None


def decode_file(data: bytes) -> DecodedFile:
    """SPEC H8: a file's bytes as text: by its byte-order mark, else UTF-8; a NUL byte in the
    first 8 KiB without a mark, or bytes its encoding does not allow, make it not text."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            body = data[len(mark) :]
            try:
                return DecodedFile(body.decode(encoding))
            except UnicodeDecodeError as error:
                reason = f"not {encoding.upper()} at byte {len(mark) + error.start}"
                return DecodedFile(body.decode(encoding, errors="replace"), reason)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        reason = "a NUL byte in its first 8 KiB and no byte-order mark (binary, or UTF-16/32)"
        return DecodedFile(data.decode("utf-8", errors="replace"), reason)
    try:
        return DecodedFile(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        return DecodedFile(
            data.decode("utf-8", errors="replace"), f"not UTF-8 at byte {error.start}"
        )


@dataclass(frozen=True, slots=True)
class FileScan:
    """The result of scanning one file: its findings, or why it was skipped, or an I/O error."""

    path: Path
    findings: tuple[ScanFinding, ...] = ()
    notes: tuple[str, ...] = field(default=())
    skipped: str | None = None
    error: str | None = None


def scan_file(path: Path, *, named: bool = True, skip_binary: bool = False) -> FileScan:
    """Scan one file (SPEC H8). Never raises for I/O: the error is in the result.

    The file is opened without blocking and refused unless it is a regular file: a FIFO would
    block the scan forever, a device never ends. A file the user ``named`` that cannot be
    scanned is an error (the scan fails closed); one met in a directory walk is skipped with
    its kind, and a symbolic link there that leads nowhere is skipped too. A file that is not
    text is a finding (``scan_file_not_text``) and is scanned as UTF-8 with U+FFFD all the
    same, unless ``skip_binary``: then it is skipped, and the result says why.
    """
    try:
        data, _status = read_regular(path)
    except NotARegularFileError as error:
        reason = f"{error.strerror}: not scanned"
        return FileScan(path, error=reason) if named else FileScan(path, skipped=reason)
    except FileNotFoundError as error:
        if not named and path.is_symlink():
            return FileScan(path, skipped="symbolic link to nothing")
        return FileScan(path, error=error.strerror or str(error))
    except OSError as error:
        return FileScan(path, error=error.strerror or str(error))
    decoded = decode_file(data)
    if decoded.not_text is None:
        return FileScan(path, tuple(scan_decoded(decoded.text, path)))
    if skip_binary:
        return FileScan(path, skipped=f"not text: {decoded.not_text}")
    findings = (_not_text_finding(data, path), *scan_decoded(decoded.text, path))
    return FileScan(path, findings, (f"not text: {decoded.not_text}",))


def entries_under(path: Path) -> Iterator[Path | FileScan]:
    """``path`` itself, or every entry under a directory that is not a directory, recursively,
    sorted by name, a directory's entries before its subdirectories'.

    Symbolic links to directories are not followed (no loops, no scanning outside the tree); a
    directory that cannot be read is a :class:`FileScan` with its error, never left out: a leak
    scanner that skipped it would report "no finding" about what it never read (SPEC H8).
    """
    if not path.is_dir():
        yield path
        return
    for listing in listings(str(path)):
        if listing.error is not None:
            error = listing.error
            reason = f"cannot read directory: {error.strerror or error}"
            yield FileScan(Path(listing.directory), error=reason)
            continue
        for entry in listing.entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    yield Path(entry.path)
            except OSError as error:
                yield FileScan(Path(entry.path), error=error.strerror or str(error))


def scan_paths(paths: Iterable[Path], *, skip_binary: bool = False) -> Iterator[FileScan]:
    """Scan files and directories (recursively). A missing path is a result with an error."""
    for path in paths:
        if not path.exists():
            yield FileScan(path, error="no such file or directory")
            continue
        named = not path.is_dir()
        for entry in entries_under(path):
            if isinstance(entry, FileScan):
                yield entry
            else:
                yield scan_file(entry, named=named, skip_binary=skip_binary)
