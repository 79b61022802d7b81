"""The shoe + camera cross-check on a baccarat table (verify ``hold``): a camera that sees every card as the shoe read
it lets the coup settle at its last card; one that sees another card holds the settlement — the bets' money untouched
— until an operator confirms a read from the video, then the coup settles on it."""

from __future__ import annotations

import base64

from sqlalchemy import Engine

from services.bus.messages import ShoeCard
from services.controller.table import ControllerSettings, TableController
from services.rounds import checks
from services.rounds.coups import BACCARAT_ADAPTER
from services.rounds.house import SpotBet
from tests.controller.test_cross_check import CROP
from tests.coups.test_live_tables import Shoe, Table

CAMERA = "B1-camera"


def watched(database: Engine) -> Table:
    table = Table(database, "B1", "baccarat", {})
    table.service.change_verify("B1", checks.HOLD)
    settings = ControllerSettings("B1-shoe", camera_id=CAMERA, result_pause_ms=0)
    table.controller = TableController("B1", table.service, settings)
    table.controller.recover()
    table.shoe = Shoe(table.controller, "B1-shoe")
    table.shoe.new_shoe()
    table.shoe.deal("AS 2S")  # the burn
    return table


def sighting(table: Table, card: str, seq: int) -> ShoeCard:
    return ShoeCard(
        shoe_id=CAMERA, boot_id="cam1", seq=seq, ts=table.clock.now().isoformat(), video_tc="00:00:00:00", deck=0,
        card=card, source="camera", confidence=0.97, raw="", crop=base64.b64encode(CROP).decode(),
    )  # fmt: skip


def deal_watched(table: Table, cards: str, sees: dict[int, str]) -> str:
    round_id = table.open()
    BACCARAT_ADAPTER.place_bets(table.service, "ana", round_id, [SpotBet("player", "", 1_000)], "a1")
    table.close_betting()
    for position, card in enumerate(cards.split()):
        table.shoe.deal(card)
        table.controller.on_sighting(sighting(table, sees.get(position, card), position + 1))
    return round_id


def test_a_camera_that_agrees_lets_the_coup_settle(database: Engine) -> None:
    table = watched(database)
    deal_watched(table, "9H 7S 9C KD", {})  # Player 8, a natural: the Player wins
    assert table.public()["phase"] == "settled" and table.money("ana") == (11_000, 0)


def test_a_camera_that_sees_another_card_holds_the_coup_until_an_operator_confirms_a_read(database: Engine) -> None:
    table = watched(database)
    round_id = deal_watched(table, "9H 7S 9C KD", {3: "QD"})  # the camera's Banker 7 + Q: the same total
    table.controller.tick(table.clock.advance(seconds=30))  # the check's window passes: a mismatch, not a late sight
    assert table.controller.state_view()["phase"] == checks.VERIFYING
    assert [c["status"] for c in table.controller.dealer_view()["checks"]] == [checks.MISMATCH]
    assert table.money("ana") == (9_000, 1_000)  # held, not settled
    table.service.confirm_read(round_id, 3, "camera", "pit-1", "the video shows the queen of diamonds")
    table.controller.tick(table.clock.advance(seconds=1))
    assert table.public()["phase"] == "settled" and table.public()["hands"]["banker"]["cards"] == ["7S", "QD"]
    assert table.money("ana") == (11_000, 0)
