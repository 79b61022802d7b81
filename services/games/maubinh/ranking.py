"""Hand ranking of one chi, and what winning a chi with it pays.

A chi's strength is one integer: the category above bit 20, then five 4-bit rank digits, most
significant first, where a digit is ``rank + 1`` and 0 stands for a missing card. A 3-card chi has
two trailing zero digits, which is the spec's "as if it had two missing low kickers": comparing
integers compares any two chi, of 5 or 3 cards. Equal integers are equal hands (no suit tie-breaks).
Straights get one digit, ``top + 1`` for 6-high to K-high (5–12), 13 for A-2-3-4-5 and 14 for
T-J-Q-K-A, this game's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Final

from services.games.maubinh.cards import ACE, rank_of, suit_of

DIGITS: Final = 5
CATEGORY_SHIFT: Final = 4 * DIGITS
WHEEL: Final = (0, 1, 2, 3, ACE)  # A-2-3-4-5
WHEEL_DIGIT: Final = ACE + 1  # above the K-high straight (K's digit is 12)
BROADWAY_DIGIT: Final = ACE + 2


class Category(IntEnum):
    """Hand categories, weakest first (Vietnamese names in the spec's "Hand ranking")."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8

    @property
    def label(self) -> str:
        return self.name.lower()


# Category by the multiplicities of the ranks, largest first, when the cards are no straight or flush.
_BY_SHAPE: Final[dict[tuple[int, ...], Category]] = {
    (4, 1): Category.FOUR_OF_A_KIND,
    (3, 2): Category.FULL_HOUSE,
    (3, 1, 1): Category.THREE_OF_A_KIND,
    (2, 2, 1): Category.TWO_PAIR,
    (2, 1, 1, 1): Category.PAIR,
    (1, 1, 1, 1, 1): Category.HIGH_CARD,
    (3,): Category.THREE_OF_A_KIND,
    (2, 1): Category.PAIR,
    (1, 1, 1): Category.HIGH_CARD,
}

# Units a chi pays when won with these categories (1 otherwise), by chi: chi 1, chi 2, chi 3.
BONUS: Final[tuple[dict[Category, int], ...]] = (
    {Category.STRAIGHT_FLUSH: 5, Category.FOUR_OF_A_KIND: 4},
    {Category.STRAIGHT_FLUSH: 10, Category.FOUR_OF_A_KIND: 8, Category.FULL_HOUSE: 2},
    {Category.THREE_OF_A_KIND: 3},
)
CHI_SIZES: Final = (5, 5, 3)


def pack(category: Category, digits: Sequence[int]) -> int:
    value = int(category)
    for index in range(DIGITS):
        value = (value << 4) | (digits[index] if index < len(digits) else 0)
    return value


def category_of(strength: int) -> Category:
    return Category(strength >> CATEGORY_SHIFT)


def rank_strength(ranks: Sequence[int], flush: bool = False) -> int:
    """Strength of 5 or 3 cards from their ranks (any order); ``flush`` when five cards share a suit."""
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    groups = sorted(((count, rank) for rank, count in counts.items()), reverse=True)
    digits = [rank + 1 for _, rank in groups]
    if len(ranks) == 5 and len(counts) == 5:
        high = sorted(counts)
        straight = None
        if tuple(high) == WHEEL:
            straight = WHEEL_DIGIT
        elif high[4] - high[0] == 4:
            straight = BROADWAY_DIGIT if high[4] == ACE else high[4] + 1
        if straight is not None:
            return pack(Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT, (straight,))
        if flush:
            return pack(Category.FLUSH, digits)
    return pack(_BY_SHAPE[tuple(count for count, _ in groups)], digits)


def strength(cards: Sequence[int]) -> int:
    """Strength of a 5-card or 3-card chi given as card numbers (3-card chi know no straight or flush)."""
    flush = len(cards) == 5 and len({suit_of(card) for card in cards}) == 1
    return rank_strength([rank_of(card) for card in cards], flush)


def win_units(chi: int, strength: int) -> int:
    """Units for winning chi ``chi`` (0, 1, 2 for chi 1, 2, 3) with a hand of this strength."""
    return BONUS[chi].get(category_of(strength), 1)
