"""Exhaustive strength tables: every 5-card and 3-card hand of the 52-card deck, by class.

A *class* is one distinct strength (7,462 of them for five cards, 455 for three), numbered weakest
first, so comparing classes compares hands. A hand's class comes from a lookup keyed by its ranks
read as a base-13 number (cards sorted ascending, hence ranks too); five cards of one suit use a
second lookup. Only the 6,175 + 1,287 rank patterns (455 for three cards) go through the scalar
``rank_strength``; the 2,598,960 hands go through numpy, so the tables come from the same
evaluator as the rest of the engine and take a fraction of a second to build.

Each table is built on first use, once per process (about 0.2 s), and never written to disk: at
that cost a cache file, with the locking and corruption checks it would need, is not worth having.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement
from math import comb
from typing import Final

import numpy as np
import numpy.typing as npt

from services.games.maubinh.cards import RANK_COUNT
from services.games.maubinh.ranking import rank_strength

DECK: Final = 52
Ints = npt.NDArray[np.int64]
Cards = npt.NDArray[np.uint8]  # card numbers or positions, one hand per row: bytes keep the 2.6M hands at 13 MB


def colex_combinations(n: int, k: int) -> Cards:
    """Every ``k``-subset of ``range(n)`` as ascending rows, in colexicographic order.

    In that order the subsets whose largest item is below ``top`` are exactly the first
    ``comb(top, k)`` rows, so each size is the previous one's prefixes with a new top appended.
    """
    rows = np.arange(n, dtype=np.uint8)[:, None]
    for size in range(2, k + 1):
        grown = np.empty((comb(n, size), size), dtype=np.uint8)
        start = 0
        for top in range(size - 1, n):
            count = comb(top, size - 1)
            grown[start : start + count, :-1] = rows[:count]
            grown[start : start + count, -1] = top
            start += count
        rows = grown
    return rows


@dataclass(frozen=True)
class StrengthTable:
    """Classes of ``size``-card hands, with how many hands of the deck fall in each."""

    size: int
    strengths: Ints  # class → packed strength (see ``ranking``), ascending
    plain: Ints  # rank key → class, for hands that are not five cards of one suit (-1: no such hand)
    suited: Ints  # rank key → class, for five cards of one suit
    counts: Ints  # class → hands of the full deck in it
    below: Ints  # class → hands strictly weaker
    above: Ints  # class → hands strictly stronger

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def classes(self, sorted_cards: Cards) -> Ints:
        """Classes of many hands, one per row of card numbers sorted ascending."""
        columns = np.ascontiguousarray(sorted_cards.T)  # a column at a time runs at memory speed
        key = (columns[0] >> 2).astype(np.int32)
        for column in columns[1:]:
            key *= RANK_COUNT
            key += column >> 2
        found: Ints = self.plain[key]  # fancy indexing copies: the table is not written
        if self.size == 5:
            suits = columns & 3
            one_suit = np.logical_and.reduce(suits[1:] == suits[0], axis=0)
            found[one_suit] = self.suited[key[one_suit]]
        return found


def _rank_key(ranks: tuple[int, ...]) -> int:
    key = 0
    for rank in ranks:
        key = key * RANK_COUNT + rank
    return key


def _build(size: int) -> StrengthTable:
    # sorted rank patterns a hand can have: every multiset but five of one rank
    patterns = [ranks for ranks in combinations_with_replacement(range(RANK_COUNT), size) if ranks.count(ranks[0]) < 5]
    plain_strength = {ranks: rank_strength(ranks) for ranks in patterns}
    suited_strength = {
        ranks: rank_strength(ranks, flush=True) for ranks in patterns if size == 5 and len(set(ranks)) == size
    }
    strengths = np.array(sorted(set(plain_strength.values()) | set(suited_strength.values())), dtype=np.int64)
    class_of = {int(value): index for index, value in enumerate(strengths)}
    plain = np.full(RANK_COUNT**size, -1, dtype=np.int64)
    suited = np.full(RANK_COUNT**size, -1, dtype=np.int64)
    for ranks, value in plain_strength.items():
        plain[_rank_key(ranks)] = class_of[value]
    for ranks, value in suited_strength.items():
        suited[_rank_key(ranks)] = class_of[value]
    empty = np.zeros(0, dtype=np.int64)
    partial = StrengthTable(size, strengths, plain, suited, empty, empty, empty)
    counts = np.bincount(partial.classes(colex_combinations(DECK, size)), minlength=len(strengths)).astype(np.int64)
    below = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    above = (counts.sum() - below - counts).astype(np.int64)
    return StrengthTable(size, strengths, plain, suited, counts, below, above)


@cache
def five_card_table() -> StrengthTable:
    return _build(5)


@cache
def three_card_table() -> StrengthTable:
    return _build(3)
