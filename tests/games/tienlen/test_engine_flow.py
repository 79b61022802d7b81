"""Turns, tricks, chops and payments, through worked examples of the spec."""

from __future__ import annotations

import pytest

from services.games.tienlen import (
    ChainSettled,
    DealError,
    IllegalPlayError,
    InstantWin,
    Kind,
    Pass,
    Phase,
    Play,
    TienLenRound,
    TienLenSettings,
    TrickWon,
)
from services.games.tienlen.cards import code

from .helpers import NO_INSTANT_WINS, c, deal, round_of

THREE_PAIRS = "4S 4C 5D 5H 6S 6C"
FOUR_KIND = "8S 8C 8D 8H"
FOUR_PAIRS = "TS TC JD JH QS QC KD KH"


def play(round_: TienLenRound, player: str, cards: str) -> None:
    round_.play(player, c(cards))


def pass_all(round_: TienLenRound, *players: str) -> None:
    for player in players:
        round_.pass_turn(player)


def test_the_spec_chain_example_the_last_chopped_pays_the_whole_chain() -> None:
    """p1 plays 2♥ (6); p2 chops with three consecutive pairs (6); p3 chops those with four of a kind."""
    round_ = round_of(p1="2H", p2=THREE_PAIRS, p3=FOUR_KIND)
    play(round_, "p1", "2H")
    play(round_, "p2", THREE_PAIRS)
    play(round_, "p3", FOUR_KIND)
    assert round_.payments == {"p1": 0, "p2": 0, "p3": 0, "p4": 0}, "a chain is paid when it ends"
    pass_all(round_, "p4", "p1", "p2")
    assert round_.chops[0] == ChainSettled(by="p3", chopped="p2", cards=round_.chops[0].cards, units=12)
    assert round_.payments == {"p1": 0, "p2": -12, "p3": 12, "p4": 0}
    assert round_.to_act == "p3" and round_.top is None


def test_a_higher_two_is_an_ordinary_play_and_only_the_top_two_is_chopped() -> None:
    round_ = round_of(p1="2S", p2="2H", p3=THREE_PAIRS)
    play(round_, "p1", "2S")
    play(round_, "p2", "2H")
    events = round_.play("p3", c(THREE_PAIRS))
    assert events[0].chop  # type: ignore[union-attr]
    pass_all(round_, "p4", "p1", "p2")
    assert round_.payments == {"p1": 0, "p2": -6, "p3": 6, "p4": 0}


def test_a_chain_of_three_chops() -> None:
    round_ = round_of(p1="2D", p2=THREE_PAIRS, p3=FOUR_KIND, p4=FOUR_PAIRS)
    play(round_, "p1", "2D")
    play(round_, "p2", THREE_PAIRS)  # chops a red 2: 6
    play(round_, "p3", FOUR_KIND)  # chops three consecutive pairs: 6
    play(round_, "p4", FOUR_PAIRS)  # chops a four of a kind: 9
    pass_all(round_, "p1", "p2", "p3")
    assert [(chop.by, chop.chopped, chop.units) for chop in round_.chops] == [("p4", "p3", 21)]
    assert round_.payments == {"p1": 0, "p2": 0, "p3": -21, "p4": 21}


def test_bigger_bombs_of_the_same_shape_chop_too() -> None:
    round_ = round_of(p1="3S 3C 4D 4H 5S 5C", p2=THREE_PAIRS)
    play(round_, "p1", "3S 3C 4D 4H 5S 5C")  # a lead, not a chop
    play(round_, "p2", THREE_PAIRS)  # a higher three consecutive pairs on it is a chop
    pass_all(round_, "p3", "p4", "p1")
    assert round_.payments == {"p1": -6, "p2": 6, "p3": 0, "p4": 0}


