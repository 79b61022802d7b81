"""Golden counts over every Pok Deng hand one 52-card deck can make.

All 1,326 two-card and 22,100 three-card hands are classified by the code under test and counted
per (rank, multiplier) and per (rank, multiplier, points). The expected numbers are derived here,
from the spec alone (docs/rules/pokdeng.md, "Cards" and "Hand ranks"), twice over:

* closed forms, with the hand-computed totals written out as literals so the file reads as a spec;
* a naive rank-level enumeration: every multiset of ranks, weighted by how many suit assignments
  it has and how many of those are one suit.

Nothing here is imported from ``services.games.pokdeng.hands`` except what is under test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import combinations, combinations_with_replacement
from math import comb

import pytest

from services.cards import FULL_DECK, Card
from services.games.pokdeng.hands import HandRank, classify

pytestmark = pytest.mark.xdist_group("pokdeng-hand-counts")  # its session fixtures once, on one worker

# --- The spec, restated for this test -------------------------------------------------------------

SPEC_RANKS = "A23456789TJQK"
SPEC_SUITS = "SHDC"
SUITS_PER_RANK = 4
SPEC_POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}
FACES = frozenset("JQK")
# Card order low to high, A high only. A straight is three consecutive ranks in this order,
# so there are 11 of them, 2-3-4 up to Q-K-A; K-A-2 and A-2-3 are not straights.
ACE_HIGH_ORDER = "23456789TJQKA"
STRAIGHTS = frozenset(frozenset(ACE_HIGH_ORDER[i : i + 3]) for i in range(len(ACE_HIGH_ORDER) - 2))

Key = tuple[HandRank, int]  # (rank, multiplier)
DetailedKey = tuple[HandRank, int, int]  # (rank, multiplier, points)


def spec_points(ranks: Iterable[str]) -> int:
    return sum(SPEC_POINTS[rank] for rank in ranks) % 10


def by_rank_and_multiplier(detailed: Counter[DetailedKey]) -> Counter[Key]:
    out: Counter[Key] = Counter()
    for (hand_rank, multiplier, _points), count in detailed.items():
        out[(hand_rank, multiplier)] += count
    return out


# --- The code under test, run over the whole deck ---------------------------------------------------


def classify_all(size: int) -> Counter[DetailedKey]:
    counts: Counter[DetailedKey] = Counter()
    for hand in combinations(FULL_DECK, size):
        value = classify(hand)
        counts[(value.rank, value.multiplier, value.points)] += 1
    return counts


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def two_card_counts() -> Counter[DetailedKey]:
    return classify_all(2)


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def three_card_counts() -> Counter[DetailedKey]:
    return classify_all(3)


# --- Independent derivation: rank-level enumeration with suit multiplicities ------------------------


def expected_two_card_by_ranks() -> Counter[DetailedKey]:
    """Two cards: a pair of one rank has C(4,2)=6 suit combos, all "a pair" (deng 2);
    two different ranks have 4*4=16 suit combos, 4 of them one suit (deng 2), 12 not (deng 1).
    Pok is exactly two cards totalling 8 or 9."""
    counts: Counter[DetailedKey] = Counter()
    for first, second in combinations_with_replacement(SPEC_RANKS, 2):
        total = spec_points((first, second))
        hand_rank = HandRank.POK if total in (8, 9) else HandRank.POINTS
        if first == second:
            counts[(hand_rank, 2, total)] += comb(SUITS_PER_RANK, 2)
        else:
            suited = SUITS_PER_RANK
            counts[(hand_rank, 2, total)] += suited
            counts[(hand_rank, 1, total)] += SUITS_PER_RANK**2 - suited
    return counts


def expected_three_card_by_ranks() -> Counter[DetailedKey]:
    """Three cards, by multiset of ranks:
    * three of one rank: C(4,3)=4 combos, Tong (deng 5);
    * a pair plus another rank: C(4,2)*4=24 combos, never one suit; three face cards if all of J/Q/K
      (a pair cannot be a straight), else points (deng 1);
    * three different ranks: 4**3=64 combos, 4 of them one suit. A straight is a straight flush
      (deng 5) when suited, else a straight (deng 3). Otherwise three face cards (deng 3), or
      points: deng 3 when all one suit, else 1."""
    counts: Counter[DetailedKey] = Counter()
    for ranks in combinations_with_replacement(SPEC_RANKS, 3):
        distinct = frozenset(ranks)
        total = spec_points(ranks)
        if len(distinct) == 1:
            counts[(HandRank.TONG, 5, total)] += comb(SUITS_PER_RANK, 3)
        elif len(distinct) == 2:
            combos = comb(SUITS_PER_RANK, 2) * SUITS_PER_RANK
            if distinct <= FACES:
                counts[(HandRank.THREE_FACE, 3, total)] += combos
            else:
                counts[(HandRank.POINTS, 1, total)] += combos
        else:
            suited = SUITS_PER_RANK
            unsuited = SUITS_PER_RANK**3 - suited
            if distinct in STRAIGHTS:
                counts[(HandRank.STRAIGHT_FLUSH, 5, total)] += suited
                counts[(HandRank.STRAIGHT, 3, total)] += unsuited
            elif distinct <= FACES:
                counts[(HandRank.THREE_FACE, 3, total)] += suited + unsuited
            else:
                counts[(HandRank.POINTS, 3, total)] += suited
                counts[(HandRank.POINTS, 1, total)] += unsuited
    return counts


# --- Independent derivation: closed forms -----------------------------------------------------------


def expected_three_card_closed_form() -> Counter[Key]:
    tong = 13 * comb(4, 3)  # one of 13 ranks, three of its four suits
    straight_flush = 11 * 4  # 11 ace-high-only sequences (2-3-4 … Q-K-A), one suit each
    straight = 11 * 4**3 - straight_flush  # any suits, minus the one-suit ones
    # Three of the 12 J/Q/K cards, minus Tong J/Q/K (3 * 4) and minus J-Q-K straights (4**3, flushes included).
    three_face = comb(12, 3) - 3 * comb(4, 3) - 4**3
    flush_points = 4 * comb(13, 3) - straight_flush  # one suit, three ranks, not a straight flush
    rest = comb(52, 3) - tong - straight_flush - straight - three_face - flush_points
    return Counter(
        {
            (HandRank.TONG, 5): tong,
            (HandRank.STRAIGHT_FLUSH, 5): straight_flush,
            (HandRank.STRAIGHT, 3): straight,
            (HandRank.THREE_FACE, 3): three_face,
            (HandRank.POINTS, 3): flush_points,
            (HandRank.POINTS, 1): rest,
        }
    )


def test_deck_is_the_spec_deck() -> None:
    assert len(FULL_DECK) == 52
    assert len(set(FULL_DECK)) == 52
    assert {card.rank + card.suit for card in FULL_DECK} == {r + s for r in SPEC_RANKS for s in SPEC_SUITS}


def test_three_card_closed_forms_are_the_hand_computed_numbers() -> None:
    # Worked by hand: C(52,3) = 22100; 13*4 = 52; 11*4 = 44; 11*64 - 44 = 660;
    # C(12,3) - 12 - 64 = 220 - 76 = 144; 4*C(13,3) - 44 = 4*286 - 44 = 1100;
    # 22100 - 52 - 44 - 660 - 144 - 1100 = 20100.
    assert expected_three_card_closed_form() == Counter(
        {
            (HandRank.TONG, 5): 52,
            (HandRank.STRAIGHT_FLUSH, 5): 44,
            (HandRank.STRAIGHT, 3): 660,
            (HandRank.THREE_FACE, 3): 144,
            (HandRank.POINTS, 3): 1100,
            (HandRank.POINTS, 1): 20100,
        }
    )


def test_three_card_rank_enumeration_agrees_with_closed_forms() -> None:
    enumerated = expected_three_card_by_ranks()
    assert sum(enumerated.values()) == comb(52, 3) == 22100
    assert by_rank_and_multiplier(enumerated) == expected_three_card_closed_form()


def test_three_card_counts_per_rank_and_multiplier(three_card_counts: Counter[DetailedKey]) -> None:
    assert sum(three_card_counts.values()) == 22100
    assert dict(by_rank_and_multiplier(three_card_counts)) == dict(expected_three_card_closed_form())


def test_three_card_counts_per_rank_multiplier_and_points(three_card_counts: Counter[DetailedKey]) -> None:
    assert dict(three_card_counts) == dict(expected_three_card_by_ranks())


def test_three_card_hand_is_never_pok(three_card_counts: Counter[DetailedKey]) -> None:
    pok = sum(count for (hand_rank, _m, _p), count in three_card_counts.items() if hand_rank is HandRank.POK)
    assert pok == 0
    # ... although plenty of three-card hands total 8 or 9 points.
    eight_or_nine = sum(count for (_r, _m, total), count in three_card_counts.items() if total in (8, 9))
    assert eight_or_nine == sum(
        count for (_r, _m, total), count in expected_three_card_by_ranks().items() if total in (8, 9)
    )
    assert eight_or_nine > 0


def test_straights_are_ace_high_only() -> None:
    assert len(STRAIGHTS) == 11
    assert frozenset("QKA") in STRAIGHTS
    assert frozenset("KA2") not in STRAIGHTS
    assert frozenset("A23") not in STRAIGHTS
    for codes in (("KS", "AH", "2D"), ("AS", "2H", "3D"), ("KS", "AS", "2S"), ("AC", "2C", "3C")):
        assert classify([Card.from_code(code) for code in codes]).rank is HandRank.POINTS, codes
    assert classify([Card.from_code(code) for code in ("QS", "KH", "AD")]).rank is HandRank.STRAIGHT
    assert classify([Card.from_code(code) for code in ("QS", "KS", "AS")]).rank is HandRank.STRAIGHT_FLUSH


# --- Two cards ---------------------------------------------------------------------------------------


def test_two_card_rank_enumeration_is_the_hand_computed_numbers() -> None:
    # Pok 8: point pairs {0,8} (4 zero ranks x one 8), {1,7}, {2,6}, {3,5} -> 7 rank pairs x 16 = 112
    #        combos, 28 of them suited; plus pairs 4-4 and 9-9 (18 = 8 mod 10): 2 x 6 = 12, deng 2.
    #        -> deng 2: 28 + 12 = 40, deng 1: 84, total 124.
    # Pok 9: {0,9} (4 rank pairs), {1,8}, {2,7}, {3,6}, {4,5} -> 8 rank pairs x 16 = 128 combos,
    #        32 suited; no pair totals 9 (2r is even) -> deng 2: 32, deng 1: 96.
    # All two-card hands: C(52,2) = 1326; suited or a pair: 4*C(13,2) + 13*6 = 312 + 78 = 390, the rest 936.
    # Points (rank 6): deng 2: 390 - 72 = 318; deng 1: 936 - 180 = 756.
    enumerated = expected_two_card_by_ranks()
    assert sum(enumerated.values()) == comb(52, 2) == 1326
    pok = Counter({(m, p): n for (r, m, p), n in enumerated.items() if r is HandRank.POK})
    assert pok == Counter({(2, 8): 40, (1, 8): 84, (2, 9): 32, (1, 9): 96})
    assert by_rank_and_multiplier(enumerated) == Counter(
        {
            (HandRank.POK, 2): 72,
            (HandRank.POK, 1): 180,
            (HandRank.POINTS, 2): 318,
            (HandRank.POINTS, 1): 756,
        }
    )


def naive_two_card_pok_counts() -> Counter[tuple[int, int]]:
    """Card-level, straight from the spec: (points, deng) of every Pok, looping over suit codes."""
    cards = [(rank, suit) for rank in SPEC_RANKS for suit in SPEC_SUITS]
    counts: Counter[tuple[int, int]] = Counter()
    for (rank_1, suit_1), (rank_2, suit_2) in combinations(cards, 2):
        total = spec_points((rank_1, rank_2))
        if total in (8, 9):
            counts[(total, 2 if suit_1 == suit_2 or rank_1 == rank_2 else 1)] += 1
    return counts


def test_two_card_pok_counts(two_card_counts: Counter[DetailedKey]) -> None:
    pok = Counter({(p, m): n for (r, m, p), n in two_card_counts.items() if r is HandRank.POK})
    expected = naive_two_card_pok_counts()
    assert expected == Counter({(8, 2): 40, (8, 1): 84, (9, 2): 32, (9, 1): 96})
    assert dict(pok) == dict(expected)
    assert sum(pok.values()) == 252


def test_two_card_counts_per_rank_and_multiplier(two_card_counts: Counter[DetailedKey]) -> None:
    assert sum(two_card_counts.values()) == 1326
    assert dict(by_rank_and_multiplier(two_card_counts)) == {
        (HandRank.POK, 2): 72,
        (HandRank.POK, 1): 180,
        (HandRank.POINTS, 2): 318,
        (HandRank.POINTS, 1): 756,
    }


def test_two_card_counts_per_rank_multiplier_and_points(two_card_counts: Counter[DetailedKey]) -> None:
    assert dict(two_card_counts) == dict(expected_two_card_by_ranks())


def test_two_card_hands_only_ever_pok_or_points(two_card_counts: Counter[DetailedKey]) -> None:
    assert {hand_rank for hand_rank, _m, _p in two_card_counts} == {HandRank.POK, HandRank.POINTS}
