"""The toy game through the whole stack: pty shoe → shoe daemon → broker → controller → round service →
ledger, and the API's per-game action, public state and private seat streams — no Pok Deng code involved."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.bus import topics
from tests.controller.stack import Studio
from tests.support import stream_in_background, wait_until
from tests.toy import highcard

assert highcard.GAME.name == "highcard"
SETTINGS = {"stake": 100, "seating_ms": 60_000}


@pytest.fixture
def toy(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[tuple[Studio, TestClient]]:
    studio = Studio(database, mqtt_url, tmp_path, windows=SETTINGS, game="highcard", games=highcard.GAMES)
    app = create_app(database, games=highcard.GAMES)
    try:
        with TestClient(app) as client:
            yield studio, client
    finally:
        studio.close()


def deal(studio: Studio, card: str, position: str) -> None:
    wait_until(lambda: (studio.dealer_view().get("next_card") or {}).get("position") == position, 10, position)
    studio.sim.deal(card)
    wait_until(lambda: position in studio.dealer_view().get("hands", {}), 10, f"{card} dealt to {position}")


def cards(view: dict[str, Any]) -> dict[str, str | None]:
    return {position: hand["cards"][0] for position, hand in view["hands"].items()}


def first_frame(client: TestClient, path: str, headers: dict[str, str]) -> dict[str, Any]:
    with client.stream("GET", f"{path}?changes=1", headers=headers) as response:
        assert response.status_code == 200, response.read()
        line = next(line for line in response.iter_lines() if line.startswith("data: "))
    frame: dict[str, Any] = json.loads(line[len("data: ") :])
    return frame


def test_a_toy_game_runs_from_the_shoe_to_the_ledger_with_private_seats(toy: tuple[Studio, TestClient]) -> None:
    studio, client = toy
    ana, binh = studio.token("ana"), studio.token("binh")
    round_id = studio.service.open_round(studio.table)
    sit = client.post(f"/v1/rounds/{round_id}/sit", json={"seat": "P1"}, headers=ana | {"Idempotency-Key": "s1"})
    assert sit.status_code == 201 and sit.json() == {"round_id": round_id, "seat": "P1", "held": 100}
    assert client.post(f"/v1/rounds/{round_id}/sit", json={"seat": "P2"}, headers=binh | {"Idempotency-Key": "s2"})
    taken = client.post(f"/v1/rounds/{round_id}/sit", json={"seat": "P2"}, headers=ana | {"Idempotency-Key": "s3"})
    assert taken.status_code == 403 and taken.json()["code"] == "not_your_decision"
    bets = client.post(f"/v1/rounds/{round_id}/bets", json={"bets": []}, headers=ana | {"Idempotency-Key": "s4"})
    assert bets.status_code in (404, 422)  # Pok Deng's action is not this game's
    assert studio.wallets.balance("ana")["held"] == 100

    studio.service.close_window(round_id, "test")  # the operator ends seating early
    deal(studio, "KH", "P1")  # face down: ana's
    deal(studio, "4C", "P2")  # face down: binh's

    state = client.get(f"/v1/tables/{studio.table}/current", headers=ana).json()
    assert cards(state) == {"P1": None, "P2": None} and "KH" not in json.dumps(state)
    assert cards(studio.dealer_view()) == {"P1": "received", "P2": "received"}
    mine = first_frame(client, f"/v1/tables/{studio.table}/seats/P1/stream", ana)
    assert mine["round_id"] == round_id and cards(mine) == {"P1": "KH", "P2": None}
    theirs = first_frame(client, f"/v1/tables/{studio.table}/seats/P2/stream", binh)
    assert cards(theirs) == {"P1": None, "P2": "4C"}
    refused = client.get(f"/v1/tables/{studio.table}/seats/P1/stream", headers=binh)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"

    deal(studio, "9S", "house")  # face up: every hand shows, the round settles
    wait_until(lambda: studio.dealer_view().get("phase") == "settled", 10, "settlement")
    assert (studio.wallets.balance("ana")["balance"], studio.wallets.balance("ana")["held"]) == (10_100, 0)
    assert studio.wallets.balance("binh")["balance"] == 9_900
    public = studio.latest(topics.round_state(studio.table))
    assert cards(public) == {"P1": "KH", "P2": "4C", "house": "9S"} and public["result"] == {"P1": 100, "P2": -100}
    for message in list(studio.views.messages):  # nothing published before the reveal named a face-down card
        payload = json.loads(message.payload)
        if payload.get("round_id") == round_id and payload.get("phase") != "settled":
            assert '"KH"' not in message.payload.decode() and '"4C"' not in message.payload.decode(), message.topic


def test_a_seat_stream_ends_when_its_token_is_revoked(toy: tuple[Studio, TestClient]) -> None:
    studio, client = toy
    ana = studio.token("ana")
    round_id = studio.service.open_round(studio.table)
    client.post(f"/v1/rounds/{round_id}/sit", json={"seat": "P1"}, headers=ana | {"Idempotency-Key": "s1"})
    ended = stream_in_background(client, f"/v1/tables/{studio.table}/seats/P1/stream", ana)
    services = client.app.state.services  # type: ignore[attr-defined]
    wait_until(lambda: len(services.seats.feed(f"{studio.table}/P1/ana").clients) == 1, 10, "ana's stream")
    time.sleep(0.5)
    assert not ended.is_set()
    services.players.revoke("ana")  # as the operator's token route does, in the API's own process
    revoked_at = time.monotonic()
    assert ended.wait(10), "the seat stream of a revoked token ends"
    assert time.monotonic() - revoked_at < 5
