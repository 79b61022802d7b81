"""A toy house-banked game (over/under) on the house games' shared bet path, through the API: slips held atomically
and idempotent, refused whole by the game's own rules, closed into the round's log, settled into each wager's net —
and the player's history, their view and the operator's audit read its wagers, all without any Pok Deng code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.cards import Card
from services.games.base import GameError
from services.rounds.clock import ManualClock
from services.rounds.house import HouseAdapter
from services.rounds.players import PlayerService
from tests.toy import overunder

TABLE = "ou1"


class Table:
    def __init__(self, client: TestClient, tokens: dict[str, str]) -> None:
        self.client, self.tokens = client, tokens
        self.rounds = client.app.state.services.rounds  # type: ignore[attr-defined]
        self.wallets = client.app.state.services.wallets  # type: ignore[attr-defined]

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def bet(self, who: str, round_id: str, key: str, *bets: tuple[str, int]) -> Any:
        body = {"bets": [{"side": side, "stake": stake} for side, stake in bets]}
        headers = self.auth(who) | {"Idempotency-Key": key}
        return self.client.post(f"/v1/rounds/{round_id}/bets", json=body, headers=headers)

    def money(self, who: str) -> tuple[int, int]:
        balance = self.wallets.balance(who)
        return balance["balance"], balance["held"]


@pytest.fixture
def table(database: Engine) -> Iterator[Table]:
    app = create_app(database, ManualClock(), games=overunder.GAMES)
    players: PlayerService = app.state.services.players
    tokens = {"op": players.register("op", "operator")} | {name: players.register(name) for name in ("ana", "binh")}
    with TestClient(app) as client:
        table = Table(client, tokens)
        made = client.post("/v1/operator/tables", json={"id": TABLE, "game": "overunder"}, headers=table.auth("op"))
        assert made.status_code == 201, made.text
        for name in ("ana", "binh"):
            deposit = client.post(f"/v1/operator/players/{name}/deposit", json={"amount": 1_000},
                                  headers=table.auth("op") | {"Idempotency-Key": f"fund-{name}"})  # fmt: skip
            assert deposit.status_code == 200, deposit.text
        yield table


def test_a_house_game_takes_slips_settles_them_and_shows_them_through_the_shared_path(table: Table) -> None:
    round_id = table.rounds.open_round(TABLE)
    first = table.bet("ana", round_id, "a1", ("over", 100))
    assert first.status_code == 201, first.text
    wager = first.json()["wagers"][0]
    placed = {"wager_id": wager["wager_id"], "side": "over", "seat": "", "stake": 100}
    assert first.json() == {"round_id": round_id, "balance": 900, "wagers": [placed]}
    again = table.bet("ana", round_id, "a1", ("over", 100))  # the same key: the same answer, held once
    assert again.json() == first.json() and table.money("ana") == (900, 100)
    raised = table.bet("ana", round_id, "a2", ("over", 50))  # a bet on a spot already taken raises its wager
    assert raised.json()["wagers"] == [{"wager_id": wager["wager_id"], "side": "over", "seat": "", "stake": 150}]
    assert table.bet("binh", round_id, "b1", ("under", 200)).status_code == 201

    both = table.bet("ana", round_id, "a3", ("under", 10))  # the game's own rule: one side only
    assert both.status_code == 422 and "one side only" in both.json()["message"], both.text
    over = table.bet("binh", round_id, "b2", ("under", 10), ("under", 9_900))  # the limit: the whole slip refused
    assert over.status_code == 422 and "outside the table's limits" in over.json()["message"], over.text
    assert table.money("ana") == (850, 150) and table.money("binh") == (800, 200)  # nothing of a refused slip held

    pokdeng = {"bets": [{"side": "player", "seat": "A", "stake": 10}]}  # another house game's slip
    theirs = table.client.post(f"/v1/rounds/{round_id}/bets", json=pokdeng,
                               headers=table.auth("ana") | {"Idempotency-Key": "a4"})  # fmt: skip
    assert theirs.status_code == 422 and theirs.json()["message"] == (
        "body.bets.0.side: Input should be 'over' or 'under'; body.bets.0.seat: Extra inputs are not permitted "
        f"(round {round_id} plays overunder)"
    ), theirs.text
    neither = table.bet("ana", round_id, "a5", ("sideways", 10))
    assert neither.status_code == 422 and "bets.0.side" in neither.json()["message"]

    you = table.client.get(f"/v1/tables/{TABLE}/me", headers=table.auth("ana")).json()
    assert [(w["side"], w["stake"], w["net"]) for w in you["you"]["wagers"]] == [("over", 150, None)]

    table.rounds.close_window(round_id, "test")  # betting ends: the wagers enter the round's log
    late = table.bet("binh", round_id, "b3", ("under", 10))
    assert late.status_code == 409 and "betting is closed" in late.json()["message"]
    settled = table.rounds.deal(round_id, Card.from_code("9H"), "shoe")  # over wins
    assert settled.phase == "settled"
    assert table.money("ana") == (1_150, 0) and table.money("binh") == (800, 0)

    history = table.client.get(f"/v1/history/{round_id}", headers=table.auth("ana")).json()
    assert [(w["side"], w["stake"], w["net"]) for w in history["wagers"]] == [("over", 150, 150)]
    listed = table.client.get("/v1/history", headers=table.auth("binh")).json()
    assert [entry["round_id"] for entry in listed] == [round_id]
    audit = table.client.get(f"/v1/operator/rounds/{round_id}", headers=table.auth("op")).json()
    assert sorted((w["player"], w["side"], w["stake"], w["net"]) for w in audit["wagers"]) == [
        ("ana", "over", 150, 150),
        ("binh", "under", 200, -200),
    ]


def test_a_house_adapter_is_only_for_a_game_the_house_banks() -> None:
    class Room(overunder.OverUnder):
        name = "room"
        house_banked = False

    with pytest.raises(GameError, match="'room' is not banked by the house"):
        HouseAdapter(Room())
