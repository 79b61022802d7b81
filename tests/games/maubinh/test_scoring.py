"""Worked examples of the showdown: chi by chi, every bonus, scoops, binh lủng, instant wins, leavers.

Every table goes through ``score_table``, which refuses a card held twice: the hands are real deals.
"""

from __future__ import annotations

import pytest

from services.games.maubinh import (
    LEFT,
    Hand,
    HandError,
    InstantWin,
    MauBinhSettings,
    Money,
    PairResult,
    Seat,
    TableError,
    TableResult,
    money,
    score_table,
)

from .helpers import DEFAULT, c, hand

SIX_PAIRS = MauBinhSettings(optional_instant_wins=(InstantWin.SIX_PAIRS,))

# Three hands of one deck: a wins chi 1 from b, loses chi 2, ties chi 3; a scoops c; b beats c 2–1.
A = hand("AS AH 7D 5D 3S", "9S 9H 7H 4S 3H", "8S 8H 2D")  # no clubs: it meets RONG_CUON
B = hand("KS KH JC 6H 4D", "TS TH 7S 5H 3D", "8C 8D 2C")
C = hand("KC KD QS JH 9D", "6S 6D 5S 4C 2H", "AD QH 3C")
# The spec's example: four of a kind, full house and a pair against binh lủng, (4 + 2 + 1) × 3.
STRONG = hand("AS AH AD AC 2S", "KS KH KD 3C 3D", "QS QH 4C")
MIS_SET = hand("JS JH 5D 6C 7S", "TS 9H 8D 2C 4D", "QD QC 5C")  # chi 2 high card under chi 3's pair
ALSO_MIS_SET = hand("2H 3D 4H 6S 8H", "AH KS 9S 7C 5H", "8C 9D 9C")  # chi 1 high card under chi 2's
SANH_RONG = hand("2S 3H 4D 5S 6H", "7D 8S 9H TD JS", "QH KD AS")  # no clubs
SANH_RONG_MIS_SET = hand("2C 3D 4C 5C 7C", "6C 8D 9C TC JC", "QC KC AC")  # J-high chi 2 under A-high chi 3
RONG_CUON = hand("2C 3C 4C 5C 6C", "7C 8C 9C TC JC", "QC KC AC")


def play(settings: MauBinhSettings = DEFAULT, **seats: Seat) -> TableResult:
    return score_table(seats, settings)


def pair(a: Seat, b: Seat, settings: MauBinhSettings = DEFAULT) -> PairResult:
    result = play(settings, a=a, b=b)
    assert result.totals == {"a": result.pairs[0].units, "b": -result.pairs[0].units}
    return result.pairs[0]


def test_each_chi_is_worth_one_unit_and_a_tie_nothing() -> None:
    assert pair(A, B) == PairResult("a", "b", (1, -1, 0), 0, False, None)


def test_winning_all_three_chi_is_a_scoop_paid_times_three() -> None:
    assert pair(A, C) == PairResult("a", "b", (1, 1, 1), 9, True, None)
    assert pair(C, A) == PairResult("a", "b", (-1, -1, -1), -9, True, None)
    assert pair(A, C, MauBinhSettings(scoop_multiplier=2)).units == 6


def test_scoops_are_counted_per_pair_of_players() -> None:
    result = play(a=A, b=B, c=C)
    assert [(p.a, p.b, p.chi, p.units, p.scoop) for p in result.pairs] == [
        ("a", "b", (1, -1, 0), 0, False),
        ("a", "c", (1, 1, 1), 9, True),
        ("b", "c", (-1, 1, 1), 1, False),  # c's K-K-Q beats b's K-K-J in chi 1
    ]
    assert result.totals == {"a": 9, "b": 1, "c": -10}


