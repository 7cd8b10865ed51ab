"""The writer (SPEC C3, C4): a replay item in, its canonical envelope text out."""

from __future__ import annotations

import json

from reasoning_replay.diagnostics import ReplayRecordError

from .envelope import ReasoningReplayItem
from .reader import parse_reasoning_replay_envelope


def canonical_json(value: object) -> str:
    """SPEC C3 bytes (as text) for a value whose objects are already in canonical member order.

    Python's compact encoder with ``ensure_ascii=False`` escapes exactly what RFC 8785 §3.2.2.2
    escapes, with the same short forms and lowercase ``\\u00xx``, and keeps dict order.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def serialize_reasoning_replay_envelope(item: ReasoningReplayItem) -> str:
    """The canonical envelope text of ``item`` (SPEC C3), checked by the reader (SPEC C4).

    Raises :class:`ReplayRecordError` only when ``item`` was built by hand with values that are not
    canonical (an empty id, say): capture never produces such an item.
    """
    text = canonical_json(item.to_envelope())
    checked = parse_reasoning_replay_envelope(text)
    if checked.item != item:
        assert checked.code is not None
        raise ReplayRecordError(checked.code, f"the envelope of {item!r} is not canonical")
    return text
