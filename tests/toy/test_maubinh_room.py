"""A Mậu Binh room on the studio's core: seats with holds, the ready check, the 13-card deal from the shoe, private
hands with the suggested arrangement, arranging through the API and by the controller's timeout, the showdown
chi by chi, payments settled in the ledger."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from hardware.sim import shuffled_deck
from services.api.app import create_app
from services.games.maubinh.room import RoomSettings
from tests.controller.stack import Studio
from tests.support import wait_until

SETTINGS = {"unit": 10, "ready_ms": 60_000, "arranging_ms": 1_500, "showdown_ms": 200}
PER_OPPONENT = RoomSettings(unit=10).hold // 3  # 54 units a seat holds per other player seated: 540


@pytest.fixture
def room(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[tuple[Studio, TestClient]]:
    studio = Studio(database, mqtt_url, tmp_path, windows=SETTINGS, game="maubinh")
    with TestClient(create_app(database)) as client:
        yield studio, client
    studio.close()


def test_a_room_is_dealt_from_the_shoe_arranged_shown_chi_by_chi_and_settled(room: tuple[Studio, TestClient]) -> None:
    studio, client = room
    ana, binh, chai = studio.token("ana"), studio.token("binh"), studio.token("chai")
    round_id = studio.service.open_round(studio.table)

    def act(who: dict[str, str], action: str, body: object = None, key: str = "") -> dict[str, object]:
        headers = who | ({"Idempotency-Key": key} if key else {})
        response = client.post(f"/v1/rounds/{round_id}/{action}", json=body or {}, headers=headers)
        assert response.status_code in (200, 201), response.text
        answer: dict[str, object] = response.json()
        return answer

    for seat, who, held in (("1", ana, 1), ("2", binh, 1), ("3", chai, 2)):  # a third raises every seat's hold
        assert act(who, "sit", {"seat": seat}, f"sit-{seat}")["held"] == held * PER_OPPONENT
    assert [studio.wallets.balance(p)["held"] for p in ("ana", "binh", "chai")] == [2 * PER_OPPONENT] * 3
    act(chai, "leave")  # before the deal: the seat is free and the hold comes back at once
    assert studio.wallets.balance("chai") | {"player": ""} == {
        "player": "", "currency": "THB", "balance": 10_000, "held": 0, "debt": 0,
    }  # fmt: skip
    assert studio.wallets.balance("ana")["held"] == PER_OPPONENT, "two are left: back to one opponent's worth"
    act(ana, "ready")
    act(binh, "ready")  # everyone seated is ready: the deal starts
    deck = shuffled_deck(seed=11)
    studio.deal_until(iter(deck), round_id, lambda view: view.get("phase") == "arranging")

    public = client.get(f"/v1/tables/{studio.table}/current", headers=chai).json()
    assert public["phase"] == "arranging" and not any(code in json.dumps(public) for code in deck[:26])
    with client.stream("GET", f"/v1/tables/{studio.table}/seats/1/stream?changes=1", headers=ana) as response:
        own = json.loads(next(line for line in response.iter_lines() if line.startswith("data: "))[6:])
    assert own["hands"]["1"]["cards"] == deck[0:26:2] and own["hands"]["2"]["cards"] == [None] * 13
    assert client.get(f"/v1/tables/{studio.table}/seats/1/stream", headers=binh).status_code == 403
    chi1, chi2, chi3 = own["suggestion"]["chi"]
    wrong = client.post(f"/v1/rounds/{round_id}/arrange", json={"chi1": chi1, "chi2": chi2, "chi3": chi3}, headers=binh)
    assert wrong.status_code == 422 and "13 cards dealt" in wrong.json()["message"]  # not binh's cards
    act(ana, "arrange", {"chi1": chi1, "chi2": chi2, "chi3": chi3})

    # binh never submits: arranging runs out, he gets the auto-arrangement; the showdown shows chi 1, 2, 3
    shown: list[int] = []

    def settled() -> bool:
        view = studio.latest(f"studio/v1/tables/{studio.table}/round/state")
        if view.get("phase") == "showdown" and view["revealed"] not in shown:
            shown.append(view["revealed"])
            revealed = {code for chis in view["chi"].values() for part in chis for code in part["cards"]}
            assert len(revealed) == {1: 10, 2: 20, 3: 26}[view["revealed"]]  # two hands of 5, 5 and 3 cards
            hands = json.dumps(view["hands"])
            assert not any(code in hands for code in deck[:26] if code not in revealed)  # unshown chi stay hidden
        return view.get("phase") == "settled"

    wait_until(settled, 30, "the showdown to end")
    assert shown == [1, 2, 3]
    result = studio.latest(f"studio/v1/tables/{studio.table}/round/state")["result"]
    units = result["units"]
    assert set(units) == {"1", "2"} and sum(units.values()) == 0
    balances = {p: studio.wallets.balance(p) for p in ("ana", "binh")}
    assert balances["ana"]["balance"] == 10_000 + 10 * units["1"] and balances["ana"]["held"] == 0
    assert balances["binh"]["balance"] == 10_000 + 10 * units["2"] and balances["binh"]["held"] == 0
