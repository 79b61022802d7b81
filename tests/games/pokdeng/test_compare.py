"""Worked examples for the spec's "Hand ranks" and "Comparison" sections (docs/rules/pokdeng.md).

Hands are written as space-separated card codes (rank + suit, ``S H D C`` = ♠ ♥ ♦ ♣).
Every comparison is checked both ways round: swapping banker and seat must swap the winner.
"""

from __future__ import annotations

import pytest

from services.cards import Card
from services.games.pokdeng.hands import HandRank, HandValue, Outcome, classify, compare


def hand(codes: str) -> HandValue:
    return classify([Card.from_code(code) for code in codes.split()])


SWAPPED = {Outcome.BANKER: Outcome.SEAT, Outcome.SEAT: Outcome.BANKER, Outcome.TIE: Outcome.TIE}


def check(banker: str, seat: str, expected: Outcome) -> None:
    assert compare(hand(banker), hand(seat)) is expected
    assert compare(hand(seat), hand(banker)) is SWAPPED[expected]


# --- Hand ranks, points and multipliers (deng) -----------------------------------------------------


@pytest.mark.parametrize(
    ("codes", "rank", "points", "multiplier"),
    [
        # Rank 1, Pok: exactly two cards totalling 8 or 9; deng 2 if suited or a pair.
        pytest.param("9S TD", HandRank.POK, 9, 1, id="pok9-offsuit"),
        pytest.param("4H 5H", HandRank.POK, 9, 2, id="pok9-suited"),
        pytest.param("AC 7D", HandRank.POK, 8, 1, id="pok8-offsuit"),
        pytest.param("KC 8C", HandRank.POK, 8, 2, id="pok8-suited"),
        pytest.param("4S 4D", HandRank.POK, 8, 2, id="pok8-pair-of-fours"),
        pytest.param("9S 9H", HandRank.POK, 8, 2, id="pok8-pair-of-nines-18"),
        # Rank 6, two cards.
        pytest.param("2S 3H", HandRank.POINTS, 5, 1, id="two-card-offsuit"),
        pytest.param("2H 3H", HandRank.POINTS, 5, 2, id="two-card-suited"),
        pytest.param("5S 5C", HandRank.POINTS, 0, 2, id="two-card-pair"),
        pytest.param("KS QH", HandRank.POINTS, 0, 1, id="two-card-zero"),
        pytest.param("AS 6D", HandRank.POINTS, 7, 1, id="two-card-seven"),
        # Rank 2, Tong: deng 5.
        pytest.param("7S 7H 7D", HandRank.TONG, 1, 5, id="tong-sevens"),
        pytest.param("AS AH AC", HandRank.TONG, 3, 5, id="tong-aces"),
        pytest.param("KS KH KD", HandRank.TONG, 0, 5, id="tong-kings-not-three-face"),
        # Rank 3, straight flush: deng 5.
        pytest.param("QH KH AH", HandRank.STRAIGHT_FLUSH, 1, 5, id="straight-flush-QKA"),
        pytest.param("2C 3C 4C", HandRank.STRAIGHT_FLUSH, 9, 5, id="straight-flush-234"),
        pytest.param("JS QS KS", HandRank.STRAIGHT_FLUSH, 0, 5, id="straight-flush-JQK-not-three-face"),
        # Rank 4, straight: deng 3.
        pytest.param("QS KH AD", HandRank.STRAIGHT, 1, 3, id="straight-QKA"),
        pytest.param("JD QC KH", HandRank.STRAIGHT, 0, 3, id="straight-JQK-not-three-face"),
        pytest.param("TS JH QD", HandRank.STRAIGHT, 0, 3, id="straight-TJQ"),
        pytest.param("9C 7D 8S", HandRank.STRAIGHT, 4, 3, id="straight-789-any-order"),
        # Rank 5, three face cards: deng 3.
        pytest.param("KH KC JD", HandRank.THREE_FACE, 0, 3, id="three-face-KKJ"),
        pytest.param("QS QH KD", HandRank.THREE_FACE, 0, 3, id="three-face-QQK"),
        pytest.param("JS JH QD", HandRank.THREE_FACE, 0, 3, id="three-face-JJQ"),
        # Rank 6, three cards: deng 3 if all one suit, else 1.
        pytest.param("2D 5D 9D", HandRank.POINTS, 6, 3, id="three-card-flush"),
        pytest.param("2C 7C KC", HandRank.POINTS, 9, 3, id="three-card-flush-9-not-pok"),
        pytest.param("4S 5H TD", HandRank.POINTS, 9, 1, id="three-card-9-not-pok"),
        pytest.param("2S 3H 3D", HandRank.POINTS, 8, 1, id="three-card-8-not-pok"),
        pytest.param("5S 5H 9D", HandRank.POINTS, 9, 1, id="three-card-pair-plus-one"),
        pytest.param("TS JH KD", HandRank.POINTS, 0, 1, id="ten-is-not-a-face-card"),
        pytest.param("KS AH 2D", HandRank.POINTS, 3, 1, id="KA2-is-not-a-straight"),
        pytest.param("KS AS 2S", HandRank.POINTS, 3, 3, id="KA2-suited-is-only-a-flush"),
        pytest.param("AS 2H 3D", HandRank.POINTS, 6, 1, id="A23-is-not-a-straight"),
        pytest.param("AC 2C 3C", HandRank.POINTS, 6, 3, id="A23-suited-is-only-a-flush"),
    ],
)
def test_rank_points_and_multiplier(codes: str, rank: HandRank, points: int, multiplier: int) -> None:
    value = hand(codes)
    assert (value.rank, value.points, value.multiplier) == (rank, points, multiplier)
    assert value.is_pok is (rank is HandRank.POK)
    assert [card.code() for card in value.cards] == codes.split()