def test_four_consecutive_pairs_out_of_turn_after_passing() -> None:
    round_ = round_of(p1="3D 2S", p2=FOUR_PAIRS + " 4D", p3="5D", p4="6D")
    play(round_, "p1", "3D")
    play(round_, "p2", "4D")
    play(round_, "p3", "5D")
    play(round_, "p4", "6D")
    play(round_, "p1", "2S")
    round_.pass_turn("p2")
    assert round_.to_act == "p3"
    out_of_turn = round_.legal_moves("p2")
    assert FOUR_PAIRS.split() in [move.codes() for move in out_of_turn]
    assert all(move.is_bomb(Kind.CONSECUTIVE_PAIRS, 4) for move in out_of_turn)
    events = round_.play("p2", c(FOUR_PAIRS))
    assert events[0].out_of_turn and events[0].chop  # type: ignore[union-attr]
    assert "p2" not in round_.passed, "the chopper is back in the trick"
    assert round_.to_act == "p3", "play goes on counter-clockwise from the chopper"
    pass_all(round_, "p3", "p4", "p1")
    assert round_.events[-1] == TrickWon("p2")
    assert round_.payments == {"p1": -3, "p2": 3, "p3": 0, "p4": 0}


def test_only_four_consecutive_pairs_may_be_played_out_of_turn() -> None:
    round_ = round_of(p1="2S", p3=THREE_PAIRS + " " + FOUR_KIND)
    play(round_, "p1", "2S")
    with pytest.raises(IllegalPlayError, match="it is p2's turn; out of turn only four consecutive pairs"):
        round_.play("p3", c(THREE_PAIRS))
    with pytest.raises(IllegalPlayError, match="it is p2's turn"):
        round_.play("p3", c(FOUR_KIND))
    assert round_.legal_moves("p3") == []


def test_nobody_may_chop_their_own_play() -> None:
    round_ = round_of(p1="2S " + FOUR_PAIRS)
    play(round_, "p1", "2S")
    assert round_.legal_moves("p1") == []
    with pytest.raises(IllegalPlayError, match="nobody may chop their own play"):
        round_.play("p1", c(FOUR_PAIRS))


def test_four_consecutive_pairs_cannot_be_played_out_of_turn_on_an_ordinary_card() -> None:
    round_ = round_of(p1="9S", p3=FOUR_PAIRS)
    play(round_, "p1", "9S")
    assert not round_.can_play("p3", c(FOUR_PAIRS))


def test_a_passed_player_stays_out_until_the_trick_ends() -> None:
    round_ = round_of(p1="3S 5S", p2="4S 6S", p3="7S", p4="8S")
    play(round_, "p1", "3S")
    round_.pass_turn("p2")
    play(round_, "p3", "7S")
    play(round_, "p4", "8S")
    assert round_.to_act == "p1", "p2 passed: the turn skips them"
    with pytest.raises(IllegalPlayError, match="it is p1's turn"):
        round_.play("p2", c("6S"))
    pass_all(round_, "p1", "p3")
    assert round_.events[-1] == TrickWon("p4") and round_.to_act == "p4" and not round_.passed
    play(round_, "p4", round_.legal_moves("p4")[0].codes()[0])
    assert round_.to_act == "p1"


def test_a_lead_cannot_be_passed_and_a_pass_is_only_in_turn() -> None:
    round_ = round_of(p1="3S")
    with pytest.raises(IllegalPlayError, match="they lead this trick and must play"):
        round_.pass_turn("p1")
    play(round_, "p1", "3S")
    with pytest.raises(IllegalPlayError, match="it is p2's turn"):
        round_.pass_turn("p3")


def test_a_play_must_beat_the_table_and_come_from_the_hand() -> None:
    round_ = round_of(p1="9H", p2="9S 9C TS 5S 6D")
    play(round_, "p1", "9H")
    with pytest.raises(IllegalPlayError, match=r"9S \(single\) does not beat 9H \(single\)"):
        round_.play("p2", c("9S"))
    with pytest.raises(IllegalPlayError, match="not in their hand: 3S"):
        round_.play("p2", c("3S"))
    with pytest.raises(IllegalPlayError, match="form no combination"):
        round_.play("p2", c("5S 6D"))
    with pytest.raises(IllegalPlayError, match="does not beat"):
        round_.play("p2", c("9S 9C"))
    assert round_.can_play("p2", c("TS"))


