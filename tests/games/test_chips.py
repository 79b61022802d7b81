"""The chips a table's page offers when the table names none: a 1-2-5 ladder around its typical stakes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.games.settings import chips_between


@pytest.mark.parametrize(
    ("low", "high", "chips"),
    [
        (1, 1_000_000, (200, 500, 1_000, 2_000, 5_000, 10_000)),  # THB 2-100, not THB 0.01-0.50
        (100, 1_000_000, (2_000, 5_000, 10_000, 20_000, 50_000, 100_000)),
        (10_000, 1_000_000, (20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)),
        (1, 10, (1, 2, 5, 10)),  # a short ladder: all of it
        (30, 250, (30, 50, 100, 200)),  # the minimum is a chip even off the ladder
        (5, 5, (5,)),
    ],
)
def test_the_chips_of_some_limits(low: int, high: int, chips: tuple[int, ...]) -> None:
    assert chips_between(low, high) == chips


def on_the_ladder(value: int) -> bool:
    text = str(value)
    return text[0] in "125" and set(text[1:]) <= {"0"}


@given(st.integers(1, 10**15), st.integers(1, 10**15), st.integers(1, 8))
def test_chips_are_few_rising_within_the_limits_and_around_their_middle(a: int, b: int, most: int) -> None:
    low, high = min(a, b), max(a, b)
    chips = chips_between(low, high, most)
    ladder = [low] + [v for v in (m * 10**e for e in range(19) for m in (1, 2, 5)) if low < v <= high]
    assert 1 <= len(chips) == min(most, len(ladder))
    assert list(chips) == sorted(set(chips)) and low <= chips[0] and chips[-1] <= high
    assert all(chip == low or on_the_ladder(chip) for chip in chips)
    assert list(chips) == ladder[ladder.index(chips[0]) : ladder.index(chips[0]) + len(chips)]  # consecutive
    middle = math.sqrt(low * high)
    nearest = min(ladder, key=lambda value: abs(math.log(value / middle)))
    assert nearest in chips
