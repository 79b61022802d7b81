"""Auto-arrange: the valid split of 13 cards with the highest expected units against random hands.

Objective: for each chi, P(win) and P(lose) against a uniformly random hand of its size from the
full 52-card deck (a tie is neither); ``expected_units`` = Σ over the three chi of
P(win) × (the units that chi pays when won with this hand) − P(lose). Every one of the 72,072
splits (5 of 13 for chi 1, 5 of the other 8 for chi 2) is scored; binh lủng splits are excluded;
ties go to the stronger chi 1, then the stronger chi 2; what is still tied is the same hand in
other suits, and the first in card order wins.

All in numpy: the 1,287 five-card and 286 three-card subsets of the hand get their classes from
``tables``; each class has its value for each chi precomputed; the splits are three fixed index
arrays into the subsets. Values are exact integers over 12,994,800 (the least common multiple of
2,598,960 and 22,100), so equal objectives compare equal whatever the order of the sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from math import lcm
from typing import Final

import numpy as np

from services.games.maubinh.cards import distinct
from services.games.maubinh.errors import HandError
from services.games.maubinh.hand import HAND_SIZE, Hand
from services.games.maubinh.instant import instant_win
from services.games.maubinh.ranking import win_units
from services.games.maubinh.settings import InstantWin, MauBinhSettings
from services.games.maubinh.tables import (
    Cards,
    Ints,
    StrengthTable,
    colex_combinations,
    five_card_table,
    three_card_table,
)

CLASS_BITS: Final = 13  # 7,462 five-card classes fit in 13 bits


@dataclass(frozen=True, slots=True)
class Arrangement:
    chi1: tuple[int, ...]
    chi2: tuple[int, ...]
    chi3: tuple[int, ...]
    expected_units: float
    instant: InstantWin | None  # the hand wins at once whatever the arrangement


@dataclass(frozen=True)
class Splits:
    """The 72,072 splits of 13 positions, as indices into the 5-subsets and 3-subsets of those positions."""

    five: Cards  # (1287, 5) positions, ascending
    three: Cards  # (286, 3)
    chi1: Ints  # split → row of ``five``
    chi2: Ints
    chi3: Ints  # split → row of ``three``


@cache
def splits() -> Splits:
    five = colex_combinations(HAND_SIZE, 5)
    three = colex_combinations(HAND_SIZE, 3)
    masks5 = (np.int64(1) << five.astype(np.int64)).sum(axis=1)
    masks3 = (np.int64(1) << three.astype(np.int64)).sum(axis=1)
    row_of_three = np.full(1 << HAND_SIZE, -1, dtype=np.int64)
    row_of_three[masks3] = np.arange(len(three))
    chi1, chi2 = np.nonzero((masks5[:, None] & masks5[None, :]) == 0)
    chi3 = row_of_three[((1 << HAND_SIZE) - 1) ^ masks5[chi1] ^ masks5[chi2]]
    return Splits(five, three, chi1.astype(np.int64), chi2.astype(np.int64), chi3)


@dataclass(frozen=True)
class Objective:
    """Per class, a chi's value at each place: (wins × units if won − losses), scaled to ``scale``."""

    scale: int
    chi1: Ints
    chi2: Ints
    chi3: Ints


def _values(table: StrengthTable, chi: int, scale: int) -> Ints:
    units = np.array([win_units(chi, int(value)) for value in table.strengths], dtype=np.int64)
    return (table.below * units - table.above) * (scale // table.total)


@cache
def objective() -> Objective:
    five, three = five_card_table(), three_card_table()
    scale = lcm(five.total, three.total)
    return Objective(scale, _values(five, 0, scale), _values(five, 1, scale), _values(three, 2, scale))


def expected_units(chi1: Sequence[int], chi2: Sequence[int], chi3: Sequence[int]) -> float:
    """The objective for one arrangement (binh lủng or not)."""
    Hand.of(chi1, chi2, chi3)  # refuses wrong sizes and repeated cards before they reach the tables
    goal = objective()
    first, second = five_card_table().classes(np.array([sorted(chi1), sorted(chi2)], dtype=np.uint8))
    (third,) = three_card_table().classes(np.array([sorted(chi3)], dtype=np.uint8))
    return int(goal.chi1[first] + goal.chi2[second] + goal.chi3[third]) / goal.scale


def auto_arrange(cards: Sequence[int], settings: MauBinhSettings | None = None) -> Arrangement:
    """The best valid arrangement of 13 distinct cards (card numbers), and the hand's instant win if any."""
    cards = distinct(cards, "hand to arrange")
    if len(cards) != HAND_SIZE:
        raise HandError(f"hand to arrange: expected {HAND_SIZE} cards, got {len(cards)}")
    hand = np.array(sorted(cards), dtype=np.uint8)
    five, three, goal, split = five_card_table(), three_card_table(), objective(), splits()
    classes5 = five.classes(hand[split.five])
    classes3 = three.classes(hand[split.three])
    first, second, third = classes5[split.chi1], classes5[split.chi2], classes3[split.chi3]
    valid = (first >= second) & (five.strengths[second] >= three.strengths[third])
    score = goal.chi1[first] + goal.chi2[second] + goal.chi3[third]
    key = (score << (2 * CLASS_BITS)) + (first << CLASS_BITS) + second  # ties: stronger chi 1, then chi 2
    best = int(np.argmax(np.where(valid, key, np.iinfo(np.int64).min)))
    assert valid[best], "a valid split always exists: the best five, the best five of the rest, the last three"
    chosen = [tuple(int(card) for card in rows) for rows in _chosen(hand, split, best)]
    return Arrangement(
        chosen[0],
        chosen[1],
        chosen[2],
        int(score[best]) / goal.scale,
        instant_win(cards, settings or MauBinhSettings()),
    )


def _chosen(hand: Cards, split: Splits, index: int) -> tuple[Cards, Cards, Cards]:
    return (
        hand[split.five[split.chi1[index]]],
        hand[split.five[split.chi2[index]]],
        hand[split.three[split.chi3[index]]],
    )
