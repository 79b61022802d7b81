"""Concurrent requests against a real database (PostgreSQL in CI): money is never double-moved."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from services.games.pokdeng import Position, Side
from services.ledger import InsufficientFundsError
from services.ledger.models import Hold, Transfer
from services.ledger.wallets import WalletService
from services.rounds.errors import BettingClosedError
from services.rounds.models import Wager
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.service import RoundService

THREADS = 16


def in_parallel(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run every call at once (released together by a barrier); returns results or exceptions."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait()
        try:
            return call()
        except Exception as error:  # collected and asserted on by the test
            return error

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def test_fifty_parallel_slips_accept_exactly_what_the_balance_covers(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    wallets.deposit("p1", 3_000 * 17 + 299, "fund", "op")  # covers 17 holds of 3 × 1,000
    round_id = service.open_round("t1")
    seats = [Position.A, Position.B, Position.C]
    results = in_parallel(
        [
            lambda i=i: pokdeng(service).place_bets("p1", round_id, [Bet(Side.PLAYER, seats[i % 3], 1_000)], f"slip{i}")
            for i in range(50)
        ]
    )
    accepted = [r for r in results if isinstance(r, dict)]
    refused = [r for r in results if not isinstance(r, dict)]
    assert len(accepted) == 17
    assert all(isinstance(r, InsufficientFundsError) for r in refused), refused
    assert wallets.balance("p1") == {"player": "p1", "currency": "THB", "balance": 299, "held": 51_000, "debt": 0}
    with sessions() as session:
        assert session.scalar(select(func.sum(Wager.stake))) == 17_000
        assert session.scalar(select(func.count()).select_from(Hold)) == 17


def test_one_idempotency_key_sent_twenty_times_at_once_moves_money_once(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    wallets.deposit("p1", 10_000, "fund", "op")
    round_id = service.open_round("t1")
    slip = [Bet(Side.BANKER, Position.B, 500)]
    results = in_parallel([lambda: pokdeng(service).place_bets("p1", round_id, slip, "retry-me") for _ in range(20)])
    assert all(r == results[0] for r in results), results
    assert results[0]["balance"] == 8_500
    deposits = in_parallel([lambda: wallets.deposit("p2", 700, "dep-once", "op") for _ in range(20)])
    assert all(d == deposits[0] for d in deposits)
    assert wallets.balance("p1")["balance"] == 8_500 and wallets.balance("p2")["balance"] == 700
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Hold)) == 1
        assert session.scalar(select(func.count()).select_from(Transfer).where(Transfer.kind == "deposit")) == 2


def test_bets_racing_the_close_are_either_fully_in_or_refused(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    players = [f"r{i}" for i in range(THREADS - 1)]
    for player in players:
        wallets.deposit(player, 10_000, f"fund-{player}", "op")
    round_id = service.open_round("t1")
    two_seats = [Bet(Side.PLAYER, Position.A, 100), Bet(Side.PLAYER, Position.C, 100)]
    calls: list[Callable[[], Any]] = [
        lambda p=p: pokdeng(service).place_bets(p, round_id, two_seats, f"race-{p}") for p in players
    ]
    calls.insert(THREADS // 2, lambda: pokdeng(service).close_betting(round_id))
    results = in_parallel(calls)
    closed = results.pop(THREADS // 2)
    assert not isinstance(closed, Exception), closed
    in_log = {w.player for w in closed.engine.wagers}
    for player, result in zip(players, results, strict=True):
        balance = wallets.balance(player)["balance"]
        if isinstance(result, dict):
            assert player in in_log and balance == 10_000 - 600
        else:
            assert isinstance(result, BettingClosedError) and player not in in_log and balance == 10_000
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Wager)) == 2 * len(in_log)
