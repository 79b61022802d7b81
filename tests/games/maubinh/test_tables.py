"""Golden counts over every 5-card and 3-card hand of one deck, and the tables' agreement with the scalar evaluator.

The expected numbers are the textbook poker counts: this game's straight order moves A-2-3-4-5
up but changes no count, and a 3-card hand is only a three of a kind, a pair or high cards.
"""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np

from services.games.maubinh import Category, category_of, strength
from services.games.maubinh.tables import colex_combinations, five_card_table, three_card_table

from .helpers import c

FIVE_CARD_HANDS = {
    Category.STRAIGHT_FLUSH: 40,
    Category.FOUR_OF_A_KIND: 624,
    Category.FULL_HOUSE: 3_744,
    Category.FLUSH: 5_108,
    Category.STRAIGHT: 10_200,
    Category.THREE_OF_A_KIND: 54_912,
    Category.TWO_PAIR: 123_552,
    Category.PAIR: 1_098_240,
    Category.HIGH_CARD: 1_302_540,
}
FIVE_CARD_CLASSES = {  # distinct strengths per category: 7,462 in all
    Category.STRAIGHT_FLUSH: 10,
    Category.FOUR_OF_A_KIND: 156,
    Category.FULL_HOUSE: 156,
    Category.FLUSH: 1_277,
    Category.STRAIGHT: 10,
    Category.THREE_OF_A_KIND: 858,
    Category.TWO_PAIR: 858,
    Category.PAIR: 2_860,
    Category.HIGH_CARD: 1_277,
}
THREE_CARD_HANDS = {Category.THREE_OF_A_KIND: 52, Category.PAIR: 3_744, Category.HIGH_CARD: 18_304}
THREE_CARD_CLASSES = {Category.THREE_OF_A_KIND: 13, Category.PAIR: 156, Category.HIGH_CARD: 286}


def per_category(strengths: np.ndarray, weights: np.ndarray) -> dict[Category, int]:
    found: dict[Category, int] = {}
    for value, weight in zip(strengths.tolist(), weights.tolist(), strict=True):
        category = category_of(value)
        found[category] = found.get(category, 0) + weight
    return found


def test_every_five_card_hand_counted_by_category() -> None:
    table = five_card_table()
    hands = colex_combinations(52, 5)
    assert hands.shape == (2_598_960, 5)
    classes = table.classes(hands)  # the whole deck through the vectorised path, here and now
    counts = np.bincount(classes, minlength=len(table.strengths))
    assert per_category(table.strengths, counts) == FIVE_CARD_HANDS
    assert per_category(table.strengths, np.ones(len(table.strengths), dtype=np.int64)) == FIVE_CARD_CLASSES
    assert counts.min() > 0 and (counts == table.counts).all()


def test_every_three_card_hand_counted_by_category() -> None:
    table = three_card_table()
    counts = np.bincount(table.classes(colex_combinations(52, 3)), minlength=len(table.strengths))
    assert counts.sum() == 22_100
    assert per_category(table.strengths, counts) == THREE_CARD_HANDS
    assert per_category(table.strengths, np.ones(len(table.strengths), dtype=np.int64)) == THREE_CARD_CLASSES


def test_classes_are_numbered_weakest_first_with_the_hands_below_and_above() -> None:
    for table in (five_card_table(), three_card_table()):
        assert (np.diff(table.strengths) > 0).all()
        assert (table.below + table.counts + table.above == table.total).all()
        assert table.below[0] == 0 and table.above[-1] == 0


def test_colex_order_lists_every_subset_once() -> None:
    rows = [tuple(row) for row in colex_combinations(9, 4).tolist()]
    assert rows == sorted(combinations(range(9), 4), key=lambda subset: subset[::-1])


def test_the_tables_agree_with_the_scalar_evaluator() -> None:
    rng = random.Random(7)
    for size, table in ((5, five_card_table()), (3, three_card_table())):
        hands = [sorted(rng.sample(range(52), size)) for _ in range(20_000)]
        if size == 5:  # one-suit hands are rare in a random sample: add some of each suit
            hands += [sorted(rng.sample(range(suit, 52, 4), 5)) for suit in range(4) for _ in range(200)]
        found = table.strengths[table.classes(np.array(hands, dtype=np.uint8))]
        assert found.tolist() == [strength(hand) for hand in hands]


def test_exact_odds_of_the_wheel_against_a_random_five_card_hand() -> None:
    # Below A-2-3-4-5: every hand under a straight and the eight straights 6-high to K-high (1,020 each).
    # Above: T-J-Q-K-A straights, then flushes, full houses, fours of a kind, straight flushes.
    table = five_card_table()
    wheel = int(np.searchsorted(table.strengths, strength(c("AS 2H 3D 4C 5S"))))
    below = 1_302_540 + 1_098_240 + 123_552 + 54_912 + 8 * 1_020
    above = 1_020 + 5_108 + 3_744 + 624 + 40
    assert (table.below[wheel], table.counts[wheel], table.above[wheel]) == (below, 1_020, above)


def test_the_weakest_and_strongest_hands_beat_nothing_and_lose_to_nothing() -> None:
    five, three = five_card_table(), three_card_table()
    assert (five.counts[0], five.above[0]) == (1_020, 2_598_960 - 1_020)  # 7-5-4-3-2 unsuited
    assert (five.counts[-1], five.below[-1]) == (4, 2_598_960 - 4)  # royal flushes
    assert (three.counts[0], three.counts[-1], three.below[-1]) == (64, 4, 22_100 - 4)  # 4-3-2 and A-A-A
