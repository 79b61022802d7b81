"""The controller of a room dealt online reads what one round takes from the shoe (none) once, at its start: never
again when it plans its next wake-up, where a database that fails would stop the controller's loop (a bug the
studio simulation found: 0 cards was taken for "not read yet")."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from services.catalog import STUDIO_GAMES
from services.controller.table import ControllerSettings, TableController
from services.db import session_factory
from services.rounds.clock import ManualClock
from services.rounds.service import RoundService


def test_an_online_rooms_controller_plans_its_wake_ups_without_reading_the_database(
    database: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = RoundService(session_factory(database), ManualClock(), games=STUDIO_GAMES)
    service.create_table("L2", "THB", {"deal": "online"}, game="tienlen")
    controller = TableController(
        "L2", service, ControllerSettings("L2-shoe", result_pause_ms=0), publish=lambda *v: None
    )
    controller.recover()
    assert controller.most_cards() == 0  # dealt online: the shoe deals none

    def unreachable(*_args: Any) -> Any:
        raise AssertionError("the table's settings were read again")

    monkeypatch.setattr(service, "most_cards", unreachable)
    assert controller.most_cards() == 0
    controller.next_deadline()  # plans the next round's opening without a database read
