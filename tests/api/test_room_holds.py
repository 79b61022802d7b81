"""A Mậu Binh seat holds the largest loss of a hand with the players actually seated: two players hold one opponent's
worth each, a third sitting down raises every seat, a leave before the deal lowers them again, and a seated player
whose balance cannot cover the larger hand is out before the deal — told so, their hold back, no one else's touched."""

from __future__ import annotations

from typing import Any

from services.games.maubinh.settings import MauBinhSettings
from tests.api.conftest import Studio

UNIT = 10
PER_OPPONENT = MauBinhSettings().largest_loss_per_opponent * UNIT  # 54 units: 540


def room(studio: Studio) -> str:
    body = {"id": "m1", "game": "maubinh", "settings": {"unit": UNIT, "ready_ms": 60_000}}
    assert studio.client.post("/v1/operator/tables", json=body, headers=studio.auth("op")).status_code == 201
    studio.services.players.assign("m1", "dealer")
    opened = studio.client.post("/v1/operator/tables/m1/rounds", json={}, headers=studio.auth("dealer"))
    assert opened.status_code == 201, opened.text
    round_id: str = opened.json()["round_id"]
    return round_id


def held(studio: Studio, who: str) -> int:
    wallet: dict[str, int] = studio.client.get("/v1/wallet", headers=studio.auth(who)).json()
    return wallet["held"]


def mine(studio: Studio, who: str) -> dict[str, Any]:
    found: dict[str, Any] = studio.client.get("/v1/tables/m1/me", headers=studio.auth(who)).json()
    return found


def test_each_seat_holds_the_largest_loss_with_the_players_seated(studio: Studio) -> None:
    round_id = room(studio)
    sit = studio.post("ana", f"/v1/rounds/{round_id}/sit", {"seat": "1"}, "s1")
    assert sit.json()["held"] == PER_OPPONENT  # type: ignore[attr-defined]
    studio.post("binh", f"/v1/rounds/{round_id}/sit", {"seat": "2"}, "s2")
    assert held(studio, "ana") == held(studio, "binh") == PER_OPPONENT
    third = studio.post("chai", f"/v1/rounds/{round_id}/sit", {"seat": "3"}, "s3")
    assert third.json()["held"] == 2 * PER_OPPONENT  # type: ignore[attr-defined]
    assert [held(studio, p) for p in ("ana", "binh", "chai")] == [2 * PER_OPPONENT] * 3
    assert studio.post("chai", f"/v1/rounds/{round_id}/leave").status_code == 200  # type: ignore[attr-defined]
    assert [held(studio, p) for p in ("ana", "binh", "chai")] == [PER_OPPONENT, PER_OPPONENT, 0]
    stakes = studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op")).json()["wagers"]
    assert sorted((s["seat"], s["player"], s["stake"]) for s in stakes) == [
        ("1", "ana", PER_OPPONENT), ("2", "binh", PER_OPPONENT), ("3", "chai", 2 * PER_OPPONENT),
    ]  # fmt: skip


def test_a_seated_player_who_cannot_cover_a_larger_hand_is_out_before_the_deal(studio: Studio) -> None:
    token = studio.services.players.register("dan")
    studio.tokens["dan"] = token
    funded = studio.post("op", "/v1/operator/players/dan/deposit", {"amount": PER_OPPONENT + 100}, "fund-dan")
    assert funded.status_code == 200  # type: ignore[attr-defined]
    round_id = room(studio)
    studio.post("ana", f"/v1/rounds/{round_id}/sit", {"seat": "1"}, "s1")
    assert studio.post("dan", f"/v1/rounds/{round_id}/sit", {"seat": "2"}, "s2").status_code == 201  # type: ignore[attr-defined]
    assert held(studio, "dan") == PER_OPPONENT and mine(studio, "dan")["you"]["seats"] == ["2"]

    # chai sits: a hand of three needs two opponents' worth; dan's balance holds one and a little
    assert studio.post("chai", f"/v1/rounds/{round_id}/sit", {"seat": "3"}, "s3").status_code == 201  # type: ignore[attr-defined]
    assert held(studio, "dan") == 0
    assert mine(studio, "dan")["you"] == {"seats": [], "unfunded": {"seat": "2", "players": 3}}
    assert mine(studio, "ana")["you"]["unfunded"] is None, "said only to the one it concerns"
    assert [held(studio, p) for p in ("ana", "chai")] == [PER_OPPONENT] * 2, "two are left: one opponent each"
    state = studio.client.get("/v1/tables/m1/current", headers=studio.auth("binh")).json()
    assert state["seats"] == ["1", "3"], state

    # a newcomer who cannot cover their own hold is refused, and nothing else moves
    poor = studio.post("dan", f"/v1/rounds/{round_id}/sit", {"seat": "4"}, "s4")
    assert poor.status_code == 409 and poor.json()["code"] == "insufficient_funds"  # type: ignore[attr-defined]
    assert "1080 needed" in poor.json()["message"]  # type: ignore[attr-defined]
    assert [held(studio, p) for p in ("ana", "chai", "dan")] == [PER_OPPONENT, PER_OPPONENT, 0]