@pytest.mark.parametrize(
    ("codes", "high"),
    [
        pytest.param("KH KC JD", "KH", id="spec-example-KH-KC-J"),
        pytest.param("KC KH JD", "KH", id="spec-example-other-order"),
        pytest.param("QS KH AD", "AD", id="ace-is-high"),
        pytest.param("2S 3S 4S", "4S", id="four-high"),
        pytest.param("7C 7S 7H", "7S", id="spade-highest-suit"),
        pytest.param("JD JH QC", "QC", id="rank-before-suit"),
        pytest.param("TD JD QD", "QD", id="queen-over-jack-and-ten"),
    ],
)
def test_highest_card(codes: str, high: str) -> None:
    assert hand(codes).high_card == Card.from_code(high)


# --- Comparison: different ranks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("banker", "seat", "expected"),
    [
        pytest.param("8S KD", "2S 2H 2D", Outcome.BANKER, id="pok8-beats-tong"),
        pytest.param("AS AH AD", "9C TC", Outcome.SEAT, id="pok9-beats-tong-aces"),
        pytest.param("3S 3H 3D", "QH KH AH", Outcome.BANKER, id="tong-beats-straight-flush"),
        pytest.param("2C 3C 4C", "QS KH AD", Outcome.BANKER, id="straight-flush-beats-straight"),
        pytest.param("2S 3H 4D", "KH KC JD", Outcome.BANKER, id="straight-beats-three-face"),
        pytest.param("KH KC JD", "KS QD JC", Outcome.SEAT, id="straight-KQJ-beats-three-face-KKJ"),
        pytest.param("JS JH QD", "2C 7C KC", Outcome.BANKER, id="three-face-beats-flush-9"),
        pytest.param("QS QH KD", "AS 6D", Outcome.BANKER, id="three-face-beats-two-card-points"),
        pytest.param("4S 5H TD", "3C 5D", Outcome.SEAT, id="pok8-beats-three-card-9"),
        pytest.param("2C 7C KC", "AC 7D", Outcome.SEAT, id="pok8-beats-three-card-flush-9"),
        pytest.param("4H 5H", "2S 3S 4S", Outcome.BANKER, id="pok9-beats-straight-flush"),
        pytest.param("KS QH", "TS JH KD", Outcome.TIE, id="zero-vs-zero-not-rank-2-5"),
    ],
)
def test_different_ranks_better_rank_wins(banker: str, seat: str, expected: Outcome) -> None:
    if expected is not Outcome.TIE:
        assert hand(banker).rank != hand(seat).rank
    check(banker, seat, expected)


# --- Comparison: both Pok, or both rank 6 ----------------------------------------------------------


@pytest.mark.parametrize(
    ("banker", "seat", "expected"),
    [
        pytest.param("9S TD", "4S 4D", Outcome.BANKER, id="pok9-beats-pok8"),
        pytest.param("KC 8C", "AH 8D", Outcome.SEAT, id="pok9-beats-suited-pok8"),
        pytest.param("9S TD", "4H 5H", Outcome.TIE, id="pok9-tie-despite-deng"),
        pytest.param("4S 4D", "9S 9H", Outcome.TIE, id="pok8-pairs-tie"),
        pytest.param("AC 7D", "KC 8C", Outcome.TIE, id="pok8-tie"),
    ],
)
def test_both_pok_points_decide(banker: str, seat: str, expected: Outcome) -> None:
    assert hand(banker).rank is hand(seat).rank is HandRank.POK
    check(banker, seat, expected)


