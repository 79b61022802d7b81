"""Rooms dealt online: a committed server shuffle deals instead of the shoe. Its commitment is public from the
round's start, the cards go to each player's own view only, and the deck and salt are published once the round
is over — and check out against the commitment (``studio verify``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from services.api.app import create_app
from services.games.shuffle import verify
from services.rounds.models import RoundLogEntry
from services.rounds.players import PlayerService
from services.rounds.service import RoundService


class Room:
    def __init__(self, client: TestClient, service: RoundService, tokens: dict[str, str]) -> None:
        self.client, self.service, self.tokens = client, service, tokens

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def open(self, table: str, game: str, settings: dict[str, Any]) -> str:
        body = {"id": table, "game": game, "settings": settings | {"deal": "online"}}
        assert self.client.post("/v1/operator/tables", json=body, headers=self.auth("op")).status_code == 201
        response = self.client.post(f"/v1/operator/tables/{table}/rounds", json={}, headers=self.auth("op"))
        assert response.status_code == 201, response.text
        round_id: str = response.json()["round_id"]
        return round_id

    def act(self, who: str, round_id: str, action: str, body: object = None) -> Any:
        headers = self.auth(who) | {"Idempotency-Key": f"{who}-{action}-{round_id}"}
        response = self.client.post(f"/v1/rounds/{round_id}/{action}", json=body or {}, headers=headers)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def public(self, table: str) -> dict[str, Any]:
        state: dict[str, Any] = self.client.get(f"/v1/tables/{table}/current", headers=self.auth("ana")).json()
        return state

    def own(self, table: str, seat: str, who: str) -> dict[str, Any]:
        path = f"/v1/tables/{table}/seats/{seat}/stream?changes=1"
        with self.client.stream("GET", path, headers=self.auth(who)) as response:
            line = next(line for line in response.iter_lines() if line.startswith("data: "))
        view: dict[str, Any] = json.loads(line[6:])
        return view


@pytest.fixture
def room(database: Engine) -> Iterator[Room]:
    app = create_app(database)
    players: PlayerService = app.state.services.players
    tokens = {"op": players.register("op", "operator")} | {p: players.register(p) for p in ("ana", "binh")}
    with TestClient(app) as client:
        for index, name in enumerate(("ana", "binh")):
            headers = {"Authorization": f"Bearer {tokens['op']}", "Idempotency-Key": f"f{index}"}
            body = {"amount": 100_000}
            assert client.post(f"/v1/operator/players/{name}/deposit", json=body, headers=headers).status_code == 200
        yield Room(client, app.state.services.rounds, tokens)


def test_a_mau_binh_room_dealt_online_publishes_its_commitment_first_and_its_deck_after(room: Room) -> None:
    round_id = room.open("mb1", "maubinh", {"unit": 10})
    commitment = room.public("mb1")["shuffle"]
    listed = {t["table_id"]: t["player_page"] for t in room.client.get("/v1/tables").json()}
    assert listed["mb1"] == room.client.get("/v1/tables/mb1").json()["player_page"] == "/room/mb1"  # its adapter's
    assert set(commitment) == {"commitment"} and len(commitment["commitment"]) == 64
    room.act("ana", round_id, "sit", {"seat": "1"})
    room.act("binh", round_id, "sit", {"seat": "2"})
    room.act("ana", round_id, "ready")
    answer = room.act("binh", round_id, "ready")  # everyone is ready: the shuffle deals all 26 cards at once
    assert answer["phase"] == "arranging"
    public = room.public("mb1")
    assert public["shuffle"] == commitment and public["hands"]["1"]["cards"] == [None] * 13
    ana, binh = room.own("mb1", "1", "ana"), room.own("mb1", "2", "binh")
    assert None not in ana["hands"]["1"]["cards"] and ana["hands"]["2"]["cards"] == [None] * 13
    assert not set(ana["hands"]["1"]["cards"]) & set(binh["hands"]["2"]["cards"])
    for who, view in (("ana", ana), ("binh", binh)):
        chi1, chi2, chi3 = view["suggestion"]["chi"]
        room.act(who, round_id, "arrange", {"chi1": chi1, "chi2": chi2, "chi3": chi3})
    for _ in range(3):  # the showdown's windows (the controller closes them on time)
        assert "deck" not in room.public("mb1")["shuffle"]
        room.service.close_window(round_id, "test")
    final = room.public("mb1")
    assert final["phase"] == "settled"
    shuffle = verify(**final["shuffle"])  # the published deck and salt hash to the commitment
    deck = [str(card) for card in shuffle.deck]
    assert ana["hands"]["1"]["cards"] == deck[0:26:2] and binh["hands"]["2"]["cards"] == deck[1:26:2]
    checked = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", "-"], input=json.dumps(final["shuffle"]),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 0 and json.loads(checked.stdout)["verified"] is True, checked.stderr


def test_a_tien_len_room_dealt_online_starts_playing_when_seating_closes(room: Room) -> None:
    round_id = room.open("tl1", "tienlen", {"unit": 10, "hold_units": 80, "missed_turns": 1_000})
    room.act("ana", round_id, "sit", {"seat": "1"})
    room.act("binh", round_id, "sit", {"seat": "2"})
    applied = room.service.close_window(round_id, "test")  # seating ends: the shuffle deals 26 cards
    assert applied.phase in ("playing", "settled") and len(applied.cards) == 26
    assert not any(str(card) in json.dumps(applied.public) for card in applied.cards if card in applied.hidden)
    room.service.void(round_id, "test over", "op")
    shuffle = verify(**room.public("tl1")["shuffle"])  # a void round publishes its deck too
    assert list(applied.cards) == list(shuffle.deck[:26])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_full_online_mau_binh_hands_with_a_kick_and_a_leaver_settle_to_zero_within_the_holds(
    room: Room, players: int
) -> None:
    """``players`` play (with 2 or 3, one more sits but is never ready and is removed by the ready check), the
    last one leaves after the deal; the others arrange or run out of time. Money: what the hand's players win and
    pay sums to zero, nobody pays more than their hold, the removed player's hold is back at once."""
    kick = players < 4  # four seats: with four players nobody is left to kick
    names = ["ana", "binh", "chai", "dao"][: players + kick]
    for index, name in enumerate(names[2:], start=2):  # the fixture funded ana and binh
        room.tokens[name] = room.client.app.state.services.players.register(name)  # type: ignore[attr-defined]
        headers = room.auth("op") | {"Idempotency-Key": f"fund-{index}"}
        room.client.post(f"/v1/operator/players/{name}/deposit", json={"amount": 100_000}, headers=headers)
    table = f"mbk{players}"
    round_id = room.open(table, "maubinh", {"unit": 10})
    for seat, name in enumerate(names, start=1):
        room.act(name, round_id, "sit", {"seat": str(seat)})
    for name in names[:players]:
        room.act(name, round_id, "ready")
    if kick:
        assert room.public(table)["phase"] == "seating"
        room.service.close_window(round_id, "test")  # the ready check runs out: the one not ready is removed
        wallet = room.client.get("/v1/wallet", headers=room.auth(names[-1])).json()
        assert (wallet["balance"], wallet["held"]) == (100_000, 0)
    public = room.public(table)
    assert public["phase"] == "arranging" and len(public["seats"]) == players
    leaver = names[players - 1]
    room.act(leaver, round_id, "leave")
    first = names[0]
    chi1, chi2, chi3 = room.own(table, "1", first)["suggestion"]["chi"]
    room.act(first, round_id, "arrange", {"chi1": chi1, "chi2": chi2, "chi3": chi3})
    while room.public(table)["phase"] != "settled":
        room.service.close_window(round_id, "test")  # arranging runs out, then the showdown's three chi
    result = room.public(table)["result"]["units"]
    assert len(result) == players and sum(result.values()) == 0 and result[str(players)] < 0  # the leaver pays
    for seat, name in enumerate(names[:players], start=1):
        wallet = room.client.get("/v1/wallet", headers=room.auth(name)).json()
        assert wallet["held"] == 0 and wallet["balance"] == 100_000 + 10 * result[str(seat)]
        assert -10 * result[str(seat)] <= 1_620


