"""A player's own view of a table (what the player's page reads), the table's page settings, and history
with the round's hands, net and corrections."""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.api.conftest import Studio
from tests.api.test_api import SPEC_CARDS, bet, card, open_round

FACE_DOWN = "5C"  # the banker's second card in SPEC_CARDS


def yours(studio: Studio, who: str) -> dict[str, Any]:
    response = studio.client.get("/v1/tables/t1/me", headers=studio.auth(who))
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    assert FACE_DOWN not in json.dumps(view) or view["phase"] == "settled"
    return view


def test_the_table_tells_the_page_its_chips_and_stream_and_checks_them(studio: Studio) -> None:
    table = studio.client.get("/v1/tables/t1").json()  # no login needed, like the table list
    assert table["game"] == "pokdeng" and table["settings"]["min_stake"] == 1
    assert table["page"] == {"chips": [200, 500, 1_000, 2_000, 5_000, 10_000], "stream_url": ""}  # around 1 … 10⁶
    settings = {"min_stake": 10, "max_stake": 5_000, "chips": [10, 100, 1000], "stream_url": "https://cdn.local/t2"}
    made = studio.client.post(
        "/v1/operator/tables",
        json={"id": "t2", "settings": settings, "allow_return_over_100": True},
        headers=studio.auth("op"),
    )
    assert made.status_code == 201, made.text
    assert studio.client.get("/v1/tables/t2").json()["page"] == {
        "chips": [10, 100, 1000],
        "stream_url": "https://cdn.local/t2",
    }
    for bad, named in [
        ({"chips": [5]}, "chips"),  # below the minimum stake (1 is the default minimum, so raise it)
        ({"stream_url": "javascript:alert(1)"}, "stream_url"),
        ({"chips": [20, 10]}, "smallest first"),
    ]:
        body = {"id": "t3", "settings": {"min_stake": 10} | bad}
        response = studio.client.post("/v1/operator/tables", json=body, headers=studio.auth("op"))
        assert response.status_code == 422 and named in response.json()["message"], response.text
    assert studio.client.get("/v1/tables/t3").json()["code"] == "not_found"


def test_each_player_sees_only_their_own_wagers_offer_and_decision_and_never_the_face_down_card(
    studio: Studio,
) -> None:
    assert yours(studio, "ana")["round_id"] is None  # the table has no round yet: no error, a waiting state
    assert studio.client.get("/v1/tables/t1/current", headers=studio.auth("ana")).json()["round_id"] is None
    with studio.client.stream("GET", "/v1/tables/t1/state/stream?changes=1") as response:  # the page keeps it open
        assert response.status_code == 200
    round_id = open_round(studio)
    two = [{"side": "player", "seat": "A", "stake": 100}, {"side": "player", "seat": "C", "stake": 40}]
    assert bet(studio, "ana", round_id, two, "y1").status_code == 201
    assert bet(studio, "binh", round_id, [{"side": "player", "seat": "A", "stake": 30}], "y2").status_code == 201
    ana = yours(studio, "ana")
    assert [(w["side"], w["seat"], w["stake"], w["net"]) for w in ana["you"]["wagers"]] == [
        ("player", "A", 100, None),
        ("player", "C", 40, None),
    ]
    assert ana["wallet"]["held"] == 3 * 140 and ana["wallet"]["balance"] == 10_000 - 3 * 140
    assert yours(studio, "chai")["you"]["wagers"] == []  # nobody else's wagers
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in SPEC_CARDS:  # the banker shows 9S: insurance
        card(studio, round_id, code)
    assert yours(studio, "ana")["you"]["insurance_offer"] == [140, 70]  # T or T/2 with two player-side wagers
    assert yours(studio, "binh")["you"]["insurance_offer"] == [30]
    assert yours(studio, "chai")["you"]["insurance_offer"] == []  # no wagers, no insurance
    assert studio.post("ana", f"/v1/rounds/{round_id}/insurance", {"amount": 70}, "y3").status_code == 201  # type: ignore[attr-defined]
    ana = yours(studio, "ana")
    assert (ana["you"]["insurance"], ana["you"]["insurance_offer"]) == (70, [])  # once per round
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    ana, binh = yours(studio, "ana"), yours(studio, "binh")
    assert ana["phase"] == "drawing" and ana["window_closes_at"]
    assert ana["you"]["decision"] == {"seat": "A", "points": 5, "threshold": 4}  # the larger stake decides A
    assert binh["you"]["decision"] is None
    studio.post("ana", f"/v1/rounds/{round_id}/decisions", {"seat": "A", "choice": "stand"})
    assert yours(studio, "ana")["you"]["decision"] == {"seat": "C", "points": 3, "threshold": 4}
    studio.post("ana", f"/v1/rounds/{round_id}/decisions", {"seat": "C", "choice": "draw"})
    for code in ("9D", "2S"):  # C draws, the banker draws on 4
        card(studio, round_id, code)
    ana = yours(studio, "ana")
    history = studio.client.get("/v1/history", headers=studio.auth("ana")).json()[0]
    assert ana["phase"] == "settled" and ana["you"]["decision"] is None
    assert ana["you"]["net"] == history["net"] == sum(w["net"] for w in history["wagers"]) - 70
    assert ana["wallet"]["balance"] == 10_000 + ana["you"]["net"] and ana["wallet"]["held"] == 0
    assert history["hands"]["banker"]["cards"] == ["9S", "5C", "2S"] and history["corrections"] == []
    assert set(history["outcomes"]) == {"A", "B", "C"}