@pytest.mark.parametrize(
    ("banker", "seat", "expected"),
    [
        pytest.param("AS 6D", "2S 3H", Outcome.BANKER, id="7-beats-5"),
        pytest.param("2S 3H", "AS 6D", Outcome.SEAT, id="5-loses-to-7"),
        pytest.param("4S 5H TD", "AS 6D", Outcome.BANKER, id="three-card-9-beats-two-card-7"),
        pytest.param("2H 3H", "AD 2D 2C", Outcome.TIE, id="two-card-5-ties-three-card-5"),
        pytest.param("2D 5D 9D", "AC 2H 3S", Outcome.TIE, id="flush-6-ties-plain-6"),
        pytest.param("KS QH", "5S 5C", Outcome.TIE, id="zero-ties-zero"),
        pytest.param("AH 2H 3H", "KS AH 2D", Outcome.BANKER, id="points-not-high-card"),
        pytest.param("2S 3H 3D", "KC AD 8S", Outcome.SEAT, id="three-card-8-loses-to-three-card-9"),
    ],
)
def test_both_rank_6_points_decide(banker: str, seat: str, expected: Outcome) -> None:
    assert hand(banker).rank is hand(seat).rank is HandRank.POINTS
    check(banker, seat, expected)


# --- Comparison: same rank in 2-5, highest card then its suit --------------------------------------


@pytest.mark.parametrize(
    ("banker", "seat", "expected"),
    [
        # Tong: the higher rank (A high).
        pytest.param("AS AH AC", "KS KH KD", Outcome.BANKER, id="tong-aces-beat-kings"),
        pytest.param("2S 2H 2D", "3C 3D 3H", Outcome.SEAT, id="tong-threes-beat-twos"),
        # Straight flush: Q-K-A is the best, points are not considered.
        pytest.param("JS QS KS", "QH KH AH", Outcome.SEAT, id="sf-QKA-beats-JQK"),
        pytest.param("2C 3C 4C", "3D 4D 5D", Outcome.SEAT, id="sf-345-beats-234-though-fewer-points"),
        pytest.param("9H TH JH", "9S TS JS", Outcome.SEAT, id="sf-same-ranks-spade-beats-heart"),
        # Straight.
        pytest.param("QS KH AD", "JS QD KC", Outcome.BANKER, id="straight-QKA-beats-JQK"),
        pytest.param("QS KH AD", "2S 3H 4D", Outcome.BANKER, id="straight-QKA-1pt-beats-234-9pt"),
        pytest.param("7S 8H 9D", "8C 9S TH", Outcome.SEAT, id="straight-T-high-beats-9-high"),
        pytest.param("QS KH AD", "QH KD AC", Outcome.BANKER, id="straight-ace-diamond-beats-ace-club"),
        # Three face cards: only the highest card counts (the spec's example K♥ K♣ J).
        # (K Q J is a straight, rank 4, not three face cards: KS QD JC would beat KH KC JD on rank.)
        pytest.param("KH KC JD", "KS JS JC", Outcome.SEAT, id="three-face-KS-beats-KH-despite-two-kings"),
        pytest.param("KH KC JD", "KD JH JC", Outcome.BANKER, id="three-face-KH-beats-KD"),
        pytest.param("QS QH JD", "KC JS JH", Outcome.SEAT, id="three-face-KC-beats-QS"),
        pytest.param("KH KC JD", "QS QH KD", Outcome.BANKER, id="three-face-KH-beats-KD-pair-irrelevant"),
        # Identical highest card cannot happen in one deck; the spec calls it a tie.
        pytest.param("QS KH AD", "QH KD AD", Outcome.TIE, id="identical-highest-card-ties"),
    ],
)
def test_same_rank_2_to_5_highest_card_decides(banker: str, seat: str, expected: Outcome) -> None:
    banker_rank = hand(banker).rank
    assert banker_rank is hand(seat).rank
    assert HandRank.TONG <= banker_rank <= HandRank.THREE_FACE
    check(banker, seat, expected)


SUITS_HIGH_TO_LOW = "SHDC"


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        pytest.param(SUITS_HIGH_TO_LOW[i], SUITS_HIGH_TO_LOW[j], id=f"{SUITS_HIGH_TO_LOW[i]}>{SUITS_HIGH_TO_LOW[j]}")
        for i in range(4)
        for j in range(i + 1, 4)
    ],
)
def test_suit_order_breaks_same_rank_highest_card(higher: str, lower: str) -> None:
    # Q-K-A straights whose aces differ only in suit; the other cards are chosen against the rule
    # (the losing hand has the higher-suited Q and K).
    winner = f"Q{lower} K{lower} A{higher}"
    loser = f"Q{higher} K{higher} A{lower}"
    assert hand(winner).rank is hand(loser).rank is HandRank.STRAIGHT
    check(winner, loser, Outcome.BANKER)


# --- Input checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "codes",
    [
        pytest.param([], id="no-cards"),
        pytest.param(["9S"], id="one-card"),
        pytest.param(["2S", "3S", "4S", "5S"], id="four-cards"),
        pytest.param(["KS", "KH", "KD", "KC"], id="four-of-a-kind"),
        pytest.param(["9S", "9S"], id="duplicate-in-two"),
        pytest.param(["QH", "KH", "QH"], id="duplicate-in-three"),
        pytest.param(["7D", "7D", "7D"], id="same-card-three-times"),
    ],
)
def test_classify_refuses_bad_hands(codes: list[str]) -> None:
    with pytest.raises(ValueError):
        classify([Card.from_code(code) for code in codes])
