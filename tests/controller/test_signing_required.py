"""Fail closed: a controller drives no table whose shoe it holds no signing key for, unless told it may.

Without a key, a message in the shoe's name cannot be told from any broker client's: such a table is refused at
construction (the ``studio controller`` command exits at start, naming the table and the fix) unless the
controller is started with ``allow_unsigned`` (``--allow-unsigned``: tests and benchmarks). A room dealt online
has no shoe and needs no key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from services.catalog import STUDIO_GAMES
from services.controller.errors import UnsignedShoeError
from services.controller.leases import Leases
from services.controller.runner import Controller, Writer
from services.controller.table import ControllerSettings
from services.db import session_factory
from services.rounds.clock import ManualClock
from services.rounds.service import RoundService
from services.shoe.signing import KeyRing, new_key, write_key

NOBODY = "mqtt://127.0.0.1:1"  # never reached: nothing here connects


@pytest.fixture
def service(database: Engine) -> RoundService:
    service = RoundService(session_factory(database), games=STUDIO_GAMES)
    service.create_table("K1", "THB", allow_return_over_100=True)
    return service


def test_a_table_whose_shoe_has_no_key_is_refused_naming_the_table_and_the_fix(
    service: RoundService, tmp_path: Path
) -> None:
    keys = KeyRing(tmp_path / "keys")
    tables = {"K1": ControllerSettings("K1-shoe")}
    fix = (
        r"table K1: shoe K1-shoe has no signing key in .*keys: make one \(studio shoe-key new --shoe-id K1-shoe\) and "
        r"start the shoe with it, or allow unsigned cards \(--allow-unsigned: tests and benchmarks only\)"
    )
    with pytest.raises(UnsignedShoeError, match=fix):
        Controller(service, NOBODY, tables, keys=keys)
    clock = ManualClock()
    leases = Leases(service.sessions, "test", clock)
    with pytest.raises(UnsignedShoeError, match=fix):
        Writer(service, tables, lambda _table: lambda _view, _payload: None, leases, clock, keys)

    allowed = Writer(service, tables, lambda _t: lambda _v, _p: None, leases, clock, keys, allow_unsigned=True)
    allowed.start()  # said on the dealer console, as before
    assert [alert.kind for alert in allowed.tables["K1"].alerts] == ["controller"]
    assert "has no signing key here" in allowed.tables["K1"].alerts[0].message

    write_key(tmp_path / "keys", new_key("K1-shoe"))  # the key made: the same controller starts
    assert Controller(service, NOBODY, tables, keys=KeyRing(tmp_path / "keys")).tables["K1"].table_id == "K1"


def test_a_room_dealt_online_has_no_shoe_and_needs_no_key(service: RoundService, tmp_path: Path) -> None:
    service.create_table("M1", "THB", {"deal": "online"}, "maubinh")
    controller = Controller(service, NOBODY, {"M1": ControllerSettings("M1-shoe")}, keys=KeyRing(tmp_path / "keys"))
    assert list(controller.tables) == ["M1"]