def test_a_refused_play_names_its_reason_and_cards_for_the_pages() -> None:
    """What the pages translate (``reason``, ``params`` with card codes), beside the message for logs."""
    round_ = round_of(p1="9H", p2="9S 9C TS 5S 6D")
    with pytest.raises(IllegalPlayError) as lead:
        round_.pass_turn("p1")
    assert (lead.value.reason, lead.value.params) == ("must_lead", {})
    play(round_, "p1", "9H")
    refusals = {
        "9S": ("does_not_beat", {"cards": ["9S"], "top": ["9H"]}),
        "3S TS": ("not_in_hand", {"cards": ["3S", "TS"], "missing": ["3S"]}),
        "5S 6D": ("no_combination", {"cards": ["5S", "6D"]}),
    }
    for cards, expected in refusals.items():
        with pytest.raises(IllegalPlayError) as refused:
            round_.play("p2", c(cards))
        assert (refused.value.reason, refused.value.params) == expected, cards
    with pytest.raises(IllegalPlayError) as early:
        round_.pass_turn("p3")
    assert early.value.reason == "not_your_turn"


@pytest.mark.parametrize("players", [("p1", "p2", "p3", "p4"), ("p1", "p2", "p3")])
def test_the_holder_of_three_of_spades_leads_a_starting_round_with_it(players: tuple[str, ...]) -> None:
    round_ = round_of(players, leader=None, p2="3S 3C 4D")
    assert round_.leader == "p2" and round_.to_act == "p2"
    assert all("3S" in move.codes() for move in round_.legal_moves("p2"))
    with pytest.raises(IllegalPlayError, match="must contain 3S"):
        round_.play("p2", c("3C"))
    play(round_, "p2", "3S 3C")
    assert round_.first_lead_card is None


def test_without_three_of_spades_the_lowest_card_leads() -> None:
    players = ("p1", "p2")
    hands = deal(players, p2="3H")  # 3♠ 3♣ 3♦ stay undealt
    round_ = TienLenRound(players, hands, starting_round=True, settings=NO_INSTANT_WINS)
    assert (round_.leader, code(round_.first_lead_card or 0)) == ("p2", "3H")
    assert round_.timeout_command() == Play("p2", c("3H"))


def test_a_round_that_is_not_starting_is_led_by_the_named_player() -> None:
    round_ = round_of(leader="p3", p1="3S")
    assert round_.to_act == "p3" and round_.first_lead_card is None
    with pytest.raises(DealError, match="leader 'p9' is not a player"):
        round_of(leader="p9")


def test_the_round_ends_when_a_player_is_out_and_losers_pay_cards_and_thui() -> None:
    """p1 goes out; p2 played a card so pays 12 cards + two red 2s + four consecutive pairs."""
    round_ = round_of(
        ("p1", "p2"),
        leader=None,
        p1="3S 5S 6S 7S 8S 9S TS JS QS KS AS 2S 2C",
        p2="4C 2D 2H 3C 3D 3H 4D 4H 5C 5D 6C 6D 7C",
    )
    play(round_, "p1", "3S")
    play(round_, "p2", "4C")
    play(round_, "p1", "2S")
    round_.pass_turn("p2")
    play(round_, "p1", "5S 6S 7S 8S 9S TS JS QS KS AS")
    round_.pass_turn("p2")
    play(round_, "p1", "2C")
    result = round_.outcome()
    assert result is not None and round_.phase is Phase.FINISHED
    assert result.winner == "p1" and result.cong == frozenset()
    assert result.payments == {"p1": 12 + 6 + 6 + 12, "p2": -36}


def test_cong_pays_26_and_no_thui() -> None:
    round_ = round_of(
        ("p1", "p2", "p3"),
        leader="p1",
        p1="3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S",
        p2="3C",
        p3="2D 2H",
    )
    play(round_, "p1", "3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS")
    pass_all(round_, "p2", "p3")
    play(round_, "p1", "2S")
    result = round_.outcome()
    assert result is not None and result.cong == {"p2", "p3"}
    assert result.payments == {"p1": 52, "p2": -26, "p3": -26}


