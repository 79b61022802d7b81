"""Instant wins (*mậu binh thắng trắng*) held by 13 dealt cards, whatever their arrangement.

Readings of the optional kinds' one-line definitions: a four of a kind counts as two pairs (so
``5555 66 77 88 99 TTT`` is five pairs and a three of a kind, and thirteen cards of six pairs and a
single are six pairs even when two of the pairs share a rank); three flushes and three straights
are three groups of 5, 5 and 3 cards that the 13 cards can be split into, where the 3-card group
is three cards of one suit, or three in sequence (A-2-3 through Q-K-A). Straight flushes count as both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from services.games.maubinh.cards import ACE, RANK_COUNT, RED_SUITS, rank_of, suit_of
from services.games.maubinh.settings import INSTANT_WINS, InstantWin, MauBinhSettings

Counts = tuple[int, ...]


def _run(ranks: Sequence[int]) -> Counts:
    return tuple(1 if rank in ranks else 0 for rank in range(RANK_COUNT))


STRAIGHTS_5: Final = (_run((ACE, 0, 1, 2, 3)), *(_run(range(low, low + 5)) for low in range(ACE - 3)))
STRAIGHTS_3: Final = frozenset({_run((ACE, 0, 1)), *(_run(range(low, low + 3)) for low in range(ACE - 1))})
SUIT_SPLITS: Final = frozenset({(13,), (10, 3), (8, 5), (5, 5, 3)})  # suit counts that split into 5 + 5 + 3


def _less(counts: Counts, run: Counts) -> Counts | None:
    left = tuple(have - used for have, used in zip(counts, run, strict=True))
    return left if min(left) >= 0 else None


def _three_straights(counts: Counts) -> bool:
    for index, first in enumerate(STRAIGHTS_5):
        after_first = _less(counts, first)
        if after_first is None:
            continue
        for second in STRAIGHTS_5[index:]:
            after_second = _less(after_first, second)
            if after_second is not None and after_second in STRAIGHTS_3:
                return True
    return False


def _rank_counts(cards: Sequence[int]) -> Counts:
    counts = [0] * RANK_COUNT
    for card in cards:
        counts[rank_of(card)] += 1
    return tuple(counts)


def _suit_counts(cards: Sequence[int]) -> Counts:
    counts = [0] * 4
    for card in cards:
        counts[suit_of(card)] += 1
    return tuple(sorted((count for count in counts if count), reverse=True))


def _red(cards: Sequence[int]) -> int:
    return sum(suit_of(card) in RED_SUITS for card in cards)


_HELD: Final[dict[InstantWin, Callable[[Sequence[int], Counts], bool]]] = {
    InstantWin.RONG_CUON: lambda cards, counts: min(counts) == 1 and len(_suit_counts(cards)) == 1,
    InstantWin.SANH_RONG: lambda cards, counts: min(counts) == 1,
    InstantWin.ONE_COLOUR: lambda cards, counts: abs(2 * _red(cards) - len(cards)) >= 11,  # 12 or 13 of 13
    InstantWin.FIVE_PAIRS_THREE_OF_A_KIND: lambda cards, counts: 1 not in counts and counts.count(3) == 1,
    InstantWin.SIX_PAIRS: lambda cards, counts: sum(count // 2 for count in counts) == 6,
    InstantWin.THREE_FLUSHES: lambda cards, counts: _suit_counts(cards) in SUIT_SPLITS,
    InstantWin.THREE_STRAIGHTS: lambda cards, counts: _three_straights(counts),
}


def instant_win(cards: Sequence[int], settings: MauBinhSettings) -> InstantWin | None:
    """The strongest enabled instant win among these 13 cards, or ``None``."""
    counts = _rank_counts(cards)
    for kind in INSTANT_WINS:
        if settings.enabled(kind) and _HELD[kind](cards, counts):
            return kind
    return None
