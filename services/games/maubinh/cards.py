"""Mậu Binh's card order, with each card written as a number 0–51.

Ranks run ``2 3 4 5 6 7 8 9 T J Q K A`` and a card is ``rank_index * 4 + suit_index``, so sorting
card numbers sorts by rank. Suits never rank in this game; the suit index only tells flushes apart.
The engine works on card numbers; ``Card`` values and codes appear only at its edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from services.cards import SUITS, Card, CardError
from services.games.maubinh.errors import HandError

RANK_ORDER: Final = "23456789TJQKA"
RANK_COUNT: Final = 13
ACE: Final = 12
RED_SUITS: Final = frozenset(SUITS.index(suit) for suit in "HD")

CARDS: Final[tuple[Card, ...]] = tuple(Card(rank, suit) for rank in RANK_ORDER for suit in SUITS)
_NUMBER: Final[dict[Card, int]] = {card: index for index, card in enumerate(CARDS)}


def rank_of(card: int) -> int:
    return card >> 2


def suit_of(card: int) -> int:
    return card & 3


def codes(cards: Iterable[int]) -> list[str]:
    """Codes highest rank first, the order a chi is shown in."""
    return [CARDS[card].code() for card in sorted(cards, reverse=True)]


def parse(card_codes: Sequence[str], where: str = "") -> tuple[int, ...]:
    """Card numbers of codes (``"TD"``, ``"as"``…); the error names ``where``, the bad code and its place."""
    prefix = f"{where}: " if where else ""
    if not isinstance(card_codes, list | tuple):
        raise HandError(f"{prefix}expected a list of card codes, got {card_codes!r}")
    parsed = []
    for index, text in enumerate(card_codes):
        try:
            parsed.append(_NUMBER[Card.from_code(text)])
        except CardError as error:
            raise HandError(f"{prefix}card #{index + 1}: {error}") from None
    return tuple(parsed)


def distinct(cards: Iterable[int], where: str) -> tuple[int, ...]:
    """The cards, refusing a number that is no card or a card listed twice (named with ``where``)."""
    cards = tuple(cards)
    seen: set[int] = set()
    for card in cards:
        if type(card) is not int or not 0 <= card < len(CARDS):
            raise HandError(f"{where}: {card!r} is not a card number 0–{len(CARDS) - 1}")
        if card in seen:
            raise HandError(f"{where}: {CARDS[card].code()} is listed twice")
        seen.add(card)
    return cards
