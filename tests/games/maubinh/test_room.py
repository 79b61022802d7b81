"""The Mậu Binh room on the game port: ready check, the deal in seat order, private hands, arranging with
auto-arrange, the showdown chi by chi, leavers, payouts that sum to zero within the holds, replay."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.cards import Card
from services.games.base import DEALER, PUBLIC, GameError, NotExpectedError, NotYourMoveError, Window, viewer
from services.games.maubinh import HandError, score_table
from services.games.maubinh.hand import LEFT, Hand
from services.games.maubinh.port import MAUBINH
from services.games.maubinh.room import NUMBER, Arrange, Arranged, CloseArranging, Reveal, Revealed, Room
from services.games.rooms import CloseSeating, Deal, Freed, Leave, PhaseChanged, Ready, Remove, Short, Sit, Unfunded

DECK = [Card.from_code(rank + suit) for rank in "23456789TJQKA" for suit in "SHDC"]


def seated(*players: str, settings: dict[str, object] | None = None) -> Room:
    room = MAUBINH.new_round(MAUBINH.settings(settings or {}))
    for seat, player in enumerate(players, start=1):
        MAUBINH.apply(room, Sit(player, str(seat)))
    return room


def dealt(players: tuple[str, ...], seed: int = 1) -> tuple[Room, list[Card]]:
    room = seated(*players)
    for player in players:
        MAUBINH.apply(room, Ready(player))
    deck = DECK[:]
    random.Random(seed).shuffle(deck)
    for card in deck[: 13 * len(players)]:
        assert MAUBINH.expecting(room).__class__.__name__ == "CardWanted"
        MAUBINH.apply(room, Deal(card))
    return room, deck


def as_codes(cards: list[Card]) -> list[str]:
    return [str(card) for card in cards]


def test_the_deal_waits_for_everyone_ready_and_the_ready_check_removes_the_one_who_is_not() -> None:
    room = seated("ana", "binh", "chai")
    assert MAUBINH.expecting(room) is None  # nobody ready: the room waits
    MAUBINH.apply(room, Ready("ana"))
    assert MAUBINH.expecting(room) is None  # two not ready: still nobody is "the one the others wait for"
    MAUBINH.apply(room, Ready("binh"))
    window = MAUBINH.expecting(room)
    assert isinstance(window, Window) and (window.kind, window.seat, window.ms) == ("ready", "3", 20_000)
    with pytest.raises(NotExpectedError):
        MAUBINH.apply(room, Remove("1"))  # only the one not ready can be removed
    events = MAUBINH.apply(room, MAUBINH.timeout(room))
    assert Freed("3") in events and room.seats == {"1": "ana", "2": "binh"} and room.seating.out == {"3": "chai"}
    assert room.phase == "dealing"  # the two left are ready
    with pytest.raises(NotExpectedError):
        MAUBINH.apply(room, Ready("ana"))


def test_free_seats_stay_open_for_seating_ms_after_the_last_change_then_the_ready_players_are_dealt() -> None:
    """``seating_ms``: everyone seated is ready but a seat is free — the deal waits ``seating_ms`` from the seats'
    last change (a newcomer's sit restarts it); a full table, or the window's end, deals at once."""
    room = seated("ana", "binh", settings={"seating_ms": 10_000})
    MAUBINH.apply(room, Ready("ana"))
    MAUBINH.apply(room, Ready("binh"))
    first = MAUBINH.expecting(room)
    assert room.phase == "seating" and isinstance(first, Window) and (first.kind, first.ms) == ("seating", 10_000)
    MAUBINH.apply(room, Sit("chai", "3"))  # a newcomer: the ready check now waits for them
    assert MAUBINH.expecting(room).kind == "ready"  # type: ignore[union-attr]
    MAUBINH.apply(room, Ready("chai"))
    again = MAUBINH.expecting(room)
    assert isinstance(again, Window) and again.kind == "seating" and again.serial != first.serial  # restarted
    assert MAUBINH.timeout(room) == CloseSeating()
    stored = MAUBINH.command_to_dict(CloseSeating())
    MAUBINH.apply(room, MAUBINH.command_from_dict(json.loads(json.dumps(stored))))
    assert room.phase == "dealing"
    with pytest.raises(NotExpectedError):
        MAUBINH.apply(room, CloseSeating())

    full = seated("ana", "binh", "chai", "dao", settings={"seating_ms": 10_000})
    for player in ("ana", "binh", "chai", "dao"):
        MAUBINH.apply(full, Ready(player))
    assert full.phase == "dealing"  # no free seat to hold open
    with pytest.raises(GameError, match="seating_ms: expected a whole number 0"):
        MAUBINH.settings({"seating_ms": -1})
    assert seated("ana").settings.seating_ms == 0  # off unless the room asks for it


def test_leaving_before_the_deal_frees_the_seat_for_someone_else() -> None:
    room = seated("ana", "binh")
    events = MAUBINH.apply(room, Leave("binh"))
    assert Freed("2") in events and room.seats == {"1": "ana"}
    MAUBINH.apply(room, Sit("chai", "2"))
    MAUBINH.apply(room, Ready("ana"))
    assert room.phase == "seating"
    MAUBINH.apply(room, Ready("chai"))
    assert room.phase == "dealing" and MAUBINH.seats(room) == {"1": "ana", "2": "chai"}
    with pytest.raises(NotYourMoveError):
        MAUBINH.apply(room, Ready("binh"))  # binh has no seat now


@pytest.mark.parametrize("players", [("ana", "binh"), ("ana", "binh", "chai"), ("ana", "binh", "chai", "dao")])
def test_each_player_sees_only_their_own_cards_until_the_showdown_shows_them_chi_by_chi(
    players: tuple[str, ...],
) -> None:
    room, deck = dealt(players)
    hands = {p: deck[i : 13 * len(players) : len(players)] for i, p in enumerate(players)}  # seat order, round robin
    assert room.phase == "arranging" and all(room.dealt_to(p) == hands[p] for p in players)
    public, dealer = MAUBINH.view(room, PUBLIC), MAUBINH.view(room, DEALER)
    for seat in public["hands"]:
        assert public["hands"][seat]["cards"] == [None] * 13 and dealer["hands"][seat]["cards"] == ["received"] * 13
    mine = MAUBINH.view(room, viewer("ana"))
    assert mine["hands"]["1"]["cards"] == as_codes(hands["ana"]) and mine["hands"]["2"]["cards"] == [None] * 13
    assert sorted(code for chi in mine["suggestion"]["chi"] for code in chi) == sorted(as_codes(hands["ana"]))
    assert MAUBINH.view(room, viewer("binh"))["suggestion"] != mine["suggestion"]
    everyone = json.dumps(public) + json.dumps(dealer)
    assert not any(str(card) in everyone for card in deck[: 13 * len(players)])

    chi = mine["suggestion"]["chi"]
    MAUBINH.apply(room, Arrange("ana", *(tuple(map(Card.from_code, part)) for part in chi)))
    with pytest.raises(NotExpectedError):
        MAUBINH.apply(room, Arrange("ana", *(tuple(map(Card.from_code, part)) for part in chi)))  # once
    assert MAUBINH.view(room, PUBLIC)["arranged"] == ["1"] and room.phase == "arranging"
    events = MAUBINH.apply(room, MAUBINH.timeout(room))  # the others run out of time: auto-arranged
    auto = [event for event in events if isinstance(event, Arranged) and event.auto]
    assert auto == [Arranged(str(seat), auto=True) for seat in range(2, 1 + len(players))]
    assert events[-2:] == [Revealed(1), PhaseChanged("showdown")]
    for shown in (1, 2, 3):
        assert room.phase == "showdown" and MAUBINH.expecting(room) == Window(
            "showdown", 5_000, text=f"the showdown of chi {shown}", serial=shown
        )
        public = MAUBINH.view(room, PUBLIC)
        assert public["revealed"] == shown and all(len(chis) == shown for chis in public["chi"].values())
        seen = {code for chis in public["chi"].values() for part in chis for code in part["cards"]}
        hidden = {str(card) for card in MAUBINH.hidden(room, PUBLIC)}
        assert not seen & hidden and len(seen) + len(hidden) == 13 * len(players)
        MAUBINH.apply(room, Reveal())
    assert room.phase == "settled" and MAUBINH.hidden(room, PUBLIC) == frozenset()
    payouts = MAUBINH.payouts(room)
    assert payouts is not None and sum(p.net for p in payouts) == 0
    expected = score_table(dict(room.hands), room.settings.rules).totals
    assert {p.player: p.net for p in payouts} == {p: units * 100 for p, units in expected.items()}
    assert all(-p.net <= MAUBINH.seat_hold(room) for p in payouts)
    assert MAUBINH.view(room, PUBLIC)["result"]["units"] == {room.seat_of(p): u for p, u in expected.items()}


def test_an_arrangement_must_be_the_players_own_13_cards_in_chi_of_5_5_and_3() -> None:
    room, _ = dealt(("ana", "binh"))
    own = room.dealt_to("ana")
    other = room.dealt_to("binh")
    with pytest.raises(GameError, match="exactly the 13 cards"):
        MAUBINH.apply(room, Arrange("ana", tuple(own[:5]), tuple(own[5:10]), (own[10], own[11], other[0])))
    with pytest.raises(HandError):
        MAUBINH.apply(room, Arrange("ana", tuple(own[:4]), tuple(own[4:10]), tuple(own[10:])))
    with pytest.raises(NotYourMoveError):
        MAUBINH.apply(room, Arrange("chai", tuple(own[:5]), tuple(own[5:10]), tuple(own[10:])))
    assert room.hands == {}  # nothing was taken
    mis_set = sorted(own, key=lambda card: NUMBER[card])  # weakest cards in chi 1: binh lủng, allowed (it loses)
    chis = tuple(mis_set[:5]), tuple(mis_set[5:10]), tuple(mis_set[10:])
    with pytest.raises(GameError, match="binh lủng: chi 1 is weaker than chi 2") as refused:
        MAUBINH.apply(room, Arrange("ana", *chis))  # not without the player's word
    assert refused.value.reason == "binh_lung_unconfirmed" and refused.value.params == {"chi": "1", "next": "2"}
    assert room.hands == {}
    MAUBINH.apply(room, Arrange("ana", *chis, confirmed=True))
    assert room.hands["ana"].mis_set
    stored = MAUBINH.command_to_dict(MAUBINH.commands(room)[-1])
    assert stored["confirmed"] is True and MAUBINH.command_from_dict(stored) == Arrange("ana", *chis)


def test_a_seat_holds_the_largest_loss_with_the_players_seated() -> None:
    room = seated("ana")
    per = room.settings.rules.largest_loss_per_opponent * room.settings.unit
    assert MAUBINH.seat_hold(room) == per  # one seated: a hand needs a second, so one opponent's worth
    MAUBINH.apply(room, Sit("binh", "2"))
    assert MAUBINH.seat_hold(room) == per
    MAUBINH.apply(room, Sit("chai", "4"))
    assert MAUBINH.seat_hold(room) == 2 * per
    events = MAUBINH.apply(room, Short("4"))  # chai's wallet cannot cover a hand of three: out before the deal
    assert events == [Unfunded("4", 3), Freed("4")] and room.seats == {"1": "ana", "2": "binh"}
    assert MAUBINH.seat_hold(room) == per == room.settings.hold // 3
    with pytest.raises(NotExpectedError):
        MAUBINH.apply(room, Short("4"))  # nobody there
    stored = MAUBINH.command_to_dict(Short("1"))
    assert stored == {"type": "short", "seat": "1"} and MAUBINH.command_from_dict(stored) == Short("1")


def test_a_player_who_leaves_after_the_deal_loses_every_chi_as_a_leaver() -> None:
    room, _ = dealt(("ana", "binh", "chai"), seed=3)
    MAUBINH.apply(room, Leave("chai"))
    assert room.seats["3"] == "chai" and "chai" in room.left  # in the hand, as a leaver
    MAUBINH.apply(room, CloseArranging())
    for _ in range(3):
        MAUBINH.apply(room, Reveal())
    payouts = {p.player: p.net for p in MAUBINH.payouts(room) or []}
    seats = {"ana": room.hands["ana"], "binh": room.hands["binh"], "chai": LEFT}
    assert payouts == {p: u * 100 for p, u in score_table(seats, room.settings.rules).totals.items()}
    assert payouts["chai"] < 0


def test_commands_round_trip_and_a_replay_gives_the_same_hand() -> None:
    room, _ = dealt(("ana", "binh", "chai"), seed=5)
    MAUBINH.apply(room, Leave("binh"))
    MAUBINH.apply(room, CloseArranging())
    MAUBINH.apply(room, Reveal())
    stored = [MAUBINH.command_to_dict(command) for command in MAUBINH.commands(room)]
    again = MAUBINH.replay([MAUBINH.command_from_dict(json.loads(json.dumps(s))) for s in stored], room.settings)
    for audience in (PUBLIC, DEALER, viewer("ana")):
        assert MAUBINH.view(again, audience) == MAUBINH.view(room, audience)


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    leavers=st.sets(st.integers(0, 3), max_size=2),
    arranged=st.sets(st.integers(0, 3)),
)
def test_any_hand_pays_out_zero_in_total_within_every_hold(
    players: int, seed: int, leavers: set[int], arranged: set[int]
) -> None:
    names = tuple(["ana", "binh", "chai", "dao"][:players])
    room, _ = dealt(names, seed)
    for index in sorted(leavers):
        if index < players:
            MAUBINH.apply(room, Leave(names[index]))
    for index in sorted(arranged - leavers):
        if index < players:  # a valid arrangement (the suggestion) or the cards in dealt order (maybe binh lủng)
            cards = room.dealt_to(names[index])
            chis = tuple(cards[:5]), tuple(cards[5:10]), tuple(cards[10:])
            MAUBINH.apply(room, Arrange(names[index], *chis, confirmed=True))
    while room.phase != "settled":
        MAUBINH.apply(room, MAUBINH.timeout(room))
    payouts = MAUBINH.payouts(room) or []
    assert sum(p.net + p.commission for p in payouts) == 0 and len(payouts) == players
    assert all(-p.net <= MAUBINH.seat_hold(room) for p in payouts)
    assert all(isinstance(hand, Hand) for hand in room.hands.values())
