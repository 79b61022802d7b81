"""The betting API over HTTP: a whole round, object-level access, errors as JSON with codes."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Studio

SPEC_CARDS = "5H 2D KD 9S TH 4S 3C 5C".split()


def open_round(studio: Studio) -> str:
    response = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer"))
    assert response.status_code == 201, response.text
    round_id: str = response.json()["round_id"]
    return round_id


def bet(studio: Studio, who: str, round_id: str, bets: list[dict[str, Any]], key: str) -> Any:
    return studio.post(who, f"/v1/rounds/{round_id}/bets", {"bets": bets}, key)


def card(studio: Studio, round_id: str, code: str) -> Any:
    return studio.shoe(round_id, code)


def test_a_round_over_http_never_shows_the_hidden_card_and_settles_into_history(studio: Studio) -> None:
    assert studio.client.get("/v1/tables/t1").json()["player_page"] == "/play/t1"  # Pok Deng's page, its adapter says
    round_id = open_round(studio)
    response = bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "b1")
    assert response.status_code == 201 and response.json()["balance"] == 9_700
    assert bet(studio, "binh", round_id, [{"side": "banker", "seat": "B", "stake": 50}], "b2").status_code == 201
    assert studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting").status_code == 200  # type: ignore[attr-defined]
    for code in SPEC_CARDS:
        card(studio, round_id, code)
        state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("binh")).json()
        assert "5C" not in str(state)  # the banker's face-down card
        assert studio.client.get("/v1/tables/t1/current", headers=studio.auth("chai")).json() == state
    assert state["hands"]["banker"] == {"cards": ["9S", None], "points": None}
    assert state["phase"] == "insurance"
    response = studio.post("ana", f"/v1/rounds/{round_id}/insurance", {"amount": 100}, "i1")
    assert response.status_code == 201 and response.json()["balance"] == 9_600
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    response = studio.post("binh", f"/v1/rounds/{round_id}/decisions", {"seat": "A", "choice": "draw"})
    assert response.status_code == 403 and response.json()["code"] == "not_your_decision"  # type: ignore[attr-defined]
    response = studio.post("ana", f"/v1/rounds/{round_id}/decisions", {"seat": "A", "choice": "draw"})
    assert response.status_code == 200  # type: ignore[attr-defined]
    card(studio, round_id, "2H")  # A: 5H TH 2H, 7 points, three hearts ×3
    # B has no player-side wager: 6 points stands by the table default; C draws on 3; banker draws on 4.
    for code in ("9D", "2S"):
        card(studio, round_id, code)
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["phase"] == "settled" and state["hands"]["banker"]["cards"] == ["9S", "5C", "2S"]
    assert "players" not in state["result"] and "wagers" not in state["result"]
    wallet = studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()
    assert wallet == {"player": "ana", "currency": "THB", "balance": 10_200, "held": 0, "debt": 0}
    history = studio.client.get("/v1/history", headers=studio.auth("ana")).json()
    assert [(h["round_id"], h["wagers"][0]["net"], h["insurance"]) for h in history] == [(round_id, 300, 100)]
    detail = studio.client.get(f"/v1/history/{round_id}", headers=studio.auth("binh")).json()
    assert [w["net"] for w in detail["wagers"]] == [0] and detail["state"]["result"]["outcomes"]["B"] == "tie"
    statement = studio.client.get("/v1/wallet/statement?limit=3", headers=studio.auth("ana")).json()
    assert [line["kind"] for line in statement] == ["win", "release", "hold"]  # lost insurance: hold → house
    assert [line["amount"] for line in statement] == [300, 300, -100]


def test_players_only_ever_see_their_own_money_and_history(studio: Studio) -> None:
    round_id = open_round(studio)
    bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "b1")
    response = studio.client.get(f"/v1/history/{round_id}", headers=studio.auth("binh"))
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert studio.client.get("/v1/history", headers=studio.auth("binh")).json() == []
    response = studio.client.get("/v1/operator/players/ana/wallet", headers=studio.auth("binh"))
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    response = studio.post("binh", "/v1/operator/players/binh/deposit", {"amount": 5}, "steal")
    assert response.status_code == 403  # type: ignore[attr-defined]
    response = studio.client.get("/v1/wallet")
    assert response.status_code == 401 and response.json()["code"] == "unauthorized"
    response = studio.client.get("/v1/wallet", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    response = studio.client.get("/v1/wallet", headers=studio.auth("op"))
    assert response.status_code == 403  # operators have no wallet of their own here


def test_refusals_are_json_with_stable_codes_and_write_nothing(studio: Studio) -> None:
    round_id = open_round(studio)
    both_sides = [{"side": "player", "seat": "A", "stake": 10}, {"side": "banker", "seat": "B", "stake": 10}]
    no_key = {"bets": [{"side": "player", "seat": "A", "stake": 10}]}
    too_much = [{"side": "player", "seat": "A", "stake": 4000}]
    cases = [
        (bet(studio, "ana", round_id, too_much, "k1"), 409, "insufficient_funds"),
        (bet(studio, "ana", round_id, [{"side": "player", "seat": "D", "stake": 10}], "k2"), 422, "invalid_request"),
        (bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": "10"}], "k3"), 422, "invalid_request"),
        (bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 0}], "k4"), 422, "invalid_request"),
        (bet(studio, "ana", "t1-99", [{"side": "player", "seat": "A", "stake": 10}], "k5"), 404, "not_found"),
        (bet(studio, "ana", round_id, both_sides, "k6"), 422, "invalid_wager"),
        (studio.post("ana", f"/v1/rounds/{round_id}/bets", no_key), 422, "invalid_request"),
        (studio.post("ana", f"/v1/rounds/{round_id}/insurance", {"amount": 10}, "k7"), 409, "not_expected_now"),
    ]  # fmt: skip
    for response, status, code in cases:
        assert (response.status_code, response.json()["code"]) == (status, code), response.text
        assert response.json()["message"]
    assert studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()["balance"] == 10_000
    raw = studio.client.post(
        f"/v1/rounds/{round_id}/bets",
        content=b"{not json",
        headers=studio.auth("ana") | {"Idempotency-Key": "k8", "Content-Type": "application/json"},
    )
    assert raw.status_code == 422 and raw.json()["code"] == "invalid_request"


def test_late_bets_and_idempotent_retries(studio: Studio) -> None:
    round_id = open_round(studio)
    slip = [{"side": "banker", "seat": "C", "stake": 100}]
    first = bet(studio, "chai", round_id, slip, "same").json()
    assert bet(studio, "chai", round_id, slip, "same").json() == first
    response = bet(studio, "chai", round_id, [{"side": "banker", "seat": "C", "stake": 99}], "same")
    assert response.status_code == 422 and response.json()["code"] == "idempotency_conflict"
    studio.clock.advance(seconds=15)
    response = bet(studio, "chai", round_id, slip, "late")
    assert response.status_code == 409 and response.json()["code"] == "betting_closed"
    assert studio.client.get("/v1/wallet", headers=studio.auth("chai")).json()["balance"] == 9_700


def test_threshold_identity_health_and_openapi(studio: Studio) -> None:
    response = studio.client.put("/v1/me/threshold", json={"threshold": 2}, headers=studio.auth("ana"))
    assert response.json() == {"id": "ana", "role": "player", "threshold": 2, "experience": 0}  # Tiến Lên ĐKN
    studio.clock.advance(seconds=1)
    assert studio.client.get("/v1/me", headers=studio.auth("ana")).json()["threshold"] == 2
    response = studio.client.put("/v1/me/threshold", json={"threshold": 6}, headers=studio.auth("ana"))
    assert response.status_code == 422
    assert studio.client.get("/healthz").json() == {"status": "ok"}
    assert studio.client.get("/readyz").json() == {"status": "ready"}
    paths = studio.client.get("/openapi.json").json()["paths"]
    assert {"/v1/rounds/{round_id}/bets", "/v1/history", "/v1/operator/rounds/{round_id}/void"} <= set(paths)


def test_each_refusal_answers_as_its_kind_with_its_own_code(studio: Studio) -> None:
    """An empty slip is a malformed request, not a closed window; a second round while one runs is a conflict."""
    round_id = open_round(studio)
    empty = bet(studio, "ana", round_id, [], "empty")
    assert empty.status_code == 422 and empty.json()["code"] == "invalid_request"
    assert empty.json()["message"].startswith("body.bets: ")
    again = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer"))
    assert again.status_code == 409 and again.json() == {
        "code": "round_in_progress",
        "message": f"table t1: round {round_id} is not finished yet",
    }
