"""Every combination a hand can form, and which of them may be played on the trick."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations, product

from services.games.tienlen.cards import ACE, TWO, rank_of
from services.games.tienlen.combos import Combination, Kind

_SETS = ((1, Kind.SINGLE), (2, Kind.PAIR), (3, Kind.TRIPLE), (4, Kind.FOUR_OF_A_KIND))


def _by_rank(hand: Iterable[int]) -> list[list[int]]:
    by_rank: list[list[int]] = [[] for _ in range(TWO + 1)]
    for card in sorted(hand):
        by_rank[rank_of(card)].append(card)
    return by_rank


def _runs(choices: Sequence[Sequence[tuple[int, ...]]], kind: Kind) -> Iterator[Combination]:
    """Runs of three or more consecutive ranks 3–A, one choice of cards per rank."""
    for start in range(ACE + 1):
        picked: list[Sequence[tuple[int, ...]]] = []
        for rank in range(start, ACE + 1):
            if not choices[rank]:
                break
            picked.append(choices[rank])
            if len(picked) >= 3:
                for pick in product(*picked):
                    yield Combination(kind, tuple(card for group in pick for card in group))


def all_combinations(hand: Iterable[int]) -> list[Combination]:
    """Every combination the hand can form (cards of a combination in ascending order)."""
    by_rank = _by_rank(hand)
    found = [
        Combination(kind, group) for cards in by_rank for size, kind in _SETS for group in combinations(cards, size)
    ]
    singles = [[(card,) for card in cards] for cards in by_rank]
    pairs = [list(combinations(cards, 2)) for cards in by_rank]
    found.extend(_runs(singles, Kind.STRAIGHT))
    found.extend(_runs(pairs, Kind.CONSECUTIVE_PAIRS))
    return found


def answers(hand: Iterable[int], top: Combination) -> list[Combination]:
    """The combinations of ``hand`` that beat ``top`` (chops included)."""
    return [candidate for candidate in all_combinations(hand) if candidate.beats(top)]


def out_of_turn_chops(hand: Iterable[int], top: Combination) -> list[Combination]:
    """Four consecutive pairs that chop ``top``: the only play allowed out of turn."""
    pairs = [list(combinations(cards, 2)) for cards in _by_rank(hand)]
    return [
        candidate for candidate in _runs(pairs, Kind.CONSECUTIVE_PAIRS) if candidate.size == 4 and candidate.chops(top)
    ]