def play_out(room: Room, round_id: str) -> dict[str, Any]:
    """Every turn runs out (the controller's timeouts) until the round is over; its public state then."""
    for _ in range(200):
        state = room.client.get(f"/v1/rounds/{round_id}", headers=room.auth("ana")).json()
        if state["phase"] in ("settled", "void"):
            return state
        room.service.close_window(round_id, "test")
    raise AssertionError(f"round {round_id} did not end")


def test_tien_len_rounds_go_on_from_the_last_winner_and_award_experience_points(room: Room) -> None:
    first = room.open("tl2", "tienlen", {"unit": 10, "hold_units": 80, "missed_turns": 1_000})
    for seat, name in (("1", "ana"), ("2", "binh")):
        room.act(name, first, "sit", {"seat": seat})
    room.service.close_window(first, "test")  # seating ends: dealt online
    ended = play_out(room, first)
    winner_seat = ended["result"]["winner"]
    winner = {"1": "ana", "2": "binh"}[winner_seat]
    for name in ("ana", "binh"):  # tier 1: one point each for a round played to its end
        assert room.client.get("/v1/me", headers=room.auth(name)).json()["experience"] == 1

    second = room.client.post("/v1/operator/tables/tl2/rounds", json={}, headers=room.auth("op")).json()["round_id"]
    with room.service.sessions() as session:
        opening = session.scalars(select(RoundLogEntry.command).where(RoundLogEntry.round_id == second)).all()
    carried = json.loads(opening[0])
    assert len(opening) == 1 and carried["type"] == "continue" and carried["previous_winner"] == winner
    for seat, name in (("1", "ana"), ("2", "binh")):
        room.act(name, second, "sit", {"seat": seat})
    engine = room.service.close_window(second, "test").engine.engine
    if not carried["after_instant_win"] and engine.result is None:  # neither round ended on an instant win
        assert not engine.starting_round and engine.leader == winner  # the previous winner leads, any card
    play_out(room, second)
    assert room.client.get("/v1/me", headers=room.auth("ana")).json()["experience"] == 2