def test_the_last_card_ends_the_round_and_cannot_be_chopped() -> None:
    round_ = round_of(("p1", "p2"), p1="3S 4S 5S 6S 7S 8S 9S TS JS QS KS 2S 2C", p2="AS AC AD AH")
    play(round_, "p1", "3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    round_.pass_turn("p2")
    play(round_, "p1", "2S 2C")
    assert round_.result is not None and round_.legal_moves("p2") == []
    with pytest.raises(IllegalPlayError, match="the round is over"):
        round_.play("p2", c("AS AC AD AH"))


def test_a_chop_that_goes_out_settles_its_chain_with_the_round() -> None:
    round_ = round_of(
        ("p1", "p2"),
        leader="p2",
        p1="4C 5C 6C 7C 8C 9C TC 2H 3D 3C JD JH 2S",
        p2="3S 4S 5S 6S 7S 8S 9S QS QC KD KH AS AC",
    )
    play(round_, "p2", "3S 4S 5S 6S 7S 8S 9S")
    play(round_, "p1", "4C 5C 6C 7C 8C 9C TC")
    round_.pass_turn("p2")
    play(round_, "p1", "2H")
    play(round_, "p2", "QS QC KD KH AS AC")  # chops 2♥ (6) with its last cards
    result = round_.outcome()
    assert result is not None and result.winner == "p2"
    assert [(chop.by, chop.chopped, chop.units) for chop in result.chops] == [("p2", "p1", 6)]
    assert result.payments == {"p1": -(6 + 5 + 3), "p2": 6 + 5 + 3}  # the chain, 5 cards left, 2♠ held


def test_timeouts_pass_or_lead_the_lowest_single() -> None:
    round_ = round_of(p1="5S 6H", leader="p1")
    assert round_.timeout_command() == Play("p1", (min(round_.hands["p1"]),))
    play(round_, "p1", "6H")
    assert round_.timeout_command() == Pass("p2")


def test_instant_win_ends_the_round_at_once() -> None:
    dragon = "3S 4C 5D 6H 7S 8C 9D TH JS QC KD AH 2S"
    round_ = round_of(("p1", "p2", "p3"), settings=TienLenSettings(), p2=dragon)
    result = round_.outcome()
    assert result is not None and result.winner == "p2" and result.instant_win is InstantWin.DRAGON
    assert result.payments == {"p1": -26, "p2": 52, "p3": -26}
    assert round_.legal_moves("p1") == [] and round_.to_act is None


def test_the_stronger_instant_win_wins_and_equal_ones_go_to_the_first_in_turn_from_the_leader() -> None:
    four_twos = "2S 2C 2D 2H 3C 5C 7D 9H JS KC 4D 6H 8S"
    six_pairs = "3S 3D 5D 5H 7S 7C 9D 9S JD JC KD KH AS"
    stronger = round_of(("p1", "p2"), leader=None, settings=TienLenSettings(), p1=six_pairs, p2=four_twos)
    assert stronger.result is not None and stronger.result.winner == "p2"
    assert stronger.result.instant_win is InstantWin.FOUR_TWOS
    other_six = "4S 4C 6D 6H 8D 8C TD TS QS QC AD AH KS"
    ordinary = "3C 3H 4D 5S 6C 7D 8H 9C TH JH QD KC 2C"
    equal = round_of(
        ("p1", "p2", "p3"), leader="p2", settings=TienLenSettings(), p1=six_pairs, p2=ordinary, p3=other_six
    )
    assert equal.result is not None and equal.result.winner == "p3", "from leader p2: p2, p3, then p1"
    assert equal.result.payments == {"p1": -26, "p2": -26, "p3": 52}


@pytest.mark.parametrize(
    ("players", "hands", "match"),
    [
        (("p1",), None, "2–4 players"),
        (("p1", "p1"), None, "listed twice"),
        (("p1", ""), None, "non-empty string"),
    ],
)
def test_bad_deals_are_refused(players: tuple[str, ...], hands: object, match: str) -> None:
    with pytest.raises(DealError, match=match):
        TienLenRound(players, {}, starting_round=True)


def test_bad_hands_are_refused() -> None:
    players = ("p1", "p2")
    hands = deal(players)
    with pytest.raises(DealError, match="p2 holds 12 cards"):
        TienLenRound(players, {**hands, "p2": hands["p2"][:12]}, starting_round=True)
    with pytest.raises(DealError, match="dealt twice"):
        TienLenRound(players, {**hands, "p2": hands["p1"]}, starting_round=True)
    with pytest.raises(DealError, match="exactly the players"):
        TienLenRound(players, {"p1": hands["p1"]}, starting_round=True)
    with pytest.raises(DealError, match="in a starting round"):
        TienLenRound(players, hands, starting_round=True, leader="p2" if 0 in hands["p1"] else "p1")
