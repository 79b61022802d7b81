"""A Pok Deng player who would decide a seat but is outweighed by the banker side against it is told so on their own
view once betting has closed (the table's threshold decides that seat); no one else is."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Studio
from tests.api.test_api import bet, open_round


def mine(studio: Studio, who: str) -> dict[str, Any]:
    found: dict[str, Any] = studio.client.get("/v1/tables/t1/me", headers=studio.auth(who)).json()["you"]
    return found


def test_an_outweighed_backer_sees_which_seats_the_table_decides(studio: Studio) -> None:
    round_id = open_round(studio)
    slip = [{"side": "player", "seat": "A", "stake": 100}, {"side": "player", "seat": "B", "stake": 100}]
    assert bet(studio, "ana", round_id, slip, "a1").status_code == 201
    assert bet(studio, "binh", round_id, [{"side": "banker", "seat": "A", "stake": 150}], "b1").status_code == 201
    assert bet(studio, "chai", round_id, [{"side": "banker", "seat": "B", "stake": 100}], "c1").status_code == 201
    assert studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting").status_code == 200  # type: ignore[attr-defined]
    assert mine(studio, "ana")["outweighed"] == ["A"], "B (even stakes) is still hers to decide"
    assert mine(studio, "binh")["outweighed"] == [] and mine(studio, "chai")["outweighed"] == []
    for code in "5H 2D KD 4S TH 4C 3C 2C".split():  # A 5, B 6, C 3, banker 6 (its 4 up: no insurance)
        studio.shoe(round_id, code)
    state = studio.client.get("/v1/tables/t1/current", headers=studio.auth("ana")).json()
    assert state["draws"]["A"] == {"draw": False, "reason": "outweighed"}  # the table's 4: stands on 5, no window
    assert mine(studio, "ana")["decision"]["seat"] == "B"
