"""Held penalties (thúi) and instant wins (tới trắng), from the spec's tables and clarifications."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.games.tienlen import InstantWin, TienLenSettings
from services.games.tienlen.cards import ACE, TWO
from services.games.tienlen.hands import instant_win, loser_pays, rank_counts, thui

from .helpers import c

DEFAULTS = TienLenSettings()


@pytest.mark.parametrize(
    ("held", "pays"),
    [
        ("5S", 1),
        ("2S", 1 + 3),  # a 2 is both a card left and a thúi
        ("2C", 1 + 3),
        ("2D", 1 + 6),
        ("2H 2S 9C", 3 + 6 + 3),
        ("3S 3C 4D 4H 5S 5C", 6 + 6),
        ("9S 9C 9D 9H", 4 + 9),
        ("3S 3C 4D 4H 5S 5C 6D 6H", 8 + 12),  # four consecutive pairs, not three
        ("3S 3C 3D 3H 4S 4C 5S 5C 6S 6C", 10 + 9 + 6),  # the spec's example: 3333 44 55 66
        ("3S 3C 4D 4H 5S 5C 6D 6H 7S 7C", 10 + 12),  # five consecutive pairs hold one four consecutive pairs
        ("3S 3C 3D 3H 4S 4C 4D 4H 5S 5C 5D 5H", 12 + 27),  # three fours (27) beat two runs of three pairs (12)
        ("2S 2C 2D 2H", 4 + 3 + 3 + 6 + 6 + 9),  # four 2s: every 2, and a four of a kind
    ],
)
def test_a_loser_pays_cards_left_plus_thui(held: str, pays: int) -> None:
    assert loser_pays(c(held), DEFAULTS) == pays


def test_penalties_follow_the_settings() -> None:
    cheap = TienLenSettings(black_two=1, red_two=2, three_consecutive_pairs=0, four_of_a_kind=4)
    assert thui(c("2S 2H 9S 9C 9D 9H"), cheap) == 1 + 2 + 4


def brute_force_bombs(counts: tuple[int, ...], values: tuple[int, int, int]) -> int:
    """Every subset of candidate bombs that the counts can hold; the best total."""
    three_pairs, four_kind, four_pairs = values
    candidates: list[tuple[dict[int, int], int]] = []
    for rank in range(TWO + 1):
        candidates.append(({rank: 4}, four_kind))
        for length, value in ((3, three_pairs), (4, four_pairs)):
            if rank + length - 1 <= ACE:
                candidates.append(({r: 2 for r in range(rank, rank + length)}, value))
    usable = [
        (need, value) for need, value in candidates if all(counts[rank] >= n for rank, n in need.items())
    ] * 2  # a bomb of pairs may be held twice (four cards of each rank)
    best = 0
    for size in range(len(usable) + 1):
        if size > 4:
            break  # 13 cards hold at most four bombs
        for chosen in combinations(usable, size):
            used = [0] * (TWO + 1)
            for need, _ in chosen:
                for rank, n in need.items():
                    used[rank] += n
            if all(used[rank] <= counts[rank] for rank in range(TWO + 1)):
                best = max(best, sum(value for _, value in chosen))
    return best


@given(st.lists(st.integers(min_value=0, max_value=51), min_size=1, max_size=13, unique=True))
def test_the_best_disjoint_bombs_match_a_brute_force_search(hand: list[int]) -> None:
    counts = rank_counts(hand)
    twos = sum(6 if card & 3 >= 2 else 3 for card in hand if card >> 2 == TWO)
    assert thui(hand, DEFAULTS) == twos + brute_force_bombs(counts, (6, 9, 12))


@pytest.mark.parametrize(
    ("hand", "kind"),
    [
        ("3S 4C 5D 6H 7S 8C 9D TH JS QC KD AH 2S", InstantWin.DRAGON),
        ("3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS AH", InstantWin.DRAGON),
        ("2S 2C 2D 2H 3S 5C 7D 9H JS KC 4D 6H 8S", InstantWin.FOUR_TWOS),
        ("3S 3C 4D 4H 5S 5C 6D 6H 7S 7C 9D JH KS", InstantWin.FIVE_CONSECUTIVE_PAIRS),
        ("3S 3C 5D 5H 7S 7C 9D 9H JS JC KD KH AS", InstantWin.SIX_PAIRS),
        ("3S 3C 5D 5H 7S 7C 9D 9H JS JC 2D 2H AS", InstantWin.SIX_PAIRS),  # a pair of 2s counts
        ("3S 3C 3D 3H 7S 7C 9D 9H JS JC KD KH AS", InstantWin.SIX_PAIRS),  # a four of a kind is two pairs
        ("3S 3C 3D 5H 5S 7C 7D 9H 9S JC JD KH KS", InstantWin.SIX_PAIRS),  # a triple holds one pair
        ("3S 3C 3D 5H 5S 7C 7D 9H 9S JC QD KH AS", None),  # five pairs only
        ("3S 3C 4D 4H 5S 5C 6D 6H 8S 8C 9D JH KS", None),  # four consecutive pairs, then a gap
        ("3S 4C 5D 6H 7S 8C 9D TH JS QC KD 2H 2S", None),  # no ace: no dragon
        # both a dragon and six pairs would be impossible; four 2s with six pairs is named by the stronger
        ("2S 2C 2D 2H 3S 3C 5D 5H 7S 7C 9D 9H JS", InstantWin.FOUR_TWOS),
    ],
)
def test_instant_wins(hand: str, kind: InstantWin | None) -> None:
    assert instant_win(c(hand), DEFAULTS) is kind


def test_instant_wins_can_be_switched_off() -> None:
    only_dragons = TienLenSettings(instant_wins=(InstantWin.DRAGON,))
    assert instant_win(c("2S 2C 2D 2H 3S 5C 7D 9H JS KC 4D 6H 8S"), only_dragons) is None


def test_instant_kinds_are_ordered_strongest_first() -> None:
    strengths = [kind.strength for kind in InstantWin]
    assert strengths == sorted(strengths, reverse=True)
    assert InstantWin.DRAGON.strength > InstantWin.SIX_PAIRS.strength
