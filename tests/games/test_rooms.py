"""The room parts every seated game shares (services/games/rooms.py): the seats and the ready check, the
round-robin deal, the stored form of the room commands, room settings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.cards import FULL_DECK
from services.games.base import CardWanted, GameError, GameSettingsError, NotExpectedError, NotYourMoveError, Window
from services.games.rooms import (
    CloseSeating,
    Deal,
    Freed,
    Leave,
    Left,
    Ready,
    Remove,
    Removed,
    Seating,
    Sit,
    Void,
    dealt_to,
    from_dict,
    next_card,
    to_dict,
)
from services.games.tienlen.port import TIENLEN

SEATS = ("1", "2", "3", "4")


def seating(*players: str) -> Seating:
    seats = Seating(SEATS)
    for seat, player in zip(SEATS, players, strict=False):
        seats.verify(Sit(player, seat), "seating")
        seats.apply(Sit(player, seat))
    return seats


def test_the_ready_check_waits_for_everyone_and_times_out_only_the_one_player_the_others_wait_for() -> None:
    seats = seating("ana", "binh", "chai")
    assert seats.window(20_000) is None and not seats.all_ready()
    seats.apply(Ready("ana"))
    assert seats.window(20_000) is None  # two are not ready: nobody is "the one the others wait for"
    serial = seats.serial
    seats.apply(Ready("binh"))
    window = seats.window(20_000)
    assert window == Window("ready", 20_000, "3", "seat 3 to be ready (the others are)", serial=serial + 1)
    with pytest.raises(NotExpectedError):
        seats.verify(Remove("2"), "seating")
    with pytest.raises(NotExpectedError):
        seats.verify(Ready("ana"), "seating")  # once
    assert seats.apply(Remove("3")) == [Removed("3"), Freed("3")]
    assert seats.all_ready() and seats.out == {"3": "chai"} and seats.players == ["ana", "binh"]


def test_a_seat_left_before_the_deal_is_free_again_and_a_stranger_cannot_act() -> None:
    seats = seating("ana", "binh")
    seats.apply(Ready("binh"))
    assert seats.apply(Leave("binh")) == [Left("2"), Freed("2")]
    assert "binh" not in seats.ready and seats.seats == {"1": "ana"}
    seats.verify(Sit("chai", "2"), "seating")
    with pytest.raises(NotYourMoveError):
        seats.verify(Ready("binh"), "seating")
    with pytest.raises(NotYourMoveError):
        seats.verify(Sit("ana", "3"), "seating")  # one seat each
    with pytest.raises(GameError):
        seats.verify(Sit("dao", "9"), "seating")
    with pytest.raises(NotExpectedError):
        seats.verify(Sit("dao", "3"), "dealing")


@given(st.integers(2, 4), st.integers(0, 52))
def test_the_deal_goes_round_the_seats_one_card_each(players: int, count: int) -> None:
    order = ["ana", "binh", "chai", "dao"][:players]
    seats = {str(i + 1): name for i, name in enumerate(order)}
    dealt = list(FULL_DECK[:count])
    hands = [dealt_to(dealt, order, name) for name in order]
    assert sorted(str(card) for hand in hands for card in hand) == sorted(map(str, dealt))
    assert all(len(hands[0]) - len(hand) in (0, 1) for hand in hands)
    wanted = next_card(seats, order, count)
    assert wanted == CardWanted(str(count % players + 1), count // players, False, wanted.text)


def test_room_commands_round_trip_and_room_settings_are_checked() -> None:
    for command in (Sit("ana", "1"), CloseSeating(), Deal(FULL_DECK[0]), Void("camera"), Ready("ana"), Remove("2"),
                    Leave("binh")):  # fmt: skip
        stored = to_dict(command)
        assert stored is not None and from_dict(stored) == command
    assert from_dict({"type": "play"}) is None  # a game's own move
    assert TIENLEN.settings({"deal": "online"}).deal == "online"
    for bad in ({"deal": "camera"}, {"unit": 0}, {"turn_ms": True}, {"rules": []}, {"colour": 1}):
        with pytest.raises(GameSettingsError):
            TIENLEN.settings(bad)
