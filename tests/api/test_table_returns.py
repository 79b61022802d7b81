"""The return-to-player guard on the operator's API: a Pok Deng table whose bets would return 100 % or more is
refused, stating the returns and the commission that would fix it, unless the operator explicitly allows it; the
same on a change of settings; the operator's table list shows each bet's return; rooms have no house bet."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Studio


def create(studio: Studio, body: dict[str, Any]) -> Any:
    return studio.client.post("/v1/operator/tables", json=body, headers=studio.auth("op"))


def listed(studio: Studio, table: str) -> dict[str, Any]:
    found: dict[str, Any] = studio.client.get("/v1/operator/tables", headers=studio.auth("op")).json()
    return next(t for t in found if t["table_id"] == table)


def test_a_table_returning_100_percent_or_more_needs_the_operators_explicit_word(studio: Studio) -> None:
    refused = create(studio, {"id": "r1"})  # the rules' defaults: no commission
    assert refused.status_code == 422 and refused.json()["code"] == "return_over_100"
    message = refused.json()["message"]
    assert "banker 100.9" in message and "95 % interval" in message, message
    assert "commission_bps of at least 175" in message and "allow_return_over_100" in message
    assert studio.client.get("/v1/tables/r1").status_code == 404, "nothing was created"

    assert create(studio, {"id": "r1", "settings": {"commission_bps": 500}}).status_code == 201
    table = listed(studio, "r1")
    assert table["allow_return_over_100"] is False
    bets = table["returns"]["bets"]
    assert set(bets) >= {"player", "banker", "insurance", "player A", "banker C"}
    assert all(bet["ci95"][1] < 1 for bet in bets.values()), bets
    group = table["returns"]["collusion"]  # the best any group reaches on one seat, under the rule the engine plays
    assert group["rule"] == "guarded" and 0.97 < group["worst_pair_rtp"] < 1
    assert group["worst_pair_rtp"] == bets["group on one seat"]["rtp"] >= group["at_even_stakes"]

    # every bet under 100 % at the table's threshold, but a decider playing their seat best is not
    skilled = create(studio, {"id": "r3", "settings": {"default_threshold": 5, "commission_bps": 100}})
    assert skilled.status_code == 422, skilled.json()
    message = skilled.json()["message"]
    assert "group on one seat 100.45% (exact)" in message and "banker" not in message
    assert "commission_bps of at least 175" in message

    change = "/v1/operator/tables/r1"
    back = studio.client.patch(change, json={"settings": {"commission_bps": 0}}, headers=studio.auth("op"))
    assert back.status_code == 422 and back.json()["code"] == "return_over_100"
    assert listed(studio, "r1")["settings"]["commission_bps"] == 500, "a refused change changes nothing"
    allowed = {"settings": {"commission_bps": 0}, "allow_return_over_100": True}
    assert studio.client.patch(change, json=allowed, headers=studio.auth("dealer")).status_code == 403
    done = studio.client.patch(change, json=allowed, headers=studio.auth("op"))
    assert done.status_code == 200 and done.json()["allow_return_over_100"] is True
    assert done.json()["returns"]["bets"]["banker"]["rtp"] > 1

    half = {"settings": {"commission_bps": 900}, "video_url_template": "ftp://nope"}
    assert studio.client.patch(change, json=half, headers=studio.auth("op")).status_code == 422
    assert listed(studio, "r1")["settings"]["commission_bps"] == 0, "a change refused in part changes nothing"

    assert create(studio, {"id": "r2", "allow_return_over_100": True}).status_code == 201
    room = create(studio, {"id": "m1", "game": "maubinh", "settings": {"unit": 10}})
    assert room.status_code == 201 and listed(studio, "m1")["returns"] is None  # players play each other
    assert studio.client.patch("/v1/operator/tables/nope", json={}, headers=studio.auth("op")).status_code == 404


def test_how_a_table_is_shown_is_set_and_checked_and_public(studio: Studio) -> None:
    def change(body: dict[str, Any]) -> Any:
        return studio.client.patch("/v1/operator/tables/t1", json=body, headers=studio.auth("op"))

    def shown(table: str) -> Any:
        return studio.client.get(f"/v1/tables/{table}").json()["display"]

    assert shown("t1") == {"overlay_delay_ms": 0, "language": "en", "result_pause_ms": None}  # the controller's own
    assert change({"overlay_delay_ms": 30_001}).status_code == 422
    bad = change({"language": "fr"})
    assert bad.status_code == 422 and "language" in bad.json()["message"]
    hasty = change({"result_pause_ms": 300, "language": "th"})
    assert hasty.status_code == 422 and "result_pause_ms" in hasty.json()["message"]
    assert shown("t1")["language"] == "en", "a change refused in part changes nothing"
    assert change({"overlay_delay_ms": 4_000, "language": "th", "result_pause_ms": 8_000}).json()["display"] == {
        "overlay_delay_ms": 4_000, "language": "th", "result_pause_ms": 8_000
    }  # fmt: skip
    assert shown("t1") == {"overlay_delay_ms": 4_000, "language": "th", "result_pause_ms": 8_000}
    assert change({"language": "vi"}).json()["display"]["result_pause_ms"] == 8_000  # left out: it stays
    back = change({"result_pause_ms": None})  # null: back to the controller's own pause
    assert back.status_code == 200 and back.json()["display"] == {
        "overlay_delay_ms": 4_000, "language": "vi", "result_pause_ms": None
    }  # fmt: skip
    change({"result_pause_ms": 8_000, "language": "th"})
    made = create(studio, {"id": "v1", "allow_return_over_100": True, "overlay_delay_ms": 2_500, "language": "vi",
                           "result_pause_ms": 6_000})  # fmt: skip
    assert made.status_code == 201
    assert shown("v1") == {"overlay_delay_ms": 2_500, "language": "vi", "result_pause_ms": 6_000}
