"""The public state stream (Server-Sent Events) and the controller notifications of the API."""

from __future__ import annotations

import json
import threading
import time

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.rounds.players import PlayerService
from tests.api.conftest import Studio


def test_the_public_stream_sends_the_state_now_and_again_on_each_change_without_login(studio: Studio) -> None:
    round_id = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("op")).json()[
        "round_id"
    ]

    def close_betting_soon() -> None:
        time.sleep(0.5)
        studio.client.post(f"/v1/operator/rounds/{round_id}/close-betting", headers=studio.auth("op"))

    threading.Thread(target=close_betting_soon, daemon=True).start()
    with studio.client.stream("GET", "/v1/tables/t1/state/stream?changes=2") as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[len("data: ") :]) for line in response.iter_lines() if line.startswith("data: ")]
    assert [(e["round_id"], e["phase"]) for e in events] == [(round_id, "betting"), (round_id, "dealing")]
    assert studio.client.get("/v1/tables/nope/state/stream").json()["code"] == "not_found"
    assert studio.client.get("/v1/tables/t1/state/stream?changes=0").status_code == 422


def test_every_change_to_a_round_through_the_api_notifies_the_controller(database: Engine) -> None:
    notified: list[str] = []
    app = create_app(database, notify=notified.append)
    players: PlayerService = app.state.services.players
    op = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    with TestClient(app) as client:
        client.post("/v1/operator/tables", json={"id": "t9", "currency": "THB", "settings": {}}, headers=op)
        round_id = client.post("/v1/operator/tables/t9/rounds", json={}, headers=op).json()["round_id"]
        client.post(f"/v1/operator/rounds/{round_id}/close-betting", headers=op)
        client.post(f"/v1/operator/rounds/{round_id}/cards", json={"card": "AS"}, headers=op)
        client.post(f"/v1/operator/rounds/{round_id}/cards", json={"card": "ZZ"}, headers=op)  # refused: no notice
        client.post(f"/v1/operator/rounds/{round_id}/void", json={"reason": "test"}, headers=op)
    assert notified == [round_id] * 4
