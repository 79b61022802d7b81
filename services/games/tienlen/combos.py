"""Combinations, which beats which, and which plays are chops.

- single (*rác*), pair (*đôi*), triple (*sám*), four of a kind (*tứ quý*);
- straight (*sảnh*): three or more consecutive ranks, one card each, never a 2;
- consecutive pairs (*đôi thông*): three or more pairs of consecutive ranks, never a 2.

A combination beats one of the same kind and size whose highest card is lower. A **chop** (*chặt*)
beats a 2 or a bomb outside that rule (and a bigger bomb of the same shape is a chop too):

| chopper | chops |
|---|---|
| three consecutive pairs | a single 2, smaller three consecutive pairs |
| four of a kind | a single 2, a pair of 2s, three consecutive pairs, a smaller four of a kind |
| four consecutive pairs | a single 2, a pair of 2s, three consecutive pairs, a four of a kind,     |
|                        | smaller four consecutive pairs                                         |
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from services.games.tienlen.cards import ACE, TWO, describe, is_red, rank_of
from services.games.tienlen.errors import CombinationError
from services.games.tienlen.settings import TienLenSettings


class Kind(StrEnum):
    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    FOUR_OF_A_KIND = "four_of_a_kind"
    STRAIGHT = "straight"
    CONSECUTIVE_PAIRS = "consecutive_pairs"


_SETS = {1: Kind.SINGLE, 2: Kind.PAIR, 3: Kind.TRIPLE, 4: Kind.FOUR_OF_A_KIND}


@dataclass(frozen=True, slots=True)
class Combination:
    """A playable group of cards, held as strengths in ascending order."""

    kind: Kind
    cards: tuple[int, ...]

    @property
    def high(self) -> int:
        return self.cards[-1]

    @property
    def size(self) -> int:
        """Ranks spanned by a straight, pairs in consecutive pairs, 1 for the sets."""
        if self.kind is Kind.STRAIGHT:
            return len(self.cards)
        if self.kind is Kind.CONSECUTIVE_PAIRS:
            return len(self.cards) // 2
        return 1

    def is_bomb(self, kind: Kind, size: int = 1) -> bool:
        return self.kind is kind and self.size == size

    @property
    def is_single_two(self) -> bool:
        return self.kind is Kind.SINGLE and rank_of(self.high) == TWO

    @property
    def is_pair_of_twos(self) -> bool:
        return self.kind is Kind.PAIR and rank_of(self.high) == TWO

    def chops(self, other: Combination) -> bool:
        """Whether playing ``self`` on ``other`` is a chop (it then also beats it)."""
        higher = self.high > other.high
        if self.is_bomb(Kind.CONSECUTIVE_PAIRS, 3):
            return other.is_single_two or (other.is_bomb(Kind.CONSECUTIVE_PAIRS, 3) and higher)
        if self.kind is Kind.FOUR_OF_A_KIND:
            return (
                other.is_single_two
                or other.is_pair_of_twos
                or other.is_bomb(Kind.CONSECUTIVE_PAIRS, 3)
                or (other.kind is Kind.FOUR_OF_A_KIND and higher)
            )
        if self.is_bomb(Kind.CONSECUTIVE_PAIRS, 4):
            return (
                other.is_single_two
                or other.is_pair_of_twos
                or other.is_bomb(Kind.CONSECUTIVE_PAIRS, 3)
                or other.kind is Kind.FOUR_OF_A_KIND
                or (other.is_bomb(Kind.CONSECUTIVE_PAIRS, 4) and higher)
            )
        return False

    def beats(self, other: Combination) -> bool:
        if self.chops(other):
            return True
        return self.kind is other.kind and len(self.cards) == len(other.cards) and self.high > other.high

    def chop_value(self, settings: TienLenSettings) -> int:
        """What chopping this combination costs, in units: the penalty for holding the same cards at the end."""
        if self.is_single_two or self.is_pair_of_twos:
            return sum(settings.red_two if is_red(card) else settings.black_two for card in self.cards)
        if self.is_bomb(Kind.CONSECUTIVE_PAIRS, 3):
            return settings.three_consecutive_pairs
        if self.kind is Kind.FOUR_OF_A_KIND:
            return settings.four_of_a_kind
        if self.is_bomb(Kind.CONSECUTIVE_PAIRS, 4):
            return settings.four_consecutive_pairs
        raise CombinationError(f"{self} cannot be chopped")

    def codes(self) -> list[str]:
        return [describe([card]) for card in self.cards]

    def __str__(self) -> str:
        name = self.kind.value.replace("_", " ")
        if self.kind in (Kind.STRAIGHT, Kind.CONSECUTIVE_PAIRS):
            name = f"{name} of {self.size}"
        return f"{describe(self.cards)} ({name})"


def classify(cards: Iterable[int]) -> Combination | None:
    """The combination these cards form, or ``None``."""
    ordered = tuple(sorted(cards))
    count = len(ordered)
    if count == 0 or len(set(ordered)) != count:
        return None
    ranks = [rank_of(card) for card in ordered]
    if ranks[0] == ranks[-1]:
        return Combination(_SETS[count], ordered) if count <= 4 else None
    if ranks[-1] > ACE or count < 3:
        return None
    if ranks == list(range(ranks[0], ranks[0] + count)):
        return Combination(Kind.STRAIGHT, ordered)
    if count % 2 == 0 and count >= 6 and ranks == [ranks[0] + index // 2 for index in range(count)]:
        return Combination(Kind.CONSECUTIVE_PAIRS, ordered)
    return None


def combination(cards: Iterable[int]) -> Combination:
    """Like ``classify``, but cards that form nothing raise a ``CombinationError`` naming them."""
    cards = tuple(cards)
    found = classify(cards)
    if found is None:
        raise CombinationError(f"{describe(cards) or 'no cards'} is not a combination")
    return found
