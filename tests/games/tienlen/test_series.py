"""Who leads the next round, and experience points with room tiers."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from services.games.tienlen import InstantWin, RoomEntryError, RoundResult, SettingsError
from services.games.tienlen.experience import DEFAULT_TIERS, RoomTier, award_round
from services.games.tienlen.series import NextRound, Series

from .helpers import c, round_of

PLAYERS = ("p1", "p2", "p3", "p4")


def result(winner: str, cong: Iterable[str] = (), instant: InstantWin | None = None) -> RoundResult:
    return RoundResult(winner=winner, payments={}, chops=(), instant_win=instant, cong=frozenset(cong))


def test_the_first_round_is_a_starting_round_then_the_winner_leads() -> None:
    series = Series()
    assert series.next_round(PLAYERS) == NextRound(starting_round=True, leader=None)
    series.record(PLAYERS, result("p3"))
    assert series.next_round(PLAYERS) == NextRound(starting_round=False, leader="p3")


def test_a_player_cong_two_rounds_in_a_row_leads_the_third() -> None:
    series = Series()
    series.record(PLAYERS, result("p1", cong={"p4"}))
    assert series.next_round(PLAYERS).leader == "p1", "once is not enough"
    series.record(PLAYERS, result("p1", cong={"p4"}))
    assert series.next_round(PLAYERS) == NextRound(starting_round=False, leader="p4")
    series.record(PLAYERS, result("p2"))  # p4 led, so played a card
    assert series.next_round(PLAYERS).leader == "p2"


def test_of_two_players_cong_twice_the_nearest_after_the_previous_winner_leads() -> None:
    series = Series()
    series.record(PLAYERS, result("p2", cong={"p1", "p4"}))
    series.record(PLAYERS, result("p3", cong={"p1", "p4"}))
    assert series.next_round(PLAYERS).leader == "p4", "counting from p3: p4 comes before p1"


def test_a_starting_round_beats_the_cong_rule() -> None:
    series = Series()
    series.record(PLAYERS, result("p2", cong={"p1"}))
    series.record(PLAYERS, result("p2", cong={"p1"}))
    assert series.next_round(("p1", "p3", "p4")) == NextRound(starting_round=True, leader=None), "the winner left"
    series.record(PLAYERS, result("p2", instant=InstantWin.SIX_PAIRS))
    assert series.next_round(PLAYERS).starting_round, "after an instant win"


def test_losing_to_an_instant_win_is_not_cong() -> None:
    series = Series()
    series.record(PLAYERS, result("p1", cong={"p4"}))
    series.record(PLAYERS, result("p2", instant=InstantWin.DRAGON))
    series.record(PLAYERS, result("p1", cong={"p4"}))
    assert series.cong_streak["p4"] == 2
    assert series.next_round(PLAYERS).leader == "p4"


def test_a_round_played_through_the_engine_feeds_the_series() -> None:
    round_ = round_of(("p1", "p2", "p3"), leader="p1", p1="3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S", p2="3C", p3="2D 2H")
    round_.play("p1", c("3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"))
    round_.pass_turn("p2")
    round_.pass_turn("p3")
    round_.play("p1", c("2S"))
    assert round_.result is not None
    series = Series()
    series.record(round_.players, round_.result)
    assert series.cong_streak == {"p1": 0, "p2": 1, "p3": 1}


def test_experience_is_awarded_per_round_played_not_to_leavers() -> None:
    tier = DEFAULT_TIERS[1]
    points = award_round({"p1": 120}, tier, seated=PLAYERS, left={"p3"})
    assert points == {"p1": 122, "p2": 2, "p4": 2}


def test_entering_a_tier_above_ones_experience_is_refused() -> None:
    tier_1, tier_2, tier_3 = DEFAULT_TIERS
    assert (tier_1.min_experience, tier_2.min_experience, tier_3.min_experience) == (0, 100, 1000)
    assert (tier_1.award, tier_2.award, tier_3.award) == (1, 2, 5)
    tier_2.admit("ana", 100)
    refusal = "ana cannot enter a tier 3 room: it needs 1000 experience points, ana has 999"
    with pytest.raises(RoomEntryError, match=refusal):
        tier_3.admit("ana", 999)


def test_room_tiers_are_validated() -> None:
    with pytest.raises(SettingsError, match="min_experience"):
        RoomTier("vip", min_experience=-1, award=1)
    with pytest.raises(SettingsError, match="name"):
        RoomTier("", min_experience=0, award=1)
