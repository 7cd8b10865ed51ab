"""SPEC §1.2 (terms): the type of a provider input item, the Responses API's short form of a
message included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

MESSAGE: Final = "message"


def item_type(item: Mapping[str, Any]) -> object:
    """SPEC §1.2: an item's ``type``; an item with no ``type`` member and a ``role`` member is a
    ``message`` (the short form ``{"role": "user", "content": "hi"}``)."""
    if "type" not in item and "role" in item:
        return MESSAGE
    return item.get("type")


def is_message(item: Mapping[str, Any], role: str) -> bool:
    """SPEC §1.2: ``item`` is an item of type ``message`` with this ``role`` (D7, §9.1, F2)."""
    return item_type(item) == MESSAGE and item.get("role") == role
