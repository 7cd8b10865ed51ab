"""A block's verdict (SPEC E4.2, E6): what every path of the reader returns."""

from __future__ import annotations

from typing import Any, Final

import msgspec

from reasoning_replay.diagnostics import Code

from .envelope import ReasoningReplayItem


class ReadResult(msgspec.Struct, frozen=True, gc=False):
    """A block's verdict (SPEC E4.2): resumable with its item, or not, with exactly one code.

    A frozen msgspec Struct, like :class:`.envelope.ReasoningReplayItem`, for its cheap creation.
    """

    item: ReasoningReplayItem | None
    code: Code | None

    @property
    def resumable(self) -> bool:
        return self.item is not None

    def provider_input(self) -> dict[str, Any] | None:
        """The replay item as provider input (SPEC P1), or ``None`` for a non-resumable block."""
        return None if self.item is None else self.item.to_provider_input()


REFUSED: Final = {code: ReadResult(None, code) for code in Code}
"""One shared result per code: they are frozen, and a refusal then costs no allocation."""
