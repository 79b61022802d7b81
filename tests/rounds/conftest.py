from __future__ import annotations

import pytest
from sqlalchemy.orm import Session, sessionmaker

from services.catalog import STUDIO_GAMES
from services.ledger.wallets import WalletService
from services.rounds.clock import ManualClock
from services.rounds.players import PlayerService
from services.rounds.service import RoundService


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def service(sessions: sessionmaker[Session], clock: ManualClock) -> RoundService:
    service = RoundService(sessions, clock, games=STUDIO_GAMES)
    service.create_table("t1", "THB", {"commission_bps": 0}, allow_return_over_100=True)
    return service


@pytest.fixture
def players(sessions: sessionmaker[Session]) -> PlayerService:
    service = PlayerService(sessions)
    for player in ("p1", "p2", "p3"):
        service.register(player)
    return service


@pytest.fixture
def wallets(sessions: sessionmaker[Session]) -> WalletService:
    return WalletService(sessions, "THB")
