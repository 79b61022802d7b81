"""Pok Deng hand values: points, the six hand ranks, multipliers ("deng") and comparison.

Terms, defined once: *Pok* is a two-card 8 or 9; *deng* is a hand's payout multiplier;
*Tong* (Sám Cô) is three of a kind; *Ba lá tây* is three face cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Final

from services.cards import Card

# High to low the spec reads A K Q J T 9 … 2 and ♠ > ♥ > ♦ > ♣; stored low to high as indexes.
RANK_ORDER: Final = "23456789TJQKA"
SUIT_ORDER: Final = "CDHS"
FACE_RANKS: Final = frozenset("JQK")
POINTS: Final = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}


class HandRank(IntEnum):
    """1 is best."""

    POK = 1
    TONG = 2
    STRAIGHT_FLUSH = 3
    STRAIGHT = 4
    THREE_FACE = 5
    POINTS = 6


class Outcome(StrEnum):
    """Who wins the comparison of the banker against one seat."""

    SEAT = "seat"
    BANKER = "banker"
    TIE = "tie"


def card_strength(card: Card) -> tuple[int, int]:
    """Pok Deng order of single cards: by rank (A high), then suit (♠ high)."""
    return RANK_ORDER.index(card.rank), SUIT_ORDER.index(card.suit)


def points(cards: Sequence[Card]) -> int:
    return sum(POINTS[card.rank] for card in cards) % 10


@dataclass(frozen=True, slots=True)
class HandValue:
    """A classified hand of two or three cards."""

    cards: tuple[Card, ...]
    points: int
    rank: HandRank
    multiplier: int

    @property
    def is_pok(self) -> bool:
        return self.rank is HandRank.POK

    @property
    def high_card(self) -> Card:
        return max(self.cards, key=card_strength)


def _is_straight(cards: Sequence[Card]) -> bool:
    # Ace high only: Q-K-A counts, K-A-2 and A-2-3 do not, which index arithmetic gives for free.
    order = sorted(RANK_ORDER.index(card.rank) for card in cards)
    return order[1] == order[0] + 1 and order[2] == order[1] + 1


def classify(cards: Sequence[Card]) -> HandValue:
    """Classify a complete two- or three-card hand."""
    if len(cards) not in (2, 3):
        raise ValueError(f"a Pok Deng hand has 2 or 3 cards, got {len(cards)}: {' '.join(map(str, cards))}")
    if len(set(cards)) != len(cards):
        raise ValueError(f"a hand cannot hold the same card twice: {' '.join(map(str, cards))}")
    total = points(cards)
    suited = len({card.suit for card in cards}) == 1
    ranks = {card.rank for card in cards}
    rank: HandRank
    if len(cards) == 2:
        multiplier = 2 if suited or len(ranks) == 1 else 1
        rank = HandRank.POK if total >= 8 else HandRank.POINTS
    elif len(ranks) == 1:
        rank, multiplier = HandRank.TONG, 5
    elif _is_straight(cards):
        rank, multiplier = (HandRank.STRAIGHT_FLUSH, 5) if suited else (HandRank.STRAIGHT, 3)
    elif ranks <= FACE_RANKS:
        rank, multiplier = HandRank.THREE_FACE, 3
    else:
        rank, multiplier = HandRank.POINTS, 3 if suited else 1
    return HandValue(tuple(cards), total, rank, multiplier)


def compare(banker: HandValue, seat: HandValue) -> Outcome:
    """The banker against one seat, per the spec's comparison rules."""
    if banker.rank != seat.rank:
        return Outcome.BANKER if banker.rank < seat.rank else Outcome.SEAT
    if banker.rank in (HandRank.POK, HandRank.POINTS):
        banker_key, seat_key = (banker.points, 0), (seat.points, 0)
    else:
        banker_key, seat_key = card_strength(banker.high_card), card_strength(seat.high_card)
    if banker_key == seat_key:
        return Outcome.TIE
    return Outcome.BANKER if banker_key > seat_key else Outcome.SEAT
