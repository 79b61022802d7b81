"""Rooms dealt from the studio's shoe with more than two players: the dealer deals 13 cards each in seat order as
the console asks, the controller's clock runs every window (arranging and the showdown, or the turns), and the
hand settles through the ledger with every seat's money accounted for."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from hardware.sim import shuffled_deck
from services.api.app import create_app
from tests.controller.stack import Studio
from tests.support import wait_until

GAMES = {
    "maubinh": {"unit": 10, "ready_ms": 60_000, "arranging_ms": 300, "showdown_ms": 100},
    "tienlen": {"unit": 10, "hold_units": 80, "seating_ms": 60_000, "turn_ms": 50},
}


@pytest.mark.parametrize(("game", "players"), [("maubinh", 3), ("maubinh", 4), ("tienlen", 4)])
def test_a_full_room_dealt_from_the_shoe_settles_every_seat(
    game: str, players: int, database: Engine, mqtt_url: str, tmp_path: Path
) -> None:
    studio = Studio(database, mqtt_url, tmp_path, windows=GAMES[game], game=game)
    try:
        names = ["ana", "binh", "chai", "dao"][:players]
        tokens = {name: studio.token(name) for name in names}
        round_id = studio.service.open_round(studio.table)
        with TestClient(create_app(database)) as client:
            for seat, name in enumerate(names, start=1):
                headers = tokens[name] | {"Idempotency-Key": f"sit-{seat}"}
                taken = client.post(f"/v1/rounds/{round_id}/sit", json={"seat": str(seat)}, headers=headers)
                assert taken.status_code == 201, taken.text
            for name in names if game == "maubinh" else ():  # all seated first: the deal starts once all are ready
                ready = client.post(f"/v1/rounds/{round_id}/ready", json={}, headers=tokens[name])
                assert ready.status_code == 200, ready.text
                assert ready.json()["events"][0] == "Readied"  # each event named by its kind
            if game == "maubinh":
                assert ready.json()["events"] == ["Readied", "PhaseChanged"] and ready.json()["phase"] == "dealing"
        if game == "tienlen":
            studio.service.close_window(round_id, "test")  # seating ends
        deck = iter(shuffled_deck(seed=players))
        studio.deal_until(deck, round_id, lambda view: view.get("phase") not in ("seating", "dealing"), timeout=60)
        assert len(studio.service.seats(round_id)) == players
        wait_until(lambda: studio.dealer_view().get("phase") == "settled", 60, "the hand to settle")
        units = studio.latest(f"studio/v1/tables/{studio.table}/round/state")["result"]["units"]
        assert len(units) == players and sum(units.values()) == 0
        for seat, name in enumerate(names, start=1):
            wallet = studio.wallets.balance(name)
            assert wallet["held"] == 0 and wallet["balance"] - wallet["debt"] == 10_000 + 10 * units[str(seat)]
    finally:
        studio.close()
