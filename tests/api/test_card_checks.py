"""The shoe + camera cross-check from the operator's side: the table setting, a held round's checks with the camera's
crop, and an operator's word on a disputed card over the API and the CLI (operators only; bad input named)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from sqlalchemy import Engine

from services.cards import Card
from services.cli import main
from services.rounds import audit
from tests.api.conftest import Studio
from tests.api.test_api import SPEC_CARDS, bet, card, open_round
from tests.controller.test_controller_kills import subprocess_url

CROP = cv2.imencode(".jpg", np.full((60, 40, 3), 90, np.uint8))[1].tobytes()


def held_round(studio: Studio, misread: int, seen: str = "QC") -> str:
    """A round on a ``hold`` table, dealt to its end; the camera agrees on every card but ``misread`` (it saw
    ``seen``)."""
    rounds = studio.app.state.services.rounds
    changed = studio.client.patch("/v1/operator/tables/t1", json={"verify": "hold"}, headers=studio.auth("op"))
    assert changed.status_code == 200 and changed.json()["verify"] == {"mode": "hold", "window_ms": 3000}
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "b1").status_code == 201
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in [*SPEC_CARDS]:
        card(studio, round_id, code)
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    studio.post("ana", f"/v1/rounds/{round_id}/decisions", {"seat": "A", "choice": "draw"})
    for code in ("2H", "9D", "2S"):
        card(studio, round_id, code)
    for check in audit.card_checks(rounds, round_id):
        camera = seen if check["position"] == misread else check["card"]
        rounds.camera_saw(round_id, check["position"], Card.from_code(camera), 0.9, CROP)
    return round_id


def test_a_held_round_waits_for_an_operators_word_given_over_the_api(studio: Studio) -> None:
    round_id = held_round(studio, misread=0)
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["phase"] == "verifying"
    assert studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()["held"] == 300
    path = f"/v1/operator/rounds/{round_id}/checks"
    listed = studio.client.get(path, headers=studio.auth("op")).json()
    assert [(c["position"], c["status"]) for c in listed if c["status"] != "agreed"] == [(0, "mismatch")]
    assert listed[0]["camera_card"] == "QC" and listed[0]["crop_url"] == f"{path}/0/crop"
    crop = studio.client.get(listed[0]["crop_url"], headers=studio.auth("op"))
    assert crop.status_code == 200 and crop.content == CROP and crop.headers["content-type"] == "image/jpeg"
    assert studio.client.get(listed[0]["crop_url"], headers=studio.auth("dealer")).status_code == 403
    assert studio.client.get(path, headers=studio.auth("ana")).status_code == 403
    confirm = f"{path}/0/confirm"
    bad = studio.client.post(confirm, json={"read": "video", "reason": "x"}, headers=studio.auth("op"))
    assert bad.status_code == 422 and "read" in bad.json()["message"]
    agreed = studio.client.post(f"{path}/1/confirm", json={"read": "shoe", "reason": "x"}, headers=studio.auth("op"))
    assert agreed.status_code == 409 and "agreed already by the camera" in agreed.json()["message"]
    missing = studio.client.post(f"{path}/40/confirm", json={"read": "shoe", "reason": "x"}, headers=studio.auth("op"))
    assert missing.status_code == 404 and "no card check at position 40" in missing.json()["message"]
    body = {"read": "shoe", "reason": "the video shows 5H"}
    assert studio.client.post(confirm, json=body, headers=studio.auth("dealer")).status_code == 403
    done = studio.client.post(confirm, json=body, headers=studio.auth("op"))
    assert done.status_code == 200, done.text
    assert studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()["phase"] == "settled"
    assert studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()["balance"] == 10_300  # won 300: as dealt
    record = studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op")).json()
    assert record["checks"][0]["confirmed_by"] == "op" and record["checks"][0]["confirmed_why"] == body["reason"]
    assert [e["actor"] for e in record["log"] if e["command"]["type"] == "verified"] == ["op"]


def test_the_cameras_read_that_changes_the_flow_is_refused_and_the_round_can_be_voided(studio: Studio) -> None:
    round_id = held_round(studio, misread=5)  # B's second card: 4S (B stands on 6) read as QC: B on 2 would draw
    confirm = f"/v1/operator/rounds/{round_id}/checks/5/confirm"
    refused = studio.client.post(confirm, json={"read": "camera", "reason": "QC"}, headers=studio.auth("op"))
    assert refused.status_code == 409 and "void it" in refused.json()["message"], refused.text
    voided = studio.post("op", f"/v1/operator/rounds/{round_id}/void", {"reason": "shoe and camera disagree"})
    assert voided.status_code == 200  # type: ignore[attr-defined]
    assert studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()["balance"] == 10_000


def test_verify_is_checked_at_creation_and_change(studio: Studio) -> None:
    bad = studio.client.patch("/v1/operator/tables/t1", json={"verify": "maybe"}, headers=studio.auth("op"))
    assert bad.status_code == 422 and "verify" in bad.json()["message"]
    short = studio.client.patch("/v1/operator/tables/t1", json={"verify_window_ms": 10}, headers=studio.auth("op"))
    assert short.status_code == 422 and "verify_window_ms" in short.json()["message"]
    made = studio.client.post(
        "/v1/operator/tables",
        json={"id": "t2", "verify": "warn", "verify_window_ms": 5000, "allow_return_over_100": True},
        headers=studio.auth("op"),
    )
    assert made.status_code == 201
    [t2] = [
        t for t in studio.client.get("/v1/operator/tables", headers=studio.auth("op")).json() if t["table_id"] == "t2"
    ]
    assert t2["verify"] == {"mode": "warn", "window_ms": 5000}


def test_the_cli_shows_the_checks_and_confirms_a_read(
    studio: Studio, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    round_id = held_round(studio, misread=0)
    url = ["--database", subprocess_url(database)]
    assert main(["ops", "show", round_id, *url]) == 0
    assert "card  0 shoe 5H camera QC mismatch" in capsys.readouterr().out
    confirm = ["ops", "confirm", round_id, "0", "--read", "shoe", "--reason", "the video shows 5H"]
    assert main([*confirm, "--token", studio.tokens["dealer"], *url]) == 1
    assert "'dealer' is not an operator" in capsys.readouterr().err
    assert main([*confirm, "--token", studio.tokens["op"], *url]) == 0
    assert "confirmed" in capsys.readouterr().out
    assert main([*confirm, "--token", studio.tokens["op2"], *url]) == 1
    assert "confirmed already by op" in capsys.readouterr().err
