"""SPEC E6, the reader's statement: one block text in, its verdict out, every check in E6 order.

A spec reader can follow it rule by rule; ``REASONING_REPLAY_PURE_PYTHON=1`` runs it. Otherwise
:func:`.reader.parse_reasoning_replay_envelope` takes the accelerated paths of :mod:`._fast`,
which give every text the verdict :func:`read_block` gives (the differential tests and
``tools/fuzz.py`` compare them).
"""

from __future__ import annotations

from reasoning_replay.diagnostics import Code

from .envelope import check_envelope_value
from .jsontext import TextRefused, parse_strict_statement
from .verdict import REFUSED, ReadResult


def read_block(text: str | bytes) -> ReadResult:
    """Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

    ``text`` is the block's text as characters or as the bytes it was stored as. The first check
    that fails gives the code (E6); nothing raises (E4.2).
    """
    if not isinstance(text, (str, bytes)):  # not a text at all: no JSON value (SPEC E4.2)
        return REFUSED[Code.JSON_MALFORMED]
    # The text (E6 steps 1–5, SPEC E4, E4.1), by jsontext.parse_strict_statement:
    #   1. limits (E4.1): over 16 MiB of UTF-8, or nested deeper than 32 → limit_exceeded;
    #   2. encoding: bad UTF-8, or a surrogate among the characters → json_invalid_unicode;
    #   3. grammar (RFC 8259): a byte-order mark, NaN, trailing data, ... → json_malformed;
    #   4. Unicode: an escaped lone surrogate in a string or name → json_invalid_unicode;
    #   5. duplicates: one object naming a member twice (E4) → json_duplicate_member.
    value = parse_strict_statement(text)
    if isinstance(value, TextRefused):
        return REFUSED[value.code]
    # The value (E6 steps 6–13, SPEC E1, E2, E3, E5, H2), by envelope.check_envelope_value:
    #   6. not an object → json_not_object;
    #   7. no `schema` (E5): a legacy record, or envelope_member_missing;
    #   8. `schema` (E1, H2): redacted_record, or envelope_schema_unknown;
    #   9. `version` (E1): missing, invalid or unsupported;
    #  10. envelope members (E1): `item` missing, or an unknown member;
    #  11. `item` not an object → item_not_object;
    #  12. an unknown member of `item` (E2) → item_member_unknown;
    #  13. item fields in order (E2, E3): type, id, summary, encrypted_content, content.
    checked = check_envelope_value(value)
    if isinstance(checked, Code):
        return REFUSED[checked]
    return ReadResult(checked, None)  # every check passed: resumable
