# The C accelerator of history.history_files.read_message_channels (_history.c); absent where it
# was not built.

from collections.abc import Mapping
from typing import Any

def read_history(
    data: str | bytes, no_channels: Mapping[str, list[Any]], /
) -> list[tuple[str, Mapping[str, list[Any]], str | None]] | None:
    """For each message of a history file (SPEC H1), ``(role, channels, provider)``: channels is
    ``no_channels`` where the message has none, provider ``None`` where it records none (SPEC
    P4). ``None`` for a file it leaves to history_files' other readings."""