def test_a_room_above_a_players_experience_refuses_them_with_both_numbers(room: Room) -> None:
    round_id = room.open("tl3", "tienlen", {"unit": 10, "hold_units": 80, "missed_turns": 1_000, "tier": 2})
    headers = room.auth("ana") | {"Idempotency-Key": "tier2"}
    response = room.client.post(f"/v1/rounds/{round_id}/sit", json={"seat": "1"}, headers=headers)
    assert response.status_code == 403 and response.json()["code"] == "room_tier_too_high"
    assert "100" in response.json()["message"] and "has 0" in response.json()["message"]
    assert room.client.get("/v1/wallet", headers=room.auth("ana")).json()["held"] == 0  # nothing taken


@pytest.mark.parametrize("players", [3, 4])
def test_tien_len_rooms_of_three_and_four_play_out_and_settle_every_payment(room: Room, players: int) -> None:
    names = ["ana", "binh", "chai", "dao"][:players]
    for index, name in enumerate(names[2:], start=2):  # the fixture funded ana and binh
        room.tokens[name] = room.client.app.state.services.players.register(name)  # type: ignore[attr-defined]
        headers = room.auth("op") | {"Idempotency-Key": f"tlfund-{index}"}
        room.client.post(f"/v1/operator/players/{name}/deposit", json={"amount": 100_000}, headers=headers)
    table = f"tln{players}"
    round_id = room.open(table, "tienlen", {"unit": 10, "hold_units": 80, "missed_turns": 1_000})
    for seat, name in enumerate(names, start=1):
        room.act(name, round_id, "sit", {"seat": str(seat)})
    room.service.close_window(round_id, "test")  # seating ends: 13 cards each from the shuffle
    own = room.own(table, "1", "ana")
    assert len(own["hands"]["1"]["cards"]) == 13 or own["phase"] == "settled"
    assert all(own["hands"][str(seat)]["cards"] == [None] * 13 for seat in range(2, players + 1)) or (
        own["phase"] == "settled"
    )
    ended = play_out(room, round_id)
    units = ended["result"]["units"]
    assert len(units) == players and sum(units.values()) == 0
    total = 0
    for seat, name in enumerate(names, start=1):
        wallet = room.client.get("/v1/wallet", headers=room.auth(name)).json()
        assert wallet["held"] == 0 and wallet["balance"] - wallet["debt"] == 100_000 + 10 * units[str(seat)]
        total += wallet["balance"] - wallet["debt"]
    assert total == 100_000 * players  # nothing made, nothing lost


def test_a_room_players_history_has_their_rounds_with_their_seat_and_net_in_money(room: Room) -> None:
    """History is every game's: a room's rounds are found by the seat holds, with the player's net in money."""
    round_id = room.open("tlh", "tienlen", {"unit": 10, "hold_units": 80, "missed_turns": 1_000})
    for seat, name in (("1", "ana"), ("2", "binh")):
        room.act(name, round_id, "sit", {"seat": seat})
    room.service.close_window(round_id, "test")
    ended = play_out(room, round_id)
    units = ended["result"]["units"]
    for seat, name in (("1", "ana"), ("2", "binh")):
        [line] = room.client.get("/v1/history", headers=room.auth(name)).json()
        assert (line["round_id"], line["game"], line["seats"]) == (round_id, "tienlen", [seat])
        assert line["phase"] == "settled"
        assert line["net"] == 10 * units[seat]
        wallet = room.client.get("/v1/wallet", headers=room.auth(name)).json()
        assert wallet["balance"] == 100_000 + line["net"]
        detail = room.client.get(f"/v1/history/{round_id}", headers=room.auth(name)).json()
        assert detail["state"]["result"]["units"] == units
    room.tokens["chai"] = room.client.app.state.services.players.register("chai")  # type: ignore[attr-defined]
    assert room.client.get(f"/v1/history/{round_id}", headers=room.auth("chai")).status_code == 404
    audit = room.client.get(f"/v1/operator/rounds/{round_id}", headers=room.auth("op")).json()
    assert [(w["player"], w["side"], w["seat"], w["stake"], w["net"]) for w in audit["wagers"]] == [
        ("ana", "seat", "1", 800, 10 * units["1"]),
        ("binh", "seat", "2", 800, 10 * units["2"]),
    ]  # the room's own stakes, through its adapter: each seat's hold and its holder's net
