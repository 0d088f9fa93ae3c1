"""The bank's sentences word money in dollars and areas with thousands separators."""

from __future__ import annotations

import pytest

from bank import wording


@pytest.mark.parametrize(
    ("cents", "said"),
    [(0, "$0.00"), (5, "$0.05"), (20_000, "$200.00"), (123_456, "$1,234.56"), (-5, "-$0.05")],
)
def test_cents_are_said_in_dollars(cents: int, said: str) -> None:
    assert wording.dollars(cents) == said


@pytest.mark.parametrize(("area", "said"), [(1, "1 sq ft"), (25_931, "25,931 sq ft")])
def test_areas_are_said_with_thousands_separators(area: int, said: str) -> None:
    assert wording.sqft(area) == said
