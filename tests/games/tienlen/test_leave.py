"""A player who leaves a Tiến Lên round while it is played: out of every trick, the round goes on without them, and
at its end they pay the winner as a player who never played a card (or what their hand costs as a loser, if more);
a player whose turns run out one after another is taken out the same way; a leaver earns no experience points."""

from __future__ import annotations

import pytest

from hardware.sim import shuffled_deck
from services.cards import Card
from services.games.base import PUBLIC, NotExpectedError, NotYourMoveError
from services.games.rooms import CloseSeating, Deal, Freed, Leave, Left, Sit
from services.games.tienlen import IllegalPlayError, PlayerLeft, TrickWon
from services.games.tienlen.hands import loser_pays
from services.games.tienlen.port import TIENLEN, Drop, Room

from .helpers import NO_INSTANT_WINS, c, round_of


def test_the_round_goes_on_without_the_leaver_who_pays_as_one_who_never_played() -> None:
    round_ = round_of(("p1", "p2", "p3"), p1="3S 4S", p2="5S 6S", p3="7S")
    round_.play("p1", c("3S"))
    events = round_.leave("p3")  # not their turn: nothing moves but them
    assert events == (PlayerLeft("p3", False),) and round_.to_act == "p2"
    round_.play("p2", c("5S"))
    assert round_.to_act == "p1", "p3's turn is skipped"
    with pytest.raises(IllegalPlayError, match="they left the round") as refused:
        round_.play("p3", c("7S"))
    assert refused.value.reason == "left_round"
    assert round_.legal_moves("p3") == []
    round_.pass_turn("p1")
    assert round_.events[-1] == TrickWon("p2") and round_.to_act == "p2"
    held = set(round_.hands["p3"])
    while round_.result is None:  # p2 and p1 play their lowest single, or pass, to the end
        player = round_.to_act
        assert player in ("p1", "p2")
        moves = sorted(round_.legal_moves(player), key=lambda m: (len(m.cards), max(m.cards)))
        singles = [m for m in moves if len(m.cards) == 1]
        if singles:
            round_.play(player, singles[0].cards)
        else:
            round_.pass_turn(player)
    result = round_.result
    assert result.winner != "p3" and result.left == frozenset({"p3"}) and "p3" not in result.cong
    owed = max(26, loser_pays(frozenset(held), NO_INSTANT_WINS))
    assert result.payments["p3"] == -owed and sum(result.payments.values()) == 0


def test_a_trick_whose_top_player_left_goes_to_the_next_player_after_them() -> None:
    round_ = round_of(("p1", "p2", "p3"), p1="3S 4S", p2="5S", p3="6S")
    round_.play("p1", c("3S"))
    round_.play("p2", c("5S"))
    round_.leave("p2")  # on top of the trick, then gone
    round_.pass_turn("p3")
    round_.pass_turn("p1")
    assert round_.events[-1] == TrickWon("p3") and round_.to_act == "p3" and round_.top is None


def test_leaving_on_ones_own_turn_passes_the_turn_and_a_lead_to_the_next_player() -> None:
    round_ = round_of(("p1", "p2", "p3"), leader=None, p1="3S", p2="4S")  # p1 holds 3♠ and must lead it
    round_.leave("p1")
    assert round_.to_act == "p2" and round_.top is None
    round_.play("p2", c("4S"))  # the starting lead's card left with p1: p2 leads freely


def test_with_one_player_left_that_player_wins_at_once() -> None:
    round_ = round_of(("p1", "p2"), p1="3S", p2="4S")
    round_.play("p1", c("3S"))
    events = round_.leave("p2")
    assert round_.result is not None and round_.result.winner == "p1"
    assert round_.result.payments == {"p1": -round_.result.payments["p2"], "p2": round_.result.payments["p2"]}
    assert round_.result.payments["p2"] <= -26 and events[0] == PlayerLeft("p2", False)
    with pytest.raises(IllegalPlayError, match="round is over"):
        round_.leave("p1")


def room(players: int = 3, **settings: object) -> Room:
    found = TIENLEN.new_round(TIENLEN.settings(settings))
    for seat in range(1, players + 1):
        TIENLEN.apply(found, Sit(f"p{seat}", str(seat)))
    TIENLEN.apply(found, CloseSeating())
    for code in shuffled_deck(1)[: 13 * players]:  # seed 1 holds no instant win
        TIENLEN.apply(found, Deal(Card.from_code(code)))
    return found


def test_a_player_whose_turns_run_out_three_times_in_a_row_is_taken_out_as_a_leaver() -> None:
    found = room()
    assert found.engine is not None
    counts: dict[str, int] = {}
    while found.phase == "playing":
        command = TIENLEN.timeout(found)
        if isinstance(command, Drop):
            assert counts.get(command.player, 0) == 2, "the third time out in a row takes them out"
            TIENLEN.apply(found, command)
            break
        counts[command.player] = counts.get(command.player, 0) + 1
        TIENLEN.apply(found, command)
    dropped = command.player
    assert found.engine.left == {dropped} and TIENLEN.view(found, PUBLIC)["left"] == [dropped.removeprefix("p")]
    stored = TIENLEN.command_to_dict(found.commands[-1])
    assert stored == {"type": "drop", "player": dropped} and TIENLEN.command_from_dict(stored) == Drop(dropped)
    again = TIENLEN.replay(
        [TIENLEN.command_from_dict(TIENLEN.command_to_dict(x)) for x in found.commands], found.settings
    )
    assert again.engine is not None and again.engine.left == {dropped}
    with pytest.raises(NotExpectedError):
        TIENLEN.apply(found, Drop("p1" if dropped != "p1" else "p2"))  # only the player whose turn runs out


def test_leaving_before_the_deal_frees_the_seat_and_during_it_is_refused() -> None:
    found = TIENLEN.new_round(TIENLEN.settings({}))
    TIENLEN.apply(found, Sit("ana", "1"))
    assert TIENLEN.apply(found, Leave("ana")) == [Left("1"), Freed("1")] and found.seats == {}
    with pytest.raises(NotYourMoveError):
        TIENLEN.apply(found, Leave("ana"))
    dealing = TIENLEN.new_round(TIENLEN.settings({}))
    for seat, name in (("1", "ana"), ("2", "binh")):
        TIENLEN.apply(dealing, Sit(name, seat))
    TIENLEN.apply(dealing, CloseSeating())
    with pytest.raises(NotExpectedError, match="being dealt"):
        TIENLEN.apply(dealing, Leave("ana"))
