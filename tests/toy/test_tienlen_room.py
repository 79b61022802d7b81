"""A Tiến Lên room on the studio's core: seats with holds, the 13-card deal from the shoe, private hands, turns
played through the API and by the controller's timeouts, payments settled in the ledger."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from hardware.sim import shuffled_deck
from services.api.app import create_app
from services.games.tienlen import cards as tl
from tests.controller.stack import Studio
from tests.support import wait_until

SETTINGS = {"unit": 10, "hold_units": 80, "seating_ms": 60_000, "turn_ms": 150}


@pytest.fixture
def room(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[tuple[Studio, TestClient]]:
    studio = Studio(database, mqtt_url, tmp_path, windows=SETTINGS, game="tienlen")
    with TestClient(create_app(database)) as client:
        yield studio, client
    studio.close()


def test_a_two_player_room_is_dealt_from_the_shoe_played_out_and_settled(room: tuple[Studio, TestClient]) -> None:
    studio, client = room
    ana, binh = studio.token("ana"), studio.token("binh")
    round_id = studio.service.open_round(studio.table)
    for seat, who, key in (("1", ana, "s1"), ("2", binh, "s2")):
        taken = client.post(f"/v1/rounds/{round_id}/sit", json={"seat": seat}, headers=who | {"Idempotency-Key": key})
        assert taken.status_code == 201 and taken.json()["held"] == 800
    studio.service.close_window(round_id, "test")  # the operator starts the deal
    deck = shuffled_deck(seed=7)
    for index in range(26):  # the dealer deals as the console asks: seat 1, seat 2, seat 1, …
        wait_until(lambda i=index: (studio.dealer_view().get("next_card") or {}).get("index") == i // 2
                   and (studio.dealer_view().get("next_card") or {}).get("position") == str(1 + i % 2), 10,
                   f"card {index}")  # fmt: skip
        studio.sim.deal(deck[index])
    wait_until(lambda: studio.dealer_view().get("phase") in ("playing", "settled"), 10, "the deal to end")
    ana_hand = sorted(deck[0:26:2], key=lambda code: tl.parse([code])[0])
    public = client.get(f"/v1/tables/{studio.table}/current", headers=ana).json()
    assert public["hands"]["1"]["cards"] in ([None] * 13, ana_hand)  # hidden, unless an instant win ended it
    if public["phase"] == "playing":
        assert not any(code in json.dumps(public) for code in deck[:26])
        with client.stream("GET", f"/v1/tables/{studio.table}/seats/1/stream?changes=1", headers=ana) as response:
            frame = json.loads(next(line for line in response.iter_lines() if line.startswith("data: "))[6:])
        assert frame["hands"]["1"]["cards"] == ana_hand and frame["hands"]["2"]["cards"] == [None] * 13
        assert client.get(f"/v1/tables/{studio.table}/seats/1/stream", headers=binh).status_code == 403
        wrong = client.post(f"/v1/rounds/{round_id}/play", json={"cards": ["2H", "2D"]}, headers=binh)
        assert wrong.status_code in (403, 409, 422)  # not binh's turn, or not binh's cards: refused, nothing changed
    # the turns run out one after another: each leader plays their lowest card, the other passes
    wait_until(lambda: studio.dealer_view().get("phase") == "settled", 60, "the round to end")
    result = studio.dealer_view()["result"]
    units = result["units"]
    assert sum(units.values()) == 0 and result["winner"] in ("1", "2")
    balances = {p: studio.wallets.balance(p) for p in ("ana", "binh")}
    assert balances["ana"]["balance"] - 10_000 == 10 * units["1"] or balances["ana"]["debt"] > 0
    assert balances["binh"]["held"] == balances["ana"]["held"] == 0
    total = sum(b["balance"] - b["debt"] for b in balances.values())
    assert total == 20_000  # one player's loss is the other's win: nothing lost, nothing made
