"""The display text of a reasoning item and the display channel's consistency (SPEC ST3)."""

from __future__ import annotations

import pytest
from reasoning_replay.record.display import TRIMMED, display_consistent, display_text
from reasoning_replay.record.envelope import ReasoningReplayItem


def item(*summary: str, content: tuple[str, ...] | None = None) -> ReasoningReplayItem:
    return ReasoningReplayItem(id="rs_1", summary=summary, encrypted_content="c", content=content)


def test_parts_are_trimmed_and_joined_by_a_blank_line() -> None:
    assert display_text(item(" A1\n", "A2\t")) == "A1\n\nA2"


def test_blank_parts_and_placeholder_bodies_are_dropped() -> None:
    assert display_text(item("  ", "**Plan**\n<!-- -->", "A")) == "A"


@pytest.mark.parametrize("text", ["**Plan** <!-- -->", "****\n<!-- -->"])
def test_a_title_not_ending_its_line_keeps_the_whole_text(text: str) -> None:
    assert display_text(item(text)) == text


def test_content_parts_never_give_display_text() -> None:
    assert display_text(item(content=("R1", "R2"))) is None
    assert display_text(item("", " ", content=("R",))) is None
    assert display_text(item("S", content=("R",))) == "S"


def test_a_part_is_trimmed_before_the_placeholder_test() -> None:
    assert display_text(item("  **Plan**\n<!-- -->", "A")) == "A"


def test_the_trimmed_texts_are_joined_not_their_bodies() -> None:
    assert display_text(item("**Plan**\nB1 ", "B2")) == "**Plan**\nB1\n\nB2"


def test_trimmed_characters_are_exactly_the_listed_ones() -> None:
    assert display_text(item("\u200bA\ufeff")) == "\u200bA\ufeff"
    assert display_text(item(f"{TRIMMED}A{TRIMMED}")) == "A"


def test_left_over_display_blocks_are_consistent_but_order_and_joins_count() -> None:
    items = [item("A"), item("B")]
    assert display_consistent(items, ["uncaptured", "A", "B"])
    assert not display_consistent(items, ["B", "A"])
    assert not display_consistent(items, ["A\n\nB"])
    assert display_consistent([item("")], ["streamed"])


def test_display_blocks_are_compared_exactly_as_stored() -> None:
    assert display_consistent([item(" A ")], ["A"])
    assert not display_consistent([item("A")], ["A\n"])
    assert not display_consistent([item("A")], [" A"])
