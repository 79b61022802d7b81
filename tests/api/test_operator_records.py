"""The operator's records of rounds (game recall): the list by state, a round in full with its log, wagers and
every money movement; the face-down card stays hidden until the round ends; operators only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine

from services.cli import main
from tests.api.conftest import Studio
from tests.api.test_api import SPEC_CARDS, bet, card, open_round
from tests.controller.test_controller_kills import subprocess_url

FACE_DOWN = "5C"  # the banker's second card in SPEC_CARDS


def record(studio: Studio, round_id: str) -> dict[str, Any]:
    response = studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op"))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def listed(studio: Studio, query: str = "") -> list[tuple[str, str]]:
    response = studio.client.get(f"/v1/operator/rounds{query}", headers=studio.auth("op"))
    assert response.status_code == 200, response.text
    return [(r["round_id"], r["state"]) for r in response.json()]


def deal_the_first_eight(studio: Studio, round_id: str) -> None:
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in SPEC_CARDS:
        card(studio, round_id, code)


def play_to_settlement(studio: Studio, round_id: str) -> None:
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/timeout", {"seat": "A"})
    for code in ("2H", "9D", "2S", "3S"):
        if record(studio, round_id)["phase"] == "settled":
            break
        card(studio, round_id, code)
    assert record(studio, round_id)["phase"] == "settled"


def test_a_round_in_full_hides_the_face_down_card_until_it_ends_then_shows_every_card_and_movement(
    studio: Studio,
) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "o1").status_code == 201
    deal_the_first_eight(studio, round_id)
    live = record(studio, round_id)
    assert live["state"] == "open" and FACE_DOWN not in json.dumps(live)
    dealt = [entry["command"]["card"] for entry in live["log"] if entry["command"].get("type") == "deal_card"]
    assert dealt == [*SPEC_CARDS[:7], None]  # the log says a card was dealt, not which, while it is face down
    assert [(m["kind"], m["amount"], m["from"]["account"], m["to"]["account"]) for m in live["money"]] == [
        ("hold", 300, "wallet", "hold")  # 3 × the stake, from ana's wallet into escrow
    ]
    assert [(h["player"], h["amount"], h["resolution"]) for h in live["holds"]] == [("ana", 300, None)]
    play_to_settlement(studio, round_id)
    ended = record(studio, round_id)
    dealt = [entry["command"]["card"] for entry in ended["log"] if entry["command"].get("type") == "deal_card"]
    assert dealt[:8] == SPEC_CARDS and ended["state"] == "settled" and ended["settled_at"]
    assert ended["wagers"][0] | {"net": None} == {
        "wager_id": ended["wagers"][0]["wager_id"], "player": "ana", "side": "player", "seat": "A", "stake": 100,
        "net": None,
    }  # fmt: skip
    moved = sum(m["amount"] for m in ended["money"] if m["to"]["owner"] == "ana" and m["to"]["account"] == "wallet")
    taken = sum(m["amount"] for m in ended["money"] if m["from"]["owner"] == "ana" and m["from"]["account"] == "wallet")
    assert moved - taken == ended["wagers"][0]["net"]  # every cent of the wager is in the movements
    (hold,) = ended["holds"]
    line = hold["resolution"]
    assert line["status"] == "posted" and line["win"] - line["commission"] - line["loss"] == ended["wagers"][0]["net"]


def test_rounds_are_listed_by_state_and_time_and_bad_queries_name_what_was_wrong(studio: Studio) -> None:
    first = open_round(studio)
    assert bet(studio, "ana", first, [{"side": "player", "seat": "A", "stake": 100}], "o2").status_code == 201
    deal_the_first_eight(studio, first)
    play_to_settlement(studio, first)
    studio.clock.advance(seconds=5)
    second = open_round(studio)
    assert listed(studio) == [(second, "open"), (first, "settled")]
    assert studio.post("op", f"/v1/operator/rounds/{second}/void", {"reason": "table incident"}).status_code == 200  # type: ignore[attr-defined]
    fix = {"round_id": first, "action": "correct", "cards": {"1": "3D"}, "video_ref": "cam@00:00:10"}  # B's first card
    proposed: Any = studio.post("op", "/v1/operator/proposals", fix)
    assert proposed.status_code == 201, proposed.text
    approved: Any = studio.post("op2", f"/v1/operator/proposals/{proposed.json()['id']}/approve")
    assert approved.status_code == 200, approved.text
    assert listed(studio) == [(second, "void"), (first, "corrected")]
    assert listed(studio, "?state=corrected") == [(first, "corrected")]
    assert listed(studio, "?state=open") == []
    opened = record(studio, second)["opened_at"]
    assert listed(studio, f"?since={opened.replace('+00:00', 'Z')}") == [(second, "void")]
    assert listed(studio, f"?table=t1&until={opened.replace('+00:00', 'Z')}&limit=1") == [(first, "corrected")]
    for query, named in [("?state=won", "state 'won' is not one of"), ("?limit=0", "limit must be 1–200")]:
        response = studio.client.get(f"/v1/operator/rounds{query}", headers=studio.auth("op"))
        assert response.status_code == 422 and named in response.json()["message"], response.text
    missing = studio.client.get("/v1/operator/rounds/nope", headers=studio.auth("op"))
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_only_operators_read_the_records(studio: Studio) -> None:
    round_id = open_round(studio)
    for path in ("/v1/operator/rounds", f"/v1/operator/rounds/{round_id}", "/v1/operator/tables", "/v1/operator/me"):
        assert studio.client.get(path).status_code == 401
        for who in ("ana", "dealer"):
            response = studio.client.get(path, headers=studio.auth(who))
            assert response.status_code == 403 and response.json()["code"] == "forbidden", (who, response.text)


def test_a_tables_video_link_template_is_checked_and_links_each_round_to_its_video(studio: Studio) -> None:
    def change(template: str, who: str = "op") -> Any:
        headers = studio.auth(who)
        return studio.client.patch("/v1/operator/tables/t1", json={"video_url_template": template}, headers=headers)

    for bad, named in [
        ("ftp://recorder/{table}", "not an http(s) URL"),
        ("https://recorder/{table}?at={when}", "{when} is not one of"),
        ("https://recorder/{table!r}", "{table} is not one of"),
        ("https://recorder/{table", "video_url_template"),
    ]:
        response = change(bad)
        assert response.status_code == 422 and named in response.json()["message"], (bad, response.text)
    assert change("https://recorder.local/{table}", who="dealer").status_code == 403
    changed = change("https://recorder.local/{table}/{video_ref}?round={round}")
    assert changed.status_code == 200 and changed.json()["video_url_template"].endswith("round={round}")
    listed_tables = studio.client.get("/v1/operator/tables", headers=studio.auth("op")).json()
    assert [t["video_url_template"] for t in listed_tables if t["table_id"] == "t1"] == [
        changed.json()["video_url_template"]
    ]
    round_id = studio.client.post(
        "/v1/operator/tables/t1/rounds", json={"video_ref": "cam 1/2026"}, headers=studio.auth("op")
    ).json()["round_id"]
    assert record(studio, round_id)["video_url"] == f"https://recorder.local/t1/cam%201%2F2026?round={round_id}"
    assert change("").status_code == 200 and record(studio, round_id)["video_url"] is None
    me = studio.client.get("/v1/operator/me", headers=studio.auth("op2")).json()
    assert me == {"id": "op2", "role": "operator"}


def test_the_cli_lists_and_shows_rounds_from_the_database(
    studio: Studio, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "banker", "seat": "C", "stake": 40}], "o3").status_code == 201
    deal_the_first_eight(studio, round_id)
    url = subprocess_url(database)
    assert main(["ops", "rounds", "--database", url, "--json"]) == 0
    assert [(r["round_id"], r["state"]) for r in json.loads(capsys.readouterr().out)] == [(round_id, "open")]
    assert main(["ops", "show", round_id, "--database", url]) == 0
    shown = capsys.readouterr().out
    assert f"round {round_id} (table t1, #1): open" in shown and '"card": null' in shown and FACE_DOWN not in shown
    assert "hold" in shown and "wallet:ana → hold:ana" in shown and " ana        120 THB pending" in shown
    assert main(["ops", "show", "nope", "--database", url]) == 1
    assert "round 'nope' does not exist" in capsys.readouterr().err
