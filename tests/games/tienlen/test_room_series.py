"""A Tiến Lên room's round carries the table's series: who won the last round, cóng streaks; the deal's end asks
it who leads (the spec's "first lead" rules across rounds, in services/games/tienlen/series.py)."""

from __future__ import annotations

import pytest

from hardware.sim import shuffled_deck
from services.cards import Card
from services.games.base import PUBLIC, GameError, NotExpectedError, Window, viewer
from services.games.rooms import CloseSeating, Deal, Sit
from services.games.tienlen.events import Pass
from services.games.tienlen.port import TIENLEN, Continue, Room
from services.games.tienlen.series import Series


def dealt(series: Series | None = None, seed: int = 1) -> Room:
    room = TIENLEN.new_round(TIENLEN.settings({"missed_turns": 1_000}))  # played out by time-outs alone
    if series is not None:
        TIENLEN.apply(room, Continue.of(series))
    for seat, player in (("1", "ana"), ("2", "binh"), ("3", "chai")):
        TIENLEN.apply(room, Sit(player, seat))
    TIENLEN.apply(room, CloseSeating())
    for code in shuffled_deck(seed)[:39]:  # seeds 0 and 1 hold no instant win
        TIENLEN.apply(room, Deal(Card.from_code(code)))
    return room


def test_the_first_round_of_a_table_is_a_starting_round_and_the_next_is_led_by_its_winner() -> None:
    first = dealt()
    assert first.engine is not None and first.engine.starting_round
    assert Card.from_code("3S") in first.hand_of(first.engine.leader)  # a starting round: 3♠ leads
    while first.phase == "playing":
        TIENLEN.apply(first, TIENLEN.timeout(first))
    assert first.engine.result is not None
    series = TIENLEN.series_after(first)
    assert series.previous_winner == first.engine.result.winner
    second = dealt(series, seed=0)  # alone, this deal would be led by ana's 3♠
    assert second.engine is not None and not second.engine.starting_round
    assert second.engine.leader == series.previous_winner == "binh"
    stored = [TIENLEN.command_to_dict(command) for command in second.commands]
    again = TIENLEN.replay([TIENLEN.command_from_dict(item) for item in stored], second.settings)
    assert again.engine is not None and again.engine.leader == second.engine.leader


def test_a_player_cong_twice_in_a_row_leads_and_the_series_comes_first_or_not_at_all() -> None:
    series = Series(previous_winner="ana", after_instant_win=False, cong_streak={"chai": 2, "binh": 1})
    room = dealt(series)
    assert room.engine is not None and room.engine.leader == "chai"
    with pytest.raises(NotExpectedError):
        TIENLEN.apply(room, Continue.of(series))  # only as the round's first command
    void = TIENLEN.new_round(TIENLEN.settings({}))
    TIENLEN.apply(void, TIENLEN.void("camera down"))
    assert TIENLEN.series_after(void) == Series()  # a round that did not finish changes nothing


def test_a_move_made_on_time_out_is_marked_kept_in_the_log_and_shown_until_the_next_move() -> None:
    room = dealt()
    assert room.engine is not None
    leader = room.engine.to_act
    assert leader is not None
    lowest = min(room.engine.hands[leader])
    TIENLEN.apply(room, TIENLEN.timeout(room))  # the leader's turn runs out: their lowest single is led for them
    seat = next(s for s, p in room.seats.items() if p == leader)
    shown = TIENLEN.view(room, PUBLIC)["timed_out"]
    assert shown == {"seat": seat, "cards": [shown["cards"][0]]} and len(shown["cards"]) == 1
    assert TIENLEN.view(room, viewer("nobody"))["timed_out"] == shown  # played cards are public
    stored = [TIENLEN.command_to_dict(command) for command in room.commands]
    assert stored[-1]["timed_out"] is True and "timed_out" not in stored[0]  # a sit carries nothing new
    replayed = TIENLEN.replay([TIENLEN.command_from_dict(data) for data in stored], room.settings)
    assert TIENLEN.view(replayed, PUBLIC)["timed_out"] == shown
    assert replayed.engine is not None and lowest not in replayed.engine.hands[leader]
    nxt = room.engine.to_act
    assert nxt is not None
    TIENLEN.apply(room, Pass(nxt))  # a move of the player's own: nothing to say any more
    assert "timed_out" not in TIENLEN.view(room, PUBLIC)
    assert "timed_out" not in TIENLEN.command_to_dict(room.commands[-1])


def test_seated_ms_holds_the_seats_open_from_each_sit_and_a_full_room_deals_at_once() -> None:
    """``seated_ms``: before anyone sits, seating lasts ``seating_ms``; each sit opens it again for ``seated_ms``
    (a new window: the controller restarts its clock), so a newcomer can join after quick players; the fourth sit
    deals at once. Off (0) by default: seating ends ``seating_ms`` after the round opens, whoever sits."""
    room = TIENLEN.new_round(TIENLEN.settings({"seated_ms": 10_000}))
    opening = TIENLEN.expecting(room)
    assert isinstance(opening, Window) and (opening.kind, opening.ms) == ("seating", 20_000)
    windows = []
    for seat, player in (("1", "ana"), ("2", "binh"), ("3", "chai")):
        TIENLEN.apply(room, Sit(player, seat))
        window = TIENLEN.expecting(room)
        assert isinstance(window, Window) and (window.kind, window.ms) == ("seating", 10_000)
        windows.append(window.serial)
    assert len(set(windows)) == 3 and room.phase == "seating"  # each sit: a window of its own
    TIENLEN.apply(room, Sit("dao", "4"))
    assert room.phase == "dealing"
    plain = TIENLEN.new_round(TIENLEN.settings({}))
    TIENLEN.apply(plain, Sit("ana", "1"))
    assert TIENLEN.expecting(plain) == opening  # off: the same window as at the open
    with pytest.raises(GameError, match="seated_ms: expected a whole number 0"):
        TIENLEN.settings({"seated_ms": -1})
