"""Shoe-end reconciliation from the operator's side: a deck not whole holds its table — no round opens, by the
controller or by hand — until an operator acknowledges the report over the API or the CLI; operators only. And the
evidence of a camera's card (its crop as read), served to operators only."""

from __future__ import annotations

import base64
import json

import cv2
import numpy as np
import pytest
from pydantic import ValidationError
from sqlalchemy import Engine, select

from services.bus.messages import ShoeCard, ShoeNewDeck
from services.cli import main
from services.controller.table import ControllerSettings, TableController
from services.journal.models import ShoeJournal
from tests.api.conftest import Studio
from tests.controller.test_controller_kills import subprocess_url
from tests.controller.test_table import DECK

SHOE = "t1-shoe"


def end_a_deck_without(studio: Studio, *left_in_the_shoe: str) -> TableController:
    """The table's controller sees every card of a deck pass as a burn but ``left_in_the_shoe``, then a new deck."""
    controller = TableController("t1", studio.app.state.services.rounds, ControllerSettings(SHOE, auto_open=False))
    controller.recover()
    stamp = {"shoe_id": SHOE, "boot_id": "b1", "ts": "2026-12-04T00:00:00+00:00", "video_tc": "00:00:00:00", "deck": 0}
    cards = [card for card in DECK if card not in left_in_the_shoe]
    for seq, card in enumerate(cards, 1):
        controller.on_shoe(ShoeCard(seq=seq, card=card, burn=True, source="serial", confidence=1.0, raw=card, **stamp))
    controller.on_shoe(ShoeNewDeck(seq=len(cards) + 1, raw="", **stamp))
    return controller


def test_a_held_table_opens_no_round_until_an_operator_acknowledges_its_deck(studio: Studio) -> None:
    end_a_deck_without(studio, "7D", "QS")
    held = studio.client.get("/v1/operator/decks?table=t1&status=held", headers=studio.auth("op")).json()
    assert [(r["missing"], r["doubled"], r["seen"], r["acknowledged"]) for r in held] == [(["QS", "7D"], [], 50, None)]
    report = held[0]["id"]
    refused = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer"))
    assert refused.status_code == 409 and refused.json()["code"] == "table_held"
    assert f"deck report #{report}" in refused.json()["message"]
    path = f"/v1/operator/decks/{report}/acknowledge"
    for who in ("ana", "dealer"):
        assert studio.client.post(path, json={"note": "ok"}, headers=studio.auth(who)).status_code == 403
    assert studio.client.get("/v1/operator/decks", headers=studio.auth("dealer")).status_code == 403
    assert studio.client.post(path, json={"note": ""}, headers=studio.auth("op")).status_code == 422
    done = studio.client.post(path, json={"note": "QS and 7D stuck in the shoe"}, headers=studio.auth("op"))
    assert done.status_code == 200 and done.json()["status"] == "acknowledged"
    assert done.json()["acknowledged"]["by"] == "op" and done.json()["acknowledged"]["from"]
    again = studio.client.post(path, json={"note": "again"}, headers=studio.auth("op2"))
    assert again.status_code == 409 and "nothing to acknowledge" in again.json()["message"]
    opened = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer"))
    assert opened.status_code == 201, opened.text
    bad = studio.client.get("/v1/operator/decks?status=lost", headers=studio.auth("op"))
    assert bad.status_code == 422 and "'lost' is not one of" in bad.json()["message"]


def test_the_cli_lists_deck_reports_and_acknowledges_one(
    studio: Studio, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    end_a_deck_without(studio, "AS")
    url = ["--database", subprocess_url(database)]
    assert main(["ops", "decks", "--status", "held", *url]) == 0
    listed = capsys.readouterr().out
    assert "held" in listed and "missing AS" in listed and "1 deck report(s)" in listed
    assert main(["ops", "decks", "--json", *url]) == 0
    [report] = json.loads(capsys.readouterr().out)
    acknowledge = ["ops", "acknowledge", str(report["id"]), "--note", "AS on the floor"]
    assert main([*acknowledge, "--token", studio.tokens["dealer"], *url]) == 1
    assert "'dealer' is not an operator" in capsys.readouterr().err
    assert main([*acknowledge, "--token", studio.tokens["op"], *url]) == 0
    assert json.loads(capsys.readouterr().out)["acknowledged"]["note"] == "AS on the floor"


def test_a_camera_cards_crop_is_served_to_operators_only(studio: Studio) -> None:
    controller = TableController("t1", studio.app.state.services.rounds, ControllerSettings(SHOE, auto_open=False))
    controller.recover()
    jpeg = cv2.imencode(".jpg", np.full((60, 40, 3), 90, np.uint8))[1].tobytes()
    stamp = {"shoe_id": SHOE, "boot_id": "b1", "ts": "2026-12-04T00:00:00+00:00", "video_tc": "00:00:00:00", "deck": 0}
    controller.on_shoe(
        ShoeCard(seq=1, card="QD", burn=True, source="camera", confidence=0.93, raw="camera QD at 1,2 40x60",
                 crop=base64.b64encode(jpeg).decode(), **stamp)
    )  # fmt: skip
    with studio.app.state.services.rounds.sessions() as session:
        journal_id = session.scalar(select(ShoeJournal.id).where(ShoeJournal.card == "QD"))
    path = f"/v1/operator/evidence/{journal_id}"
    shown = studio.client.get(path, headers=studio.auth("op"))
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/jpeg" and shown.content == jpeg
    assert studio.client.get(path, headers=studio.auth("dealer")).status_code == 403
    assert studio.client.get(path).status_code == 401
    missing = studio.client.get(f"/v1/operator/evidence/{journal_id + 1}", headers=studio.auth("op"))
    assert missing.status_code == 404 and "no camera crop" in missing.json()["message"]
    forged = ShoeCard(seq=2, card="QH", source="camera", confidence=0.9, raw="x", crop=None, **stamp).model_dump()
    with pytest.raises(ValidationError, match="crop is not a base64 JPEG"):
        ShoeCard.model_validate(forged | {"crop": base64.b64encode(b"<svg/>").decode()})
