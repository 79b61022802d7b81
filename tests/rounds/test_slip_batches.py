"""Bet slips written together (``services.rounds.slips``): each slip answered as if it had been placed alone.

Against a real database (PostgreSQL in CI): a batch's neighbours never change a slip's answer, a refused slip writes
nothing and gives its key back, a batch that fails as a whole is placed slip by slip, and slips sent at once from many
threads are written in fewer transactions than slips.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from services.games.base import GameError
from services.games.pokdeng import Position, Side
from services.ledger import InsufficientFundsError
from services.ledger.errors import IdempotencyConflictError
from services.ledger.models import Hold
from services.ledger.wallets import WalletService
from services.rounds import slips
from services.rounds.errors import BettingClosedError, NotFoundError, RoundError
from services.rounds.house import SpotBet
from services.rounds.models import Wager
from services.rounds.pokdeng import ADAPTER, Bet, pokdeng
from services.rounds.service import RoundService
from services.rounds.slips import Pending, SlipsStoppedError, SlipWriter
from tests.rounds.test_concurrency import in_parallel

A, B, C = Position.A, Position.B, Position.C


def spot(side: Side, seat: Position, stake: int) -> SpotBet:
    return SpotBet(str(side), str(seat), stake)


def pending(player: str, round_id: str, bets: list[tuple[Side, Position, int]], key: str) -> Pending:
    return Pending(ADAPTER, player, round_id, [spot(*bet) for bet in bets], key)


def answered(batch: list[Pending]) -> list[Any]:
    return [slip.answer.exception() or slip.answer.result() for slip in batch]


def spots(answer: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(w["side"], w["seat"], w["stake"]) for w in answer["wagers"]]


def test_each_slip_of_a_batch_is_answered_on_its_own(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    for player, amount in (("p1", 1_000), ("p2", 150), ("p3", 5_000)):
        wallets.deposit(player, amount, f"fund-{player}", "op")
    round_id = service.open_round("t1")
    used = pokdeng(service).place_bets("p3", round_id, [Bet(Side.PLAYER, A, 100)], "used-before")
    service.create_table("t2", "THB", {"commission_bps": 0}, allow_return_over_100=True)
    closed = service.open_round("t2")
    pokdeng(service).close_betting(closed)
    batch = [
        pending("p1", round_id, [(Side.PLAYER, A, 100), (Side.PLAYER, B, 200)], "k1"),
        pending("p2", round_id, [(Side.PLAYER, A, 100), (Side.PLAYER, C, 100)], "k2"),  # 200 > 150
        pending("p3", round_id, [(Side.PLAYER, A, 100)], "used-before"),  # a retry: answered as the first time
        pending("p3", round_id, [(Side.PLAYER, B, 999)], "k1-of-p3"),
        pending("p1", round_id, [(Side.PLAYER, A, 30)], "k3"),  # raises the wager the batch's first slip placed
        pending("p3", closed, [(Side.PLAYER, A, 100)], "k4"),
        pending("p3", "t1-999", [(Side.PLAYER, A, 100)], "k5"),
        pending("p3", round_id, [], "k6"),
        pending("p1", round_id, [(Side.BANKER, A, 100)], "k7"),  # one side per player in a round: the game refuses
        pending("p2", round_id, [(Side.PLAYER, A, 50)], "k8"),  # its slip before was refused: the 150 is there
        pending("p3", round_id, [(Side.PLAYER, C, 10)], ""),
    ]
    batch.append(pending("p3", round_id, [(Side.PLAYER, A, 100), (Side.PLAYER, A, 1)], "used-before"))
    SlipWriter(service).write(batch)
    out = answered(batch)
    # a player-side stake holds three times itself (a deng pays up to 3x)
    assert spots(out[0]) == [("player", "A", 100), ("player", "B", 200)] and out[0]["balance"] == 100
    assert isinstance(out[1], InsufficientFundsError) and "p2 wallet holds 150 THB, 600 needed" in str(out[1])
    assert out[2] == used
    assert spots(out[3]) == [("player", "B", 999)] and out[3]["balance"] == 5_000 - 300 - 2_997
    assert spots(out[4]) == [("player", "A", 130)] and out[4]["balance"] == 10
    assert isinstance(out[5], BettingClosedError)
    assert isinstance(out[6], NotFoundError)
    assert isinstance(out[7], RoundError) and "at least one bet" in str(out[7])
    assert isinstance(out[8], GameError)
    assert spots(out[9]) == [("player", "A", 50)] and out[9]["balance"] == 0
    assert isinstance(out[10], IdempotencyConflictError)
    assert isinstance(out[11], IdempotencyConflictError) and "different request" in str(out[11])
    assert wallets.balance("p1") == {"player": "p1", "currency": "THB", "balance": 10, "held": 990, "debt": 0}
    assert wallets.balance("p2")["balance"] == 0 and wallets.balance("p3")["held"] == 300 + 2_997
    with sessions() as session:
        rows = session.execute(select(Wager.player, Wager.seat, Wager.stake).order_by(Wager.seq)).all()
        assert [tuple(row) for row in rows] == [("p3", "A", 100), ("p1", "A", 130), ("p1", "B", 200),
                                                ("p3", "B", 999), ("p2", "A", 50)]  # fmt: skip
        assert session.scalar(select(func.sum(Hold.amount))) == 300 + 900 + 90 + 2_997 + 150
    # a refused slip's key was given back: the same key places once the money is there
    wallets.deposit("p2", 1_000, "fund-p2-again", "op")
    again = SlipWriter(service)
    retry = [pending("p2", round_id, [(Side.PLAYER, A, 100), (Side.PLAYER, C, 100)], "k2")]
    again.write(retry)
    assert spots(answered(retry)[0]) == [("player", "A", 150), ("player", "C", 100)]


def test_a_batch_that_fails_as_a_whole_is_placed_slip_by_slip(
    service: RoundService, wallets: WalletService, monkeypatch: pytest.MonkeyPatch
) -> None:
    wallets.deposit("p1", 1_000, "fund-p1", "op")
    round_id = service.open_round("t1")
    calls: list[int] = []

    def broken(*args: Any) -> None:
        calls.append(len(args[1]))
        raise RuntimeError("the database went away")

    monkeypatch.setattr(slips, "written", broken)
    batch = [pending("p1", round_id, [(Side.PLAYER, A, 100)], f"k{i}") for i in range(4)]
    SlipWriter(service).write(batch)
    out = answered(batch)
    assert calls == [3]  # tried together once (three slips fit the wallet), then alone through the one-slip path
    assert [o["balance"] for o in out[:3]] == [700, 400, 100] and isinstance(out[3], InsufficientFundsError)


def test_a_batch_answers_as_the_same_slips_placed_one_by_one(service: RoundService, wallets: WalletService) -> None:
    """Random slips (some over the balance, some on both sides, some retried, some reusing a key for another
    request), placed in batches at one table and one by one at another by twin players: the same answers."""
    service.create_table("t2", "THB", {"commission_bps": 0}, allow_return_over_100=True)
    rng = random.Random(7)
    people = [f"q{i}" for i in range(6)]
    for player in people:
        amount = rng.choice([1, 300, 1_000, 5_000])
        wallets.deposit(f"x{player}", amount, f"fund-x{player}", "op")
        wallets.deposit(f"y{player}", amount, f"fund-y{player}", "op")
    batched, alone = service.open_round("t1"), service.open_round("t2")
    slips_sent: list[tuple[str, list[tuple[Side, Position, int]], str]] = []
    for n in range(60):
        player = rng.choice(people)
        bets = [(rng.choice([Side.PLAYER, Side.PLAYER, Side.BANKER]), rng.choice([A, B, C]), rng.choice([50, 100, 700]))
                for _ in range(rng.randint(0, 3))]  # fmt: skip
        earlier = [s for s in slips_sent if s[0] == player]
        key = rng.choice(earlier)[2] if earlier and rng.random() < 0.15 else f"{player}-{n}"
        slips_sent.append((player, bets, key))
    writer = SlipWriter(service)
    got: list[Any] = []
    batch: list[Pending] = []
    for player, bets, key in [*slips_sent, ("", [], "")]:  # batches of up to 7, cut where a key comes again (as
        if len(batch) == 7 or any(slip.key == f"x{key}" for slip in batch) or not player:  # the writer cuts them)
            writer.write(batch)
            got += answered(batch)
            batch = []
        batch.append(pending(f"x{player}", batched, bets, f"x{key}"))
    expected: list[Any] = []
    for player, bets, key in slips_sent:
        try:
            expected.append(ADAPTER.place_bets(service, f"y{player}", alone, [Bet(*b) for b in bets], f"y{key}"))
        except Exception as error:
            expected.append(error)

    def said(outcome: Any) -> Any:
        if isinstance(outcome, Exception):
            words = re.sub("[0-9a-f]{32}", "W", str(outcome))  # a new wager's id is random
            for twin, same in ((batched, "R"), (alone, "R"), ("xq", "q"), ("yq", "q")):
                words = words.replace(twin, same)
            return type(outcome).__name__, words
        return spots(outcome), outcome["balance"]

    assert [said(o) for o in got] == [said(o) for o in expected]
    kinds = {type(o).__name__ for o in got}
    assert kinds >= {"dict", "InsufficientFundsError", "WagerError", "RoundError"}, kinds  # the mix is a real one
    for player in people:
        assert wallets.balance(f"x{player}") | {"player": ""} == wallets.balance(f"y{player}") | {"player": ""}
    assert writer.batches < writer.slips


def test_slips_sent_at_once_from_many_threads_share_transactions(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    players = [f"r{i}" for i in range(24)]
    for player in players:
        wallets.deposit(player, 1_000, f"fund-{player}", "op")
    wallets.deposit("p1", 3_000 * 5 + 10, "fund-p1", "op")
    round_id = service.open_round("t1")
    writer = SlipWriter(service)
    seats = [A, B, C]
    calls = [
        lambda p=p: writer.submit(ADAPTER, p, round_id, [spot(Side.PLAYER, B, 300)], f"s-{p}").result() for p in players
    ] + [
        lambda i=i: writer.submit(ADAPTER, "p1", round_id, [spot(Side.PLAYER, seats[i % 3], 1_000)], f"p1-{i}").result()
        for i in range(8)
    ]
    results = in_parallel(calls)
    writer.stop()
    assert all(isinstance(r, dict) and r["balance"] == 100 for r in results[:24]), results[:24]
    mine = results[24:]
    assert sum(isinstance(r, dict) for r in mine) == 5  # 5 of the 8 holds of 3 x 1,000 fit
    assert all(isinstance(r, InsufficientFundsError) for r in mine if not isinstance(r, dict))
    assert writer.slips == 32 and writer.batches < 32
    assert wallets.balance("p1")["balance"] == 10
    with sessions() as session:
        assert session.scalar(select(func.sum(Wager.stake))) == 24 * 300 + 5 * 1_000
    assert writer._thread is not None and not writer._thread.is_alive()  # the writer's thread ended with stop()


def test_the_writer_outlives_a_request_that_gave_up_and_an_answer_that_failed(
    service: RoundService, wallets: WalletService
) -> None:
    wallets.deposit("p1", 5_000, "fund-p1", "op")
    round_id = service.open_round("t1")
    gone = pending("p1", round_id, [(Side.PLAYER, A, 100)], "gone")
    assert gone.answer.cancel()  # its client left before the batch was written
    kept = pending("p1", round_id, [(Side.PLAYER, B, 100)], "kept")
    SlipWriter(service).write([gone, kept])
    assert kept.answer.result()["balance"] == 5_000 - 600  # the slip of the client gone is placed all the same
    writer = SlipWriter(service)

    def broken(_answer: dict[str, Any]) -> Any:
        raise ValueError("the answer's model refused it")

    with pytest.raises(ValueError, match="model refused"):
        writer.submit(ADAPTER, "p1", round_id, [spot(Side.PLAYER, C, 100)], "bad-model", broken).result(timeout=10)
    assert writer.submit(ADAPTER, "p1", round_id, [spot(Side.PLAYER, C, 10)], "after").result(timeout=10)
    writer.stop()
    assert writer._thread is not None and not writer._thread.is_alive()
    with pytest.raises(SlipsStoppedError):
        writer.submit(ADAPTER, "p1", round_id, [spot(Side.PLAYER, C, 10)], "too-late").result(timeout=10)
    assert wallets.balance("p1")["balance"] == 5_000 - 600 - 300 - 30  # the answer refused, the slip placed


def test_a_database_that_is_down_answers_every_slip_at_once(
    service: RoundService, wallets: WalletService, monkeypatch: pytest.MonkeyPatch
) -> None:
    wallets.deposit("p1", 1_000, "fund-p1", "op")
    round_id = service.open_round("t1")

    def down(_work: Any) -> Any:
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    alone: list[str] = []
    monkeypatch.setattr(service, "run", down)
    monkeypatch.setattr(slips, "_alone", lambda _service, slip: alone.append(slip.key))
    batch = [pending("p1", round_id, [(Side.PLAYER, A, 10)], f"k{i}") for i in range(3)]
    SlipWriter(service).write(batch)
    errors = answered(batch)
    assert all(isinstance(error, OperationalError) for error in errors) and alone == []
    assert len({id(error) for error in errors}) == 3  # each request its own exception
