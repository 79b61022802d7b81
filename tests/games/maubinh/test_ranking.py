"""One chi's strength: categories, this game's straight order, no suit tie-breaks, 3-card against 5-card."""

from __future__ import annotations

import pytest

from services.games.maubinh import Category, category_of, strength, win_units

from .helpers import c

# Every straight, highest first, as the spec orders them: T-J-Q-K-A, then A-2-3-4-5, then K-high down to 6-high.
STRAIGHTS_HIGH_FIRST = [
    "T J Q K A",
    "A 2 3 4 5",
    "9 T J Q K",
    "8 9 T J Q",
    "7 8 9 T J",
    "6 7 8 9 T",
    "5 6 7 8 9",
    "4 5 6 7 8",
    "3 4 5 6 7",
    "2 3 4 5 6",
]
MIXED_SUITS = "SHDCS"


def of(ranks: str, suits: str) -> int:
    return strength(c(" ".join(rank + suit for rank, suit in zip(ranks.split(), suits, strict=True))))


@pytest.mark.parametrize("suits", [MIXED_SUITS, "HHHHH"], ids=["straight", "straight_flush"])
def test_straights_rank_broadway_then_the_wheel_then_king_high_down(suits: str) -> None:
    values = [of(ranks, suits) for ranks in STRAIGHTS_HIGH_FIRST]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    expected = Category.STRAIGHT_FLUSH if suits == "HHHHH" else Category.STRAIGHT
    assert {category_of(value) for value in values} == {expected}


def test_the_wheel_beats_a_king_high_straight_and_loses_to_broadway() -> None:
    wheel = strength(c("AS 2H 3D 4C 5S"))
    assert strength(c("KS QH JD TC 9S")) < wheel < strength(c("AS KH QD JC TS"))
    assert strength(c("KD QD JD TD 9D")) < strength(c("AD 2D 3D 4D 5D")) < strength(c("AD KD QD JD TD"))


def test_a_wheel_is_a_straight_not_ace_high() -> None:
    assert category_of(strength(c("AS 2H 3D 4C 5S"))) is Category.STRAIGHT
    assert category_of(strength(c("QS KH AD 2C 3S"))) is Category.HIGH_CARD  # no wrap-around


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("AS KH 9D 7C 3S", "AH KD 9C 7S 3H"),
        ("8S 8H KD 5C 3S", "8D 8C KS 5H 3D"),
        ("AS KS 9S 7S 3S", "AH KH 9H 7H 3H"),
        ("9S TH JD QC KS", "9H TD JC QS KH"),
        ("5S 6S 7S 8S 9S", "5D 6D 7D 8D 9D"),
        ("QS QH 4D", "QD QC 4S"),
        ("AS 7H 2D", "AC 7S 2H"),
    ],
)
def test_the_same_ranks_in_other_suits_tie(first: str, second: str) -> None:
    assert strength(c(first)) == strength(c(second))


@pytest.mark.parametrize(
    ("weaker", "stronger"),
    [
        ("AS KH QD JC 9S", "2S 2H 3D 4C 5S"),  # high card < pair
        ("8S 8H AD KC QS", "3S 3H 2D 2C 4S"),  # pair < two pair
        ("KS KH QD QC AS", "2S 2H 2D 3C 4S"),  # two pair < three of a kind
        ("AS AH AD KC QS", "2S 3H 4D 5C 6S"),  # three of a kind < the lowest straight
        ("AS KH QD JC TS", "2H 3H 4H 5H 7H"),  # straight < flush
        ("AH KH QH JH 9H", "2S 2H 2D 3C 3S"),  # flush < full house
        ("AS AH AD KC KS", "2S 2H 2D 2C 3S"),  # full house < four of a kind
        ("AS AH AD AC KS", "2H 3H 4H 5H 6H"),  # four of a kind < straight flush
        ("9S 9H 9D AC AS", "TS TH TD 2C 2S"),  # full house: the three's rank first
        ("QS QH 5D 5C AS", "QD QC 6S 6H 2D"),  # two pair: the lower pair before the kicker
        ("KS KH 9D 8C 6S", "KD KC 9S 8H 7D"),  # pair: the last kicker decides
        ("AS QH 9D 5C 3S", "AH QD 9C 5S 4H"),  # high card: the fifth card decides
        ("AS KS QS JS 8S", "AH KH QH JH 9H"),  # flush: ranks high to low
    ],
)
def test_categories_then_ranks_high_to_low(weaker: str, stronger: str) -> None:
    assert strength(c(weaker)) < strength(c(stronger))


@pytest.mark.parametrize(
    ("cards", "category"),
    [
        ("AS AH AD", Category.THREE_OF_A_KIND),
        ("7S 7H 2D", Category.PAIR),
        ("2S 3S 4S", Category.HIGH_CARD),  # three in sequence, one suit: nothing special
        ("QS KH AD", Category.HIGH_CARD),
    ],
)
def test_a_three_card_chi_is_a_set_a_pair_or_high_card(cards: str, category: Category) -> None:
    assert category_of(strength(c(cards))) is category


@pytest.mark.parametrize(
    ("five", "three", "five_is_stronger"),
    [
        ("8S 8H KD 5C 4S", "8D 8C AS", False),  # pairs of 8: the 3-card A kicker beats K
        ("8S 8H KD 5C 4S", "8D 8C KS", True),  # same pair and kicker: the missing kickers are lowest
        ("8S 8H KD 5C 4S", "8D 8C QS", True),
        ("AS KH 9D 3C 2S", "AH KD 9S", True),  # high cards A K 9: the 5-card hand has two more kickers
        ("AS KH 8D 3C 2S", "AH KD 9S", False),
        ("2S 3H 4D 5C 6S", "AS AH AD", True),  # any straight beats three of a kind
        ("QS QH QD 3C 2S", "KS KH KD", False),
        ("3S 3H 2D 2C 4S", "AS AH KD", True),  # two pair beats any pair
    ],
)
def test_three_cards_compare_with_five_as_if_two_low_kickers_were_missing(
    five: str, three: str, five_is_stronger: bool
) -> None:
    assert (strength(c(five)) > strength(c(three))) is five_is_stronger
    assert strength(c(five)) != strength(c(three))


@pytest.mark.parametrize(
    ("chi", "cards", "units"),
    [
        (0, "AS KS QS JS TS", 5),
        (1, "2H 3H 4H 5H 6H", 10),
        (0, "9S 9H 9D 9C 2S", 4),
        (1, "9S 9H 9D 9C 2S", 8),
        (1, "9S 9H 9D 2C 2S", 2),
        (0, "9S 9H 9D 2C 2S", 1),  # a full house in chi 1 is no bonus
        (2, "9S 9H 9D", 3),
        (1, "9S 9H 9D 2C 3S", 1),  # three of a kind is a bonus in chi 3 only
        (2, "AS AH KD", 1),
        (0, "AH KH QH JH 9H", 1),
    ],
)
def test_win_units(chi: int, cards: str, units: int) -> None:
    assert win_units(chi, strength(c(cards))) == units
