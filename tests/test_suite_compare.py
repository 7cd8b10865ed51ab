"""JSON comparison: exact, order-insensitive objects, ordered arrays, first-mismatch pointers."""

from __future__ import annotations

from reasoning_replay.suite.compare import ABSENT, first_difference, json_equal


def test_member_order_is_ignored_and_int_equals_float() -> None:
    assert json_equal({"a": 1, "b": [1.0, 2]}, {"b": [1, 2.0], "a": 1.0})


def test_booleans_are_not_numbers() -> None:
    m = first_difference({"v": 1}, {"v": True})
    assert m is not None and m.pointer == "/v" and m.reason == "expected number, got boolean"


def test_array_order_matters() -> None:
    m = first_difference([1, 2], [2, 1])
    assert m is not None and (m.pointer, m.expected, m.actual) == ("/0", 1, 2)


def test_missing_member_points_at_it() -> None:
    m = first_difference({"a": {"b": 1}}, {"a": {}})
    assert m is not None and m.pointer == "/a/b" and m.actual is ABSENT and m.expected == 1


def test_extra_member_is_a_difference() -> None:
    m = first_difference({"a": 1}, {"a": 1, "z": 2})
    assert m is not None and m.pointer == "/z" and m.expected is ABSENT and m.actual == 2


def test_array_length_difference_points_at_first_missing_index() -> None:
    m = first_difference([1, 2, 3], [1, 2])
    assert m is not None and m.pointer == "/2" and m.expected == 3 and m.actual is ABSENT


def test_pointer_tokens_are_escaped() -> None:
    m = first_difference({"a/b": {"c~d": 1}}, {"a/b": {"c~d": 2}})
    assert m is not None and m.pointer == "/a~1b/c~0d"


def test_null_and_strings_compare_exactly() -> None:
    assert first_difference(None, None) is None
    assert first_difference("é", "e\u0301") is not None  # no Unicode normalisation
