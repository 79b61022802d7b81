"""The public state stream (Server-Sent Events) and the controller notifications of the API."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.cards import Card
from services.rounds.players import PlayerService
from tests.api.conftest import Studio


def test_the_public_stream_sends_the_state_now_and_again_on_each_change_without_login(studio: Studio) -> None:
    round_id = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("op")).json()[
        "round_id"
    ]

    close_betting, events = f"/v1/operator/rounds/{round_id}/close-betting", []
    with studio.client.stream("GET", "/v1/tables/t1/state/stream?changes=2") as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
                if len(events) == 1:  # the stream has the state as it is now: change it
                    closed = studio.client.post(close_betting, headers=studio.auth("op"))
                    assert closed.status_code == 200, closed.text
    assert [(e["round_id"], e["phase"]) for e in events] == [(round_id, "betting"), (round_id, "dealing")]
    assert studio.client.get("/v1/tables/nope/state/stream").json()["code"] == "not_found"
    assert studio.client.get("/v1/tables/t1/state/stream?changes=0").status_code == 422


def test_every_change_to_a_round_through_the_api_notifies_the_controller(database: Engine) -> None:
    notified: list[str] = []
    app = create_app(database, notify=notified.append)
    players: PlayerService = app.state.services.players
    op = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    services = app.state.services
    with TestClient(app) as client:
        client.post(
            "/v1/operator/tables",
            json={"id": "t9", "currency": "THB", "settings": {}, "allow_return_over_100": True},
            headers=op,
        )
        round_id = client.post("/v1/operator/tables/t9/rounds", json={}, headers=op).json()["round_id"]
        client.post(f"/v1/operator/rounds/{round_id}/close-betting", headers=op)
        services.rounds.deal(round_id, Card.from_code("AS"), "shoe")  # the controller's own: it needs no notice
        refused = client.post(f"/v1/operator/rounds/{round_id}/close-betting", headers=op)  # refused: no notice
        assert refused.status_code == 409
        client.post(f"/v1/operator/rounds/{round_id}/void", json={"reason": "test"}, headers=op)
    assert notified == [round_id] * 3


def test_a_player_who_disconnects_mid_round_is_still_settled_and_sees_it_in_history(studio: Studio) -> None:
    round_id = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("op")).json()[
        "round_id"
    ]
    slip = {"bets": [{"side": "player", "seat": "A", "stake": 100}]}
    assert studio.post("ana", f"/v1/rounds/{round_id}/bets", slip, "d1").status_code == 201  # type: ignore[attr-defined]
    with studio.client.stream("GET", "/v1/tables/t1/state/stream") as response:  # ana watches, then her line drops
        next(line for line in response.iter_lines() if line.startswith("data: "))
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in "5H 2D KD 9S TH 4S 3C 5C".split():
        studio.shoe(round_id, code)
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    timeout = studio.post("dealer", f"/v1/operator/rounds/{round_id}/timeout", {"seat": "A"})  # ana is gone
    assert timeout.status_code == 200  # type: ignore[attr-defined]
    for code in ("9D", "2S"):  # C draws on 3, the banker on 4
        studio.shoe(round_id, code)
    history = studio.client.get("/v1/history", headers=studio.auth("ana")).json()
    assert [(h["round_id"], h["phase"]) for h in history] == [(round_id, "settled")]
    net = history[0]["wagers"][0]["net"]
    wallet = studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()
    assert (wallet["balance"], wallet["held"]) == (10_000 + net, 0)