# Each winner takes the named chi with a bonus hand and loses the other two at 1 unit each,
# unless the opponent's winning chi carries a bonus of its own (noted).
BONUSES = [
    pytest.param(
        "6S 7H 8D 9C TS", "2S 3H 4D 5C 6H", "QS QH QD",
        "AS KS 9S 7S 4S", "3C 4H 5D 6C 7C", "KH KD 2C", (-1, -1, 1), 3 - 1 - 1, id="chi3_three_of_a_kind_3",
    ),
    pytest.param(
        "KS KH KD 2S 2H", "9S 9H 9D 3S 3H", "4S 5H 7D",
        "AS AH AD 5C 5D", "QC JC 8C 6C 4C", "8S 8H 6D", (-1, 1, -1), 2 - 1 - 1, id="chi2_full_house_2",
    ),
    pytest.param(
        "9S 9H 9D 9C 2S", "KS QH 8D 6C 4S", "2H 3D 5C",
        "AS AH AD KH KD", "7S 7H 3S 4D 6D", "JS TD 8C", (1, -1, -1), 4 - 1 - 1, id="chi1_four_of_a_kind_4",
    ),
    pytest.param(
        "KS KH KD KC 2S", "7S 7H 7D 7C 3S", "4S 5H 8D",
        "AS AH AD AC 3H", "QS JH 9D 6C 2H", "TS 9H 6D", (-1, 1, -1), 8 - 4 - 1, id="chi2_four_of_a_kind_8",
    ),  # the opponent wins chi 1 with four aces: 4
    pytest.param(
        "5D 6D 7D 8D 9D", "AS KH QD JC 2S", "3H 4C 2C",
        "AH AC KS KC QH", "3S 3D 7S 8H TC", "JH 9S 6C", (1, -1, -1), 5 - 1 - 1, id="chi1_straight_flush_5",
    ),
    pytest.param(
        "5S 6S 7S 8S 9S", "2H 3H 4H 5H 6H", "2C 3C 4D",
        "TD JD QD KD AD", "AS AH 9C 8C 7C", "KS QS JC", (-1, 1, -1), 10 - 5 - 1, id="chi2_straight_flush_10",
    ),  # the opponent wins chi 1 with a straight flush: 5
    pytest.param(
        "9S 9H 9D 2C 2S", "KS QH 8D 6C 4S", "2H 3D 5C",
        "AH JH 7H 5H 3H", "7S 7D 3S 4D 6D", "JS TD 8C", (1, -1, -1), 1 - 1 - 1, id="chi1_full_house_no_bonus",
    ),
    pytest.param(
        "8S 9H TD JC QS", "5S 5H 5D 2C 3S", "2H 4D 6C",
        "AH KH 8H 7H 3H", "KS KD QH QD AC", "7S 7D 4C", (-1, 1, -1), 1 - 1 - 1, id="chi2_three_of_a_kind_no_bonus",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("w1", "w2", "w3", "o1", "o2", "o3", "chi", "units"), BONUSES)
def test_a_chi_won_with_a_bonus_hand_pays_its_bonus(
    w1: str, w2: str, w3: str, o1: str, o2: str, o3: str, chi: tuple[int, int, int], units: int
) -> None:
    winner, opponent = hand(w1, w2, w3), hand(o1, o2, o3)
    assert not winner.mis_set and not opponent.mis_set
    assert pair(winner, opponent) == PairResult("a", "b", chi, units, False, None)
    assert pair(opponent, winner) == PairResult("a", "b", (-chi[0], -chi[1], -chi[2]), -units, False, None)


def test_a_scoop_with_bonuses_multiplies_their_sum() -> None:
    # straight flush in chi 1, four of a kind in chi 2, three of a kind in chi 3: (5 + 8 + 3) × 3
    best = hand("TH JH QH KH AH", "2S 2H 2D 2C 3S", "9S 9D 9C")
    assert pair(best, hand("KS KD 8C 7C 6S", "QS QD 5H 4H 3D", "JS JD 4S")).units == 48


def test_binh_lung_loses_every_chi_at_the_opponents_units_times_the_scoop_multiplier() -> None:
    assert MIS_SET.mis_set and not STRONG.mis_set
    # the binh lủng hand's chi 3 (Q-Q-5) would beat Q-Q-4: it loses anyway
    assert pair(STRONG, MIS_SET) == PairResult("a", "b", (1, 1, 1), (4 + 2 + 1) * 3, True, None)
    assert pair(MIS_SET, STRONG) == PairResult("a", "b", (-1, -1, -1), -21, True, None)
    assert pair(STRONG, MIS_SET, MauBinhSettings(scoop_multiplier=2)).units == 14


def test_two_binh_lung_hands_tie() -> None:
    assert ALSO_MIS_SET.mis_set
    assert pair(MIS_SET, ALSO_MIS_SET) == PairResult("a", "b", (0, 0, 0), 0, False, None)


def test_an_instant_win_is_paid_at_once_and_not_compared_chi_by_chi() -> None:
    assert SANH_RONG.instant_win(DEFAULT) is InstantWin.SANH_RONG
    assert RONG_CUON.instant_win(DEFAULT) is InstantWin.RONG_CUON
    assert pair(SANH_RONG, ALSO_MIS_SET) == PairResult("a", "b", None, 13, False, InstantWin.SANH_RONG)  # not × 3
    assert pair(A, RONG_CUON) == PairResult("a", "b", None, -26, False, InstantWin.RONG_CUON)


def test_the_instant_winners_arrangement_does_not_matter() -> None:
    assert SANH_RONG_MIS_SET.mis_set and SANH_RONG_MIS_SET.instant_win(DEFAULT) is InstantWin.SANH_RONG
    assert pair(SANH_RONG_MIS_SET, A).units == 13


def test_the_stronger_instant_win_takes_its_units_from_the_weaker_and_equal_ones_tie() -> None:
    assert pair(SANH_RONG, RONG_CUON) == PairResult("a", "b", None, -26, False, InstantWin.RONG_CUON)
    assert pair(SANH_RONG, SANH_RONG_MIS_SET) == PairResult("a", "b", None, 0, False, InstantWin.SANH_RONG)
    other_suit = hand("2D 3D 4D 5D 6D", "7D 8D 9D TD JD", "QD KD AD")
    assert pair(RONG_CUON, other_suit) == PairResult("a", "b", None, 0, False, InstantWin.RONG_CUON)


def test_optional_instant_wins_count_only_when_the_room_turns_them_on() -> None:
    six_pairs = ("6S 6H 5S 5H 2S", "4S 4H 3S 3H 2H", "7S 7H 8D")
    opponent = hand("AS AH KH QD JC", "TS TD KD 9C 8C", "9S 9H 8S")
    assert pair(hand(*six_pairs), opponent, SIX_PAIRS) == PairResult("a", "b", None, 6, False, InstantWin.SIX_PAIRS)
    assert pair(hand(*six_pairs), opponent) == PairResult("a", "b", (1, 1, -1), 1, False, None)
    sanh_rong = hand("2D 3D 4C 5D 6C", "7D 8C 9C TC JS", "QS KS AC")
    assert pair(hand(*six_pairs), sanh_rong, SIX_PAIRS).units == -13


def test_a_leaver_loses_every_chi_at_the_opponents_units_without_the_multiplier() -> None:
    quads = hand("9S 9H 9D 9C 2S", "KS QH 8D 6C 4S", "2H 3D 5C")  # four of a kind in chi 1: 4 + 1 + 1
    assert pair(LEFT, quads) == PairResult("a", "b", (-1, -1, -1), -6, False, None)
    assert pair(STRONG, LEFT) == PairResult("a", "b", (1, 1, 1), 7, False, None)


def test_a_leaver_pays_a_binh_lung_player_one_unit_per_chi() -> None:
    assert pair(LEFT, MIS_SET) == PairResult("a", "b", (-1, -1, -1), -3, False, None)


def test_two_leavers_tie_and_an_instant_win_beats_a_leaver_at_its_units() -> None:
    assert pair(LEFT, LEFT) == PairResult("a", "b", (0, 0, 0), 0, False, None)
    assert pair(LEFT, SANH_RONG) == PairResult("a", "b", None, -13, False, InstantWin.SANH_RONG)


def test_a_whole_table_with_every_kind_of_pair() -> None:
    full_houses = hand("KS KH KD 7S 7D", "JS JD JC 3S 3D", "QS QH 4S")  # 1 + 2 + 1 units for all three chi
    mis_set = hand("AH AD 5D 6C 8S", "TH 9H 8H 2C 4C", "QC 5H 5S")
    sanh_rong = hand("2S 3H 4D 5C 6S", "7H 8D 9C TS JH", "QD KC AS")
    result = play(a=full_houses, b=mis_set, c=LEFT, d=sanh_rong)
    units = {(p.a, p.b): p.units for p in result.pairs}
    assert units == {("a", "b"): 12, ("a", "c"): 4, ("a", "d"): -13, ("b", "c"): 3, ("b", "d"): -13, ("c", "d"): -13}
    assert result.totals == {"a": 3, "b": -22, "c": -20, "d": 39}


@pytest.mark.parametrize("players", [1, 5])
def test_a_table_needs_two_to_four_players(players: int) -> None:
    seats: dict[str, Seat] = {f"p{index}": LEFT for index in range(players)}
    with pytest.raises(TableError, match=f"a table needs 2–4 players, got {players}"):
        score_table(seats, DEFAULT)


def test_a_card_held_by_two_players_is_refused() -> None:
    with pytest.raises(TableError, match=r"AS is dealt twice \(a and b\)"):
        play(a=A, b=STRONG)


def test_money_takes_commission_from_net_winners_only_rounded_down() -> None:
    assert money({"a": 9, "b": 1, "c": -10}, 105, 250) == {
        "a": Money(945 - 23, 23),  # 945 × 2.5 % = 23.625
        "b": Money(105 - 2, 2),
        "c": Money(-1050, 0),
    }


def test_hand_of_refuses_a_wrong_size_or_a_repeated_card() -> None:
    with pytest.raises(HandError, match="p1.chi1: expected 5 cards, got 4"):
        Hand.of(c("AS KS QS JS"), c("2H 3H 4H 5H 7D"), c("8C 8D 8H"), who="p1")
    with pytest.raises(HandError, match="chi3: AS is listed twice"):
        Hand.of(c("AS KS QS JS TS"), c("2H 3H 4H 5H 7D"), c("8C 8D AS"))
    with pytest.raises(HandError, match="chi2: 7D is listed twice"):
        Hand.of(c("AS KS QS JS 7D"), c("2H 3H 4H 5H 7D"), c("8C 8D 8H"))
    with pytest.raises(HandError, match="chi1: 52 is not a card number 0–51"):
        Hand.of((52, 1, 2, 3, 4), c("2H 3H 4H 5H 7D"), c("8C 8D 8H"))
