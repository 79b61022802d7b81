"""A baccarat table whose players' money the operator keeps (the seamless wallet), against the reference operator's
wallet (a real HTTP server): the slip debited once at the operator before it is accepted, the coup's settlement
credited once (the Banker's win less commission), and the studio's mirror reconciled with the operator's answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.db import session_factory
from services.rounds.clock import ManualClock
from services.rounds.coups import BACCARAT_ADAPTER
from services.rounds.house import SpotBet
from services.rounds.players import PlayerService
from services.rounds.service import RoundService
from services.wallet.outbox import SeamlessWallet
from services.wallet.protocol import WalletConfig
from services.wallet.reconcile import MATCHED, reconcile
from services.wallet.reference import SECRET, OperatorWallet
from services.wallet.seamless import stake_transaction
from services.wallet.sender import WalletSender
from tests.wallet.test_operator_table import START, operator  # noqa: F401 (the fixture)

pytestmark = pytest.mark.db


@pytest.fixture
def service(database: Engine, operator: tuple[OperatorWallet, str]) -> Iterator[RoundService]:  # noqa: F811
    sessions = session_factory(database)
    service = RoundService(sessions, ManualClock(), games=STUDIO_GAMES)
    service.wallet = SeamlessWallet(sessions, WalletConfig(operator[1], SECRET, timeout_s=0.3, attempts=3,
                                                           backoff_s=0.01))  # fmt: skip
    service.create_table("b1", "THB", {"min_stake": 10}, game="baccarat", wallet="operator")
    PlayerService(sessions).register("ana")
    yield service


def test_a_coup_on_the_operators_wallet_is_debited_once_and_credited_once(
    service: RoundService,
    operator: tuple[OperatorWallet, str],  # noqa: F811
) -> None:
    wallet = operator[0]
    round_id = service.open_round("b1")
    slip = BACCARAT_ADAPTER.place_bets(service, "ana", round_id, [SpotBet("banker", "", 1_000)], "k1")
    assert slip["balance"] == START - 1_000 and wallet.balances["ana"] == START - 1_000  # the stake, not 3 ×
    assert BACCARAT_ADAPTER.place_bets(service, "ana", round_id, [SpotBet("banker", "", 1_000)], "k1") == slip
    assert wallet.applications[stake_transaction(round_id, "ana", "k1")] == 1
    service.close_window(round_id)
    for code in "2H 9S 3D KC".split():  # a Banker natural 9
        service.deal(round_id, Card.from_code(code))
    WalletSender(service.wallet).step()
    assert wallet.balances["ana"] == START + 950  # 1:1 less 5 % commission
    assert wallet.applied[f"settlement:{round_id}:ana"]["status"] == "ok"
    with service.sessions() as session:
        assert {line.verdict for line in reconcile(session, round_id).lines} == {MATCHED}
