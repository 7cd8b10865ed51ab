"""The version 1 envelope and its replay item (SPEC §3): the types, and the check of a JSON value.

:func:`check_envelope_value` is SPEC E6 steps 6–13: given the value a block text denotes, it returns
the replay item, or the one code of the first rule the value breaks.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from reasoning_replay.diagnostics import Code

SCHEMA_NAME: Final = "fast-agent.openai-responses.reasoning-replay"  # SPEC E1
SCHEMA_VERSION: Final = 1  # SPEC E1
REDACTED_SCHEMA_NAME: Final = SCHEMA_NAME + ".redacted"  # SPEC H2
REPLAY_CHANNEL: Final = "openai-reasoning-encrypted"  # SPEC ST1
DISPLAY_CHANNEL: Final = "reasoning"  # SPEC ST2

ENVELOPE_MEMBERS: Final = frozenset(("schema", "version", "item"))
ITEM_MEMBERS: Final = frozenset(("type", "id", "summary", "encrypted_content", "content"))
PART_MEMBERS: Final = frozenset(("type", "text"))
LEGACY_MINIMAL_MEMBERS: Final = frozenset(("type", "id", "encrypted_content"))
SUMMARY_PART_TYPE: Final = "summary_text"
CONTENT_PART_TYPE: Final = "reasoning_text"


class ReasoningReplayItem(msgspec.Struct, frozen=True, gc=False):
    """A canonical reasoning item (SPEC E2): what is stored inside an envelope and replayed.

    ``summary`` and ``content`` hold the ``text`` of each part, in order; ``content`` is ``None``
    when the item has none (it is never empty). A frozen msgspec Struct rather than a dataclass:
    the reader makes one per block, and a Struct is about ten times cheaper to create.
    """

    id: str
    summary: tuple[str, ...]
    encrypted_content: str
    content: tuple[str, ...] | None = None

    def to_provider_input(self) -> dict[str, Any]:
        """The provider input item (SPEC P1), members in the canonical order of SPEC C3."""
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": self.id,
            "summary": [{"type": SUMMARY_PART_TYPE, "text": text} for text in self.summary],
            "encrypted_content": self.encrypted_content,
        }
        if self.content is not None:
            item["content"] = [{"type": CONTENT_PART_TYPE, "text": text} for text in self.content]
        return item

    def to_envelope(self) -> dict[str, Any]:
        """The envelope object (SPEC E1) wrapping this item."""
        return {"schema": SCHEMA_NAME, "version": SCHEMA_VERSION, "item": self.to_provider_input()}


def is_json_number(value: object) -> bool:
    """JSON numbers as a parser yields them; Python's ``bool`` is an ``int`` but not a number."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def part_texts(value: object, part_type: str) -> tuple[str, ...] | None:
    """The texts of an array of parts that are each exactly ``{type: part_type, text: str}``."""
    if not isinstance(value, list):
        return None
    texts = []
    for part in value:
        if not isinstance(part, dict) or part.keys() != PART_MEMBERS:
            return None
        text = part["text"]
        if part["type"] != part_type or not isinstance(text, str):
            return None
        texts.append(text)
    return tuple(texts)


def classify_unversioned(value: dict[str, Any]) -> Code:
    """SPEC E5 (E6 step 7): an object without ``schema``."""
    if "encrypted_content" not in value:
        return Code.ENVELOPE_MEMBER_MISSING
    if value.keys() <= LEGACY_MINIMAL_MEMBERS:
        return Code.LEGACY_MINIMAL_RECORD
    return Code.RAW_SDK_SNAPSHOT


def check_item_value(item: object) -> ReasoningReplayItem | Code:
    """SPEC E6 steps 11–13: the value of an envelope's ``item`` member."""
    if not isinstance(item, dict):  # step 11
        return Code.ITEM_NOT_OBJECT
    if not item.keys() <= ITEM_MEMBERS:  # step 12 (SPEC E2)
        return Code.ITEM_MEMBER_UNKNOWN
    # Step 13, field by field in E6's order (SPEC E2, E3).
    if item.get("type") != "reasoning":
        return Code.ITEM_TYPE_INVALID
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        return Code.ITEM_ID_INVALID
    summary = part_texts(item.get("summary"), SUMMARY_PART_TYPE)
    if summary is None:
        return Code.ITEM_SUMMARY_INVALID
    ciphertext = item.get("encrypted_content")
    if not isinstance(ciphertext, str) or not ciphertext:
        return Code.ITEM_CIPHERTEXT_INVALID
    content = None
    if "content" in item:
        content = part_texts(item["content"], CONTENT_PART_TYPE)
        if not content:  # None, or the empty array E2 forbids
            return Code.ITEM_CONTENT_INVALID
    return ReasoningReplayItem(item_id, summary, ciphertext, content)


def check_envelope_value(value: object) -> ReasoningReplayItem | Code:
    """SPEC E6 steps 6–13: the replay item of an envelope value, or the first code it earns."""
    if not isinstance(value, dict):  # step 6
        return Code.JSON_NOT_OBJECT
    if "schema" not in value:  # step 7 (SPEC E5)
        return classify_unversioned(value)
    if value["schema"] != SCHEMA_NAME:  # step 8 (SPEC E1)
        if value["schema"] == REDACTED_SCHEMA_NAME:  # SPEC H2: named, never resumable
            return Code.REDACTED_RECORD
        return Code.ENVELOPE_SCHEMA_UNKNOWN
    if "version" not in value:  # step 9 (SPEC E1)
        return Code.ENVELOPE_MEMBER_MISSING
    version = value["version"]
    if not is_json_number(version):
        return Code.ENVELOPE_VERSION_INVALID
    if version != SCHEMA_VERSION:  # compared as numbers: 1.0 is version 1 (SPEC E1)
        return Code.ENVELOPE_VERSION_UNSUPPORTED
    if "item" not in value:  # step 10 (SPEC E1)
        return Code.ENVELOPE_MEMBER_MISSING
    if value.keys() != ENVELOPE_MEMBERS:
        return Code.ENVELOPE_MEMBER_UNKNOWN
    return check_item_value(value["item"])
