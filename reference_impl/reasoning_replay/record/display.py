"""The display text of a reasoning item, and whether a display channel agrees with it (SPEC ST3).

Pure functions of an item's parts and a channel's blocks; the validator reports what they find
(SPEC H3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .envelope import ReasoningReplayItem

# SPEC ST3: the characters trimmed from both ends of a part, listed there one by one.
TRIMMED: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
EMPTY_SUMMARY_PLACEHOLDER: Final = "<!-- -->"  # SPEC ST3: a part whose body is this is dropped
PART_SEPARATOR: Final = "\n\n"


def _body(text: str) -> str:
    """SPEC ST3: after a leading ``**title**`` that ends its line, the rest; else the text."""
    if not text.startswith("**"):
        return text
    closing = text.find("**", 2)
    if closing < 3:
        return text
    rest = text[closing + 2 :]
    return rest if rest.startswith(("\n", "\r")) else text


def display_text(item: ReasoningReplayItem) -> str | None:
    """SPEC ST3: the text a display channel shows for ``item``, or ``None`` when it has none.

    From the summary parts only (content is never display text, SPEC §17): each part trimmed
    first, then dropped when empty or when its body is the placeholder; the trimmed texts (not
    their bodies) are joined."""
    kept = []
    for text in item.summary:
        trimmed = text.strip(TRIMMED)
        if trimmed and _body(trimmed).strip(TRIMMED) != EMPTY_SUMMARY_PLACEHOLDER:
            kept.append(trimmed)
    return PART_SEPARATOR.join(kept) or None


def display_consistent(items: Sequence[ReasoningReplayItem], display_texts: Sequence[str]) -> bool:
    """SPEC ST3: the items' display texts, in order, are a subsequence of the display
    channel's text-block texts, each compared exactly as stored (never trimmed)."""
    # Plain loops, not generators: a validator checks every assistant message of every file.
    remaining = iter(display_texts)
    for item in items:
        wanted = display_text(item)
        if wanted is None:
            continue
        for text in remaining:
            if text == wanted:
                break
        else:  # the channel ran out before this item's text was found
            return False
    return True
