"""Combinations, beating and chopping, from the spec's tables."""

from __future__ import annotations

from itertools import combinations

import pytest

from services.games.tienlen import Kind, TienLenSettings, classify
from services.games.tienlen.cards import CARDS, strength
from services.games.tienlen.combos import Combination, combination

from .helpers import c


def kind_of(text: str) -> Kind | None:
    found = classify(c(text))
    return found.kind if found else None


@pytest.mark.parametrize(
    ("cards", "kind"),
    [
        ("7H", Kind.SINGLE),
        ("2S", Kind.SINGLE),
        ("9S 9H", Kind.PAIR),
        ("2D 2C", Kind.PAIR),
        ("QS QC QH", Kind.TRIPLE),
        ("5S 5C 5D 5H", Kind.FOUR_OF_A_KIND),
        ("2S 2C 2D 2H", Kind.FOUR_OF_A_KIND),
        ("3S 4C 5D", Kind.STRAIGHT),
        ("QS KC AD", Kind.STRAIGHT),
        ("3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", Kind.STRAIGHT),
        ("3S 3C 4D 4H 5S 5C", Kind.CONSECUTIVE_PAIRS),
        ("QS QC KD KH AS AC", Kind.CONSECUTIVE_PAIRS),
        ("7S 7C 8D 8H 9S 9C TD TH JS JC", Kind.CONSECUTIVE_PAIRS),
    ],
)
def test_every_kind_is_recognised(cards: str, kind: Kind) -> None:
    assert kind_of(cards) is kind


@pytest.mark.parametrize(
    "cards",
    [
        "KS AC 2D",  # a straight never contains a 2
        "AS 2C 3D",  # nor wraps around
        "3S 4C",  # two ranks are no straight
        "3S 4C 6D",  # a gap
        "9S 9H TS",  # a pair and a card
        "3S 3C 4D 4H",  # two consecutive pairs are not a combination
        "KS KC AD AH 2S 2C",  # consecutive pairs never contain a 2
        "3S 3C 4D 4H 6S 6C",  # a gap between pairs
        "3S 3C 3D 4H 4S 4C",  # two triples
        "3S 3C 4D 4H 5S",  # a pair short
    ],
)
def test_what_is_not_a_combination(cards: str) -> None:
    assert classify(c(cards)) is None


def count_kinds(size: int) -> dict[Kind | None, int]:
    counts: dict[Kind | None, int] = {}
    for cards in combinations(range(52), size):
        found = classify(cards)
        key = found.kind if found else None
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_every_two_and_three_card_set_is_classified_exhaustively() -> None:
    """Golden counts over all 1,326 pairs and 22,100 triples of the deck."""
    assert count_kinds(2) == {Kind.PAIR: 13 * 6, None: 1326 - 78}
    # 3-card straights start at 3…Q (10 starts), any suits: 10 × 4³
    assert count_kinds(3) == {Kind.TRIPLE: 13 * 4, Kind.STRAIGHT: 640, None: 22100 - 52 - 640}


def beats(mine: str, theirs: str) -> bool:
    return combination(c(mine)).beats(combination(c(theirs)))


def chops(mine: str, theirs: str) -> bool:
    return combination(c(mine)).chops(combination(c(theirs)))


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        ("4S", "3H", True),
        ("3H", "3D", True),  # suit breaks a rank tie: ♠ < ♣ < ♦ < ♥
        ("3D", "3H", False),
        ("2S", "AH", True),  # the 2 is the highest rank
        ("2H", "2S", True),  # a higher 2 on a 2 is an ordinary play
        ("7S 7H", "7C 7D", True),  # pairs compare their highest card
        ("7C 7D", "7S 7H", False),
        ("8S 8C", "7S 7H", True),
        ("5S 6S 7H", "4H 5H 6D", True),
        ("5S 6S 7C", "5D 6D 7S", True),  # the highest card decides: 7♣ > 7♠
        ("5S 6S 7H 8H", "4H 5H 6D", False),  # same kind, other size
        ("QS QC QD", "JS JC JH", True),
        ("9S 9C", "3S 4S 5S", False),
        ("3S 3C 4D 4H 5S 5C", "9H", False),  # three consecutive pairs chop only 2s
    ],
)
def test_beating_is_same_kind_and_size_with_a_higher_top_card(mine: str, theirs: str, expected: bool) -> None:
    assert beats(mine, theirs) is expected


THREE_PAIRS = "3S 3C 4D 4H 5S 5C"
HIGHER_THREE_PAIRS = "4S 4C 5D 5H 6S 6C"
FOUR_KIND = "9S 9C 9D 9H"
HIGHER_FOUR_KIND = "TS TC TD TH"
FOUR_PAIRS = "3D 3H 4S 4C 5D 5H 6D 6H"
HIGHER_FOUR_PAIRS = "4D 4H 5S 5C 6S 6C 7D 7H"


@pytest.mark.parametrize(
    ("chopper", "chopped", "expected"),
    [
        (THREE_PAIRS, "2S", True),
        (THREE_PAIRS, "2S 2C", False),
        (HIGHER_THREE_PAIRS, THREE_PAIRS, True),
        (THREE_PAIRS, HIGHER_THREE_PAIRS, False),
        (THREE_PAIRS, FOUR_KIND, False),
        (FOUR_KIND, "2H", True),
        (FOUR_KIND, "2D 2H", True),
        (FOUR_KIND, HIGHER_THREE_PAIRS, True),
        (HIGHER_FOUR_KIND, FOUR_KIND, True),
        (FOUR_KIND, HIGHER_FOUR_KIND, False),
        (FOUR_KIND, "2S 2C 2H", False),
        (FOUR_KIND, FOUR_PAIRS, False),
        (FOUR_PAIRS, "2C", True),
        (FOUR_PAIRS, "2C 2H", True),
        (FOUR_PAIRS, THREE_PAIRS, True),
        (FOUR_PAIRS, HIGHER_FOUR_KIND, True),
        (HIGHER_FOUR_PAIRS, FOUR_PAIRS, True),
        (FOUR_PAIRS, HIGHER_FOUR_PAIRS, False),
        ("2H", "2S", False),  # ordinary play, not a chop
        ("9S 9C 9D", "2S", False),
        ("7S 7C 8D 8H 9S 9C TD TH JS JC", "2S", False),  # five consecutive pairs are no chopper
    ],
)
def test_the_chop_table(chopper: str, chopped: str, expected: bool) -> None:
    assert chops(chopper, chopped) is expected
    if expected:
        assert beats(chopper, chopped)


@pytest.mark.parametrize(
    ("chopped", "units"),
    [
        ("2S", 3),
        ("2C", 3),
        ("2D", 6),
        ("2H", 6),
        ("2S 2H", 9),
        ("2D 2H", 12),
        (THREE_PAIRS, 6),
        (FOUR_KIND, 9),
        (FOUR_PAIRS, 12),
    ],
)
def test_a_chop_costs_what_holding_the_same_cards_costs(chopped: str, units: int) -> None:
    assert combination(c(chopped)).chop_value(TienLenSettings()) == units


def test_the_card_order_is_rank_then_suit() -> None:
    order = [card.code() for card in sorted(CARDS, key=strength)]
    assert order[:5] == ["3S", "3C", "3D", "3H", "4S"]
    assert order[-4:] == ["2S", "2C", "2D", "2H"]


def test_combinations_describe_themselves() -> None:
    assert str(combination(c("5H 3S 4S"))) == "3S 4S 5H (straight of 3)"
    assert Combination(Kind.PAIR, c("9S 9H")).codes() == ["9S", "9H"]