def test_history_lists_a_correction_of_a_settled_round_with_its_amount(studio: Studio) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "B", "stake": 100}], "h1").status_code == 201
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in "5H 2D KD 7S TH 4S 3C QC".split():  # no insurance (the banker shows 7)
        card(studio, round_id, code)
    # A (5, no decider) stands by the table default 4; B (6) times out and stands by ana's 4; C (3) draws.
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/timeout", {"seat": "B"})
    card(studio, round_id, "9D")  # the banker stands on 7
    before = studio.client.get(f"/v1/history/{round_id}", headers=studio.auth("ana")).json()
    assert before["phase"] == "settled", before
    # B's second card was 4S (6 points, a 7-point banker wins); the video shows 5S: 7 points, a tie.
    index = 5
    fix = {"round_id": round_id, "action": "correct", "cards": {str(index): "5S"}, "video_ref": "cam1@00:01:02"}
    proposed: Any = studio.post("op", "/v1/operator/proposals", fix)
    assert proposed.status_code == 201, proposed.text
    response: Any = studio.post("op2", f"/v1/operator/proposals/{proposed.json()['id']}/approve")
    assert response.status_code == 200, response.text
    after = studio.client.get(f"/v1/history/{round_id}", headers=studio.auth("ana")).json()
    assert [c["kind"] for c in after["corrections"]] == ["adjustment"]
    assert (before["net"], after["net"]) == (-100, 0)
    assert after["corrections"][0]["amount"] == 100
    assert after["hands"]["B"]["cards"][1] == "5S"


def test_the_private_stream_is_yours_alone_and_sends_each_change(studio: Studio) -> None:
    assert studio.client.get("/v1/tables/t1/me/stream").status_code == 401
    assert studio.client.get("/v1/tables/nope/me", headers=studio.auth("ana")).json()["code"] == "not_found"
    round_id = open_round(studio)

    def bet_soon() -> None:
        threading.Event().wait(0.3)
        bet(studio, "ana", round_id, [{"side": "banker", "seat": "B", "stake": 25}], "s1")

    threading.Thread(target=bet_soon, daemon=True).start()
    with studio.client.stream("GET", "/v1/tables/t1/me/stream?changes=2", headers=studio.auth("ana")) as response:
        assert response.status_code == 200
        frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    assert [len(f["you"]["wagers"]) for f in frames] == [0, 1]
    assert frames[1]["you"]["wagers"][0]["side"] == "banker" and frames[1]["wallet"]["held"] == 75
