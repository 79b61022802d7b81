"""What a dealt or left-over hand is worth: instant wins (*tới trắng*) and held penalties (*thúi*).

A loser who played pays 1 unit per card left plus *thúi*: every 2 held (black 3, red 6) and the
disjoint set of held bombs — three consecutive pairs, four of a kind, four consecutive pairs — with
the greatest total (``3333 44 55 66`` is a four of a kind and three consecutive pairs, 9 + 6).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from services.games.tienlen.cards import ACE, TWO, is_red, rank_of
from services.games.tienlen.settings import InstantWin, TienLenSettings


def rank_counts(hand: Iterable[int]) -> tuple[int, ...]:
    counts = [0] * (TWO + 1)
    for card in hand:
        counts[rank_of(card)] += 1
    return tuple(counts)


def _longest_run(counts: tuple[int, ...], at_least: int) -> int:
    """The longest run of consecutive ranks 3–A each held ``at_least`` times."""
    best = run = 0
    for rank in range(ACE + 1):
        run = run + 1 if counts[rank] >= at_least else 0
        best = max(best, run)
    return best


def instant_win(hand: Iterable[int], settings: TienLenSettings) -> InstantWin | None:
    """The strongest enabled instant win this dealt hand holds, or ``None``."""
    counts = rank_counts(hand)
    held = {
        InstantWin.DRAGON: _longest_run(counts, 1) == ACE + 1,
        InstantWin.FOUR_TWOS: counts[TWO] == 4,
        InstantWin.FIVE_CONSECUTIVE_PAIRS: _longest_run(counts, 2) >= 5,
        # a pair of 2s counts; a four of a kind is two pairs, a triple holds one
        InstantWin.SIX_PAIRS: sum(count // 2 for count in counts) >= 6,
    }
    return max(
        (kind for kind in settings.instant_wins if held[kind]),
        key=lambda kind: kind.strength,
        default=None,
    )


def thui(hand: Iterable[int], settings: TienLenSettings) -> int:
    """Penalty units for the 2s and bombs still held (cards left not included)."""
    hand = tuple(hand)
    twos = sum(settings.red_two if is_red(card) else settings.black_two for card in hand if rank_of(card) == TWO)
    values = (settings.three_consecutive_pairs, settings.four_of_a_kind, settings.four_consecutive_pairs)
    return twos + _best_bombs(rank_counts(hand), 0, values)


def loser_pays(hand: Iterable[int], settings: TienLenSettings) -> int:
    """What a loser who played pays the winner: cards left plus *thúi*."""
    hand = tuple(hand)
    return len(hand) + thui(hand, settings)


@cache
def _best_bombs(counts: tuple[int, ...], rank: int, values: tuple[int, int, int]) -> int:
    """The greatest total of disjoint bombs among ranks ≥ ``rank``: at each rank, start none or one and stay."""
    if rank > TWO:
        return 0
    best = _best_bombs(counts, rank + 1, values)
    three_pairs, four_kind, four_pairs = values
    if counts[rank] == 4:
        rest = (*counts[:rank], 0, *counts[rank + 1 :])
        best = max(best, four_kind + _best_bombs(rest, rank + 1, values))
    for length, value in ((3, three_pairs), (4, four_pairs)):
        top = rank + length - 1
        if top <= ACE and all(counts[r] >= 2 for r in range(rank, top + 1)):
            rest = tuple(count - 2 if rank <= r <= top else count for r, count in enumerate(counts))
            best = max(best, value + _best_bombs(rest, rank, values))
    return best
