"""Auto-arrange: always valid, never beaten by random arrangements nor by a brute-force search over
every split, and its expected units agree with a Monte-Carlo estimate against random hands.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from functools import cache
from itertools import combinations
from math import lcm

import pytest

from services.games.maubinh import Hand, HandError, InstantWin, auto_arrange, expected_units, strength, win_units
from services.games.maubinh.tables import StrengthTable, five_card_table, three_card_table

from .helpers import c

BRUTE_FORCE_HANDS = 50  # about 65 ms each in plain Python
MONTE_CARLO_SAMPLES = 20_000


def random_hands(count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [rng.sample(range(52), 13) for _ in range(count)]


def is_valid(chi1: Sequence[int], chi2: Sequence[int], chi3: Sequence[int]) -> bool:
    return not Hand.of(chi1, chi2, chi3).mis_set


def test_the_arrangement_is_valid_and_uses_the_thirteen_cards() -> None:
    for cards in random_hands(200, 1):
        best = auto_arrange(cards)
        assert sorted(best.chi1 + best.chi2 + best.chi3) == sorted(cards)
        assert (len(best.chi1), len(best.chi2), len(best.chi3)) == (5, 5, 3)
        assert is_valid(best.chi1, best.chi2, best.chi3)
        assert best.expected_units == expected_units(best.chi1, best.chi2, best.chi3)
        assert best.instant is None
        assert auto_arrange(list(reversed(cards))) == best  # the order the cards come in does not matter


def test_no_random_valid_arrangement_does_better() -> None:
    rng = random.Random(2)
    for cards in random_hands(10, 2):
        best = auto_arrange(cards).expected_units
        tried = 0
        while tried < 200:
            shuffled = rng.sample(cards, 13)
            chis = shuffled[:5], shuffled[5:10], shuffled[10:]
            if is_valid(*chis):
                tried += 1
                assert expected_units(*chis) <= best


# --- the reference: every split in plain Python, on the same probability tables ------------------


def chi_values(table: StrengthTable, chi: int, scale: int) -> dict[int, int]:
    """Strength → (hands beaten × units if won − hands losing to it), over a common denominator."""
    per_hand = scale // table.total
    return {
        int(value): (int(below) * win_units(chi, int(value)) - int(above)) * per_hand
        for value, below, above in zip(table.strengths, table.below, table.above, strict=True)
    }


@cache
def reference_values() -> tuple[int, dict[int, int], dict[int, int], dict[int, int]]:
    five, three = five_card_table(), three_card_table()
    scale = lcm(five.total, three.total)
    return scale, chi_values(five, 0, scale), chi_values(five, 1, scale), chi_values(three, 2, scale)


def brute_force(cards: Sequence[int]) -> tuple[int, int, int]:
    """(objective × scale, chi 1 strength, chi 2 strength) of the best valid split, found the slow way."""
    _, first, second, third = reference_values()
    positions = range(13)
    fives = {chi: strength([cards[i] for i in chi]) for chi in combinations(positions, 5)}
    threes = {chi: strength([cards[i] for i in chi]) for chi in combinations(positions, 3)}
    best = (-(2**62), 0, 0)
    for chi1 in combinations(positions, 5):
        s1 = fives[chi1]
        rest = [i for i in positions if i not in chi1]
        for chi2 in combinations(rest, 5):
            s2 = fives[chi2]
            if s2 > s1:
                continue
            s3 = threes[tuple(i for i in rest if i not in chi2)]
            if s3 <= s2:
                best = max(best, (first[s1] + second[s2] + third[s3], s1, s2))
    assert best[0] > -(2**62), "some split is valid"
    return best


def test_matches_a_brute_force_search_over_every_split() -> None:
    scale = reference_values()[0]
    for cards in random_hands(BRUTE_FORCE_HANDS, 3):
        best = auto_arrange(cards)
        objective, chi1, chi2 = brute_force(cards)
        assert (best.expected_units, strength(best.chi1), strength(best.chi2)) == (objective / scale, chi1, chi2)


# --- Monte Carlo ----------------------------------------------------------------------------------


def sampled_units(chis: Sequence[Sequence[int]], rng: random.Random) -> list[int]:
    """Units won against one random hand of each chi's size (from a full deck, as the objective says)."""
    mine = [strength(chi) for chi in chis]
    outcomes = []
    for _ in range(MONTE_CARLO_SAMPLES):
        total = 0
        for chi, value in enumerate(mine):
            theirs = strength(rng.sample(range(52), len(chis[chi])))
            total += win_units(chi, value) if value > theirs else -1 if value < theirs else 0
        outcomes.append(total)
    return outcomes


@pytest.mark.parametrize(
    "cards",
    [
        "AS KD 8C 8H 2S 5D 7H JC JS 3C 9D TD QH",
        "9S 9H 9D 9C 2S KH KD KC 3H 3D QS QH 7C",  # four of a kind and a full house: bonuses
        "AH AD AC 2S 3S 4S 5S 6S 8H 8D 8S TC JD",  # a straight flush, a set of aces
        "2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS 2D",  # nothing much
    ],
)
def test_expected_units_agree_with_a_monte_carlo_estimate(cards: str) -> None:
    best = auto_arrange(c(cards))
    outcomes = sampled_units((best.chi1, best.chi2, best.chi3), random.Random(cards))
    mean = statistics.fmean(outcomes)
    standard_error = statistics.stdev(outcomes) / len(outcomes) ** 0.5
    assert standard_error < 0.06  # tight enough to catch a chi valued wrongly
    assert abs(mean - best.expected_units) < 4 * standard_error  # fixed seed: this does not flake


def test_an_instant_win_is_reported_with_a_valid_arrangement() -> None:
    for cards, kind in (
        ("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", InstantWin.RONG_CUON),
        ("2S 3H 4S 5S 6S 7S 8S 9S TS JS QS KS AS", InstantWin.SANH_RONG),
    ):
        best = auto_arrange(c(cards))
        assert best.instant is kind and is_valid(best.chi1, best.chi2, best.chi3)


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S", "hand to arrange: expected 13 cards, got 12"),
        ("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 3S", "hand to arrange: 3S is listed twice"),
    ],
)
def test_bad_hands_are_refused(cards: str, message: str) -> None:
    with pytest.raises(HandError, match=message):
        auto_arrange(c(cards))


def test_numbers_that_are_no_card_are_refused() -> None:
    with pytest.raises(HandError, match="hand to arrange: -1 is not a card number 0–51"):
        auto_arrange([-1, *range(12)])
    with pytest.raises(HandError, match="chi3: expected 3 cards, got 2"):
        expected_units(range(5), range(5, 10), range(10, 12))
