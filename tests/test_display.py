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


def test_content_is_shown_only_when_no_summary_part_is_empty_free() -> None:
    assert display_text(item("", content=("R1", "R2"))) == "R1\n\nR2"
    assert display_text(item("S", content=("R",))) == "S"


def test_a_whitespace_only_summary_hides_the_content() -> None:
    # A non-empty part counts before trimming, so the content is not consulted.
    assert display_text(item(" ", content=("R",))) is None


def test_trimmed_characters_are_exactly_the_listed_ones() -> None:
    assert display_text(item("\u200bA\ufeff")) == "\u200bA\ufeff"
    assert display_text(item(f"{TRIMMED}A{TRIMMED}")) == "A"


def test_left_over_display_blocks_are_consistent_but_order_and_joins_count() -> None:
    items = [item("A"), item("B")]
    assert display_consistent(items, ["uncaptured", "A", "B"])
    assert not display_consistent(items, ["B", "A"])
    assert not display_consistent(items, ["A\n\nB"])
    assert display_consistent([item("")], ["streamed"])
