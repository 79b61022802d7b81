"""Tiến Lên's card order, with each card written as its strength 0–51.

Ranks run ``3 4 5 6 7 8 9 T J Q K A 2`` (the 2, *heo*, is highest) and suits ♠ < ♣ < ♦ < ♥, so a
card's strength is ``rank_index * 4 + suit_index``: comparing strengths compares rank, then suit.
The engine works on strengths; ``Card`` values and codes appear only at its edges.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from services.cards import Card, CardError

RANK_ORDER: Final = "3456789TJQKA2"
SUIT_ORDER: Final = "SCDH"
TWO: Final = 12  # the rank index of the 2
ACE: Final = 11  # the highest rank a straight or run of pairs may reach
THREE_OF_SPADES: Final = 0

CARDS: Final[tuple[Card, ...]] = tuple(Card(rank, suit) for rank in RANK_ORDER for suit in SUIT_ORDER)
_STRENGTH: Final[dict[Card, int]] = {card: index for index, card in enumerate(CARDS)}


def strength(card: Card) -> int:
    return _STRENGTH[card]


def rank_of(card: int) -> int:
    return card >> 2


def is_red(card: int) -> bool:
    return card & 3 >= 2


def code(card: int) -> str:
    return CARDS[card].code()


def codes(cards: Iterable[int]) -> list[str]:
    return [CARDS[card].code() for card in sorted(cards)]


def describe(cards: Iterable[int]) -> str:
    return " ".join(codes(cards))


def parse(card_codes: Iterable[str]) -> tuple[int, ...]:
    """Strengths of card codes (``"3S"``, ``"2h"``…); the error names the first bad code and its place."""
    parsed = []
    for index, text in enumerate(card_codes):
        try:
            parsed.append(_STRENGTH[Card.from_code(text)])
        except CardError as error:
            raise CardError(f"card #{index + 1}: {error}") from None
    return tuple(parsed)
