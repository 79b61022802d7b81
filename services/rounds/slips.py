"""Bet slips written together (group commit): the slips that arrive while one batch is written are the next batch.

One writer thread per API process takes every slip waiting in its queue and places them in one transaction: their
idempotency keys claimed by one statement, each round read under the shared lock once, every player's wallet and
escrow locked in id order by one statement, their own wagers read by one; then each slip is judged in Python, in the
order the slips arrived, against what the slips before it left (the game's rules, the wallet's balance); and what the
accepted ones hold, move and wager is written by one statement each. A lone slip waits for no one: the writer starts a
batch the moment it is idle, so batches grow only when slips come faster than one transaction.

A slip refused (betting closed, insufficient funds, a key used for another request, a rule of the game) is refused
alone, with the error the one-slip path (``HouseAdapter.place_bets``) raises; its key is given back and its neighbours
go on. A batch that fails as a whole (the database, a key in use elsewhere) is placed again slip by slip through the
one-slip path, so no slip pays for another's trouble.

A slip of an operator's-wallet table comes here twice (``services.rounds.stakes``): first to be priced, with its debit
recorded in the outbox (``price``, ``services.rounds.slip_prices``: in the same batches, after the placing), then —
once the operator has debited it, the call made from the event loop outside any transaction — to be placed: the batch
records the operator's answer, mirrors the debit into the wallet and holds it, so the stakes of a batch take
the studio's cash account once, not once each. ``on_loop`` gives such a slip's flow these steps.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

from sqlalchemy.orm import Session

from services.db.unit_of_work import UNAVAILABLE
from services.games.base import GameError
from services.ledger import idempotency
from services.ledger.errors import InsufficientFundsError, InvalidAmountError, LedgerError
from services.ledger.ledger import Ledger, Locked
from services.ledger.models import AccountKind
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.house import HouseAdapter, Slip, SpotBet, slip_request
from services.rounds.slip_prices import priced
from services.rounds.slip_writes import (
    Accepted,
    OwnWager,
    betting_rounds,
    checked_debit,
    locked_debits,
    own_error,
    own_wagers,
    written,
)
from services.rounds.stakes import Debited, Price, Steps, priced_alone
from services.wallet.models import WalletCallRecord
from services.wallet.protocol import WalletAnswer
from services.wallet.seamless import DebitRolledBackError

log = logging.getLogger("studio.bets")
MAX_BATCH = 500  # slips in one transaction at most (a burst beyond it is the next batch)
STOP_WAIT_S = 10.0  # how long a stop waits for the slips queued before it to be written
REFUSALS = (RoundError, GameError, LedgerError)  # a slip's own refusal: the one-slip path raises the same
T = TypeVar("T")


@dataclass(eq=False)
class Pending:
    """A slip waiting for its batch, and the answer its request thread waits for."""

    adapter: HouseAdapter
    player: str
    round_id: str
    bets: list[SpotBet]
    key: str
    answer: Future[Any] = field(default_factory=Future)
    then: Callable[[dict[str, Any]], Any] | None = None  # what the answer becomes (the API's model of it)
    debited: Debited | None = None  # an operator's-wallet slip: its stake debited there, to mirror and hold here
    alone: Callable[[], Any] | None = None  # its own transaction, if the batch fails (else ``place_bets``)
    pricing: bool = False  # an operator's-wallet slip's first step: priced, its debit recorded (not placed)

    @property
    def request(self) -> dict[str, Any]:  # what the key is claimed for (as the one-slip path fingerprints it)
        return slip_request(self.round_id, self.bets)


class SlipsStoppedError(RoundError):
    """The API process is stopping: a slip it can no longer write (nothing of it was placed)."""

    code = "bets_unavailable"


class SlipWriter:
    """The process's bet slips, written a batch per transaction by one thread (started on the first slip)."""

    def __init__(self, service: RoundCore, max_batch: int = MAX_BATCH) -> None:
        self.service = service
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self._stopped = False
        self.batches = 0  # how many batches were written, and how many slips they held (for tests and benchmarks)
        self.slips = 0

    def submit(
        self, adapter: HouseAdapter, player: str, round_id: str, bets: Sequence[SpotBet], key: str,
        then: Callable[[dict[str, Any]], Any] | None = None, debited: Debited | None = None,
        alone: Callable[[], dict[str, Any]] | None = None,
    ) -> Future[Any]:  # fmt: skip
        """Queue the slip for the next batch: the future of its answer (``then(answer)`` if given) or its refusal.
        ``debited``: a slip of an operator's-wallet table, its stake accepted there (``alone``: its own
        transaction, should the batch fail as a whole)."""
        slip = Pending(adapter, player, round_id, list(bets), key, then=then, debited=debited, alone=alone)
        return self._queued(slip)

    def _queued(self, slip: Pending) -> Future[Any]:
        if self._stopped:
            self._stopping(slip, "the API is stopping and takes no more bet slips; send it again")
            return slip.answer
        thread = self._thread
        if thread is None or not thread.is_alive():
            with self._start:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="slip-writer", daemon=True)
                    self._thread.start()
        self._queue.put(slip)
        return slip.answer

    def price(
        self, adapter: HouseAdapter, player: str, round_id: str, bets: Sequence[SpotBet], key: str,
        alone: Callable[[], Any],
    ) -> Future[Any]:  # fmt: skip
        """Queue an operator's-wallet slip's first step for the next batch: the future of its finished answer (a
        retry), its debit's outbox row, or its refusal (``alone``: the step in a transaction of its own, should the
        batch fail as a whole)."""
        return self._queued(Pending(adapter, player, round_id, list(bets), key, alone=alone, pricing=True))

    def on_loop(
        self, adapter: HouseAdapter, player: str, round_id: str, bets: Sequence[SpotBet], key: str, price: Price
    ) -> Steps:
        """An operator's-wallet stake's steps on the event loop: priced and placed in this writer's batches, the
        operator's wallet called with the other requests' calls in flight (``price``: the first step alone)."""
        return _OnLoop(self, adapter, player, round_id, list(bets), key, price)

    def stop(self) -> None:
        """Write what is queued, then end; a slip that comes meanwhile is refused (never left waiting)."""
        self._stopped = True
        thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=STOP_WAIT_S)
        while True:
            try:
                left = self._queue.get_nowait()
            except queue.Empty:
                return
            if left is not None:
                self._stopping(left, "the API stopped before the slip was written; send it again")

    def _stopping(self, slip: Pending, words: str) -> None:
        """A slip the stopping writer will not write: refused, or (debited at the operator already, which a refusal
        would roll back) placed on its own."""
        if slip.debited is None:
            _answer(slip, SlipsStoppedError(words))
            return
        # placed in a thread of its own: the caller may be the event loop, which must not wait for a transaction
        placing = threading.Thread(target=lambda: _answer(slip, _alone(self.service, slip)), daemon=True)
        placing.start()

    def _run(self) -> None:
        carried: Pending | None = None  # a slip whose key its batch already had: the first of the next batch
        while True:
            first = carried if carried is not None else self._queue.get()
            carried = None
            if first is None:
                return
            batch, keys, stopping = [first], {first.key}, False
            while len(batch) < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                if more.key in keys:  # the same key twice (a retry racing itself): after this batch
                    carried = more
                    break
                batch.append(more)
                keys.add(more.key)
            try:
                self.write(batch)
            except BaseException as error:  # never expected (write answers every slip); the thread must go on
                log.exception("bet slip writer: a batch of %d failed", len(batch))
                for slip in batch:
                    _answer(slip, error if isinstance(error, Exception) else RuntimeError(str(error)))
            if stopping:
                self._queue.put(None)  # after what is still queued

    def write(self, batch: list[Pending]) -> None:
        """Place the batch in one transaction and answer each slip; any trouble of the whole, slip by slip (the
        database unavailable: every slip told so at once, none retried)."""
        self.batches += 1
        self.slips += len(batch)
        outcomes: list[Outcome]
        placing = [slip for slip in batch if not slip.pricing]
        pricing = [slip for slip in batch if slip.pricing]

        def write(session: Session) -> list[Outcome]:
            """Placing first (its locks in the one-slip path's order, every round of the batch among them), then
            pricing (which takes no lock the placing did not)."""
            placed = _together(self.service, session, placing, pricing)
            found = placed + (priced(self.service, session, pricing) if pricing else [])
            outcomes = dict(zip(placing + pricing, found, strict=True))
            return [outcomes[slip] for slip in batch]

        try:
            outcomes = self.service.run(write)
        except UNAVAILABLE as error:
            log.warning("a batch of %d bet slips: the database is unavailable (%s)", len(batch), error)
            outcomes = [own_error(error) for _ in batch]
        except Exception:  # anything else: each slip is placed alone, where its own error is its answer
            log.warning("a batch of %d bet slips failed as a whole; placing them one by one", len(batch), exc_info=True)
            outcomes = [None] * len(batch)
        for slip, outcome in zip(batch, outcomes, strict=True):
            _answer(slip, _alone(self.service, slip) if outcome is None else outcome)


def _answer(slip: Pending, outcome: dict[str, Any] | WalletCallRecord | BaseException) -> None:
    """Give the slip's request its answer, unless it stopped waiting (its future cancelled: a client gone)."""
    if not slip.answer.set_running_or_notify_cancel():
        return
    try:
        if isinstance(outcome, BaseException):
            slip.answer.set_exception(outcome)
        else:
            slip.answer.set_result(outcome if slip.then is None else slip.then(cast(dict[str, Any], outcome)))
    except Exception as error:  # the answer's own model refused it: the request is told, the writer goes on
        slip.answer.set_exception(error)


def _alone(service: RoundCore, slip: Pending) -> Any:
    try:
        if slip.alone is not None:
            return slip.alone()
        return slip.adapter.place_bets(service, slip.player, slip.round_id, slip.bets, slip.key)
    except Exception as error:  # handed to the request that waits for it
        return error


# the answer (a priced slip: its debit's outbox row), the refusal, or None: place it alone
Outcome = dict[str, Any] | WalletCallRecord | BaseException | None


class _OnLoop(Steps):
    def __init__(
        self, writer: SlipWriter, adapter: HouseAdapter, player: str, round_id: str, bets: list[SpotBet], key: str,
        price: Price,
    ) -> None:  # fmt: skip
        self.writer, self.adapter, self.player, self.round_id, self.bets, self.key = (writer, adapter, player,
                                                                                      round_id, bets, key)  # fmt: skip
        self._price = price

    async def price(self) -> dict[str, Any] | WalletCallRecord:
        service = self.writer.service
        alone = functools.partial(priced_alone, service, self._price)
        return await asyncio.wrap_future(self.writer.price(self.adapter, self.player, self.round_id, self.bets,
                                                           self.key, alone))  # fmt: skip

    async def call(self, record: WalletCallRecord) -> tuple[WalletAnswer | None, int, str]:
        wallet = self.writer.service.wallet
        assert wallet is not None  # (a stake of an operator's-wallet table is refused before, without one)
        return await wallet.call_soon(record)

    async def blocking(self, work: Callable[[], T]) -> T:
        return await asyncio.to_thread(work)

    async def place(self, debited: Debited, alone: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        placed = self.writer.submit(self.adapter, self.player, self.round_id, self.bets, self.key, debited=debited,
                                    alone=alone)  # fmt: skip
        return cast(dict[str, Any], await asyncio.wrap_future(placed))


def _together(service: RoundCore, session: Session, batch: list[Pending], pricing: list[Pending]) -> list[Outcome]:
    """The batch's placing: every slip's outcome in batch order (``None``: place it alone after the commit). The
    rounds of the slips ``pricing`` are read with its own, under the shared lock, before any player's money is."""
    outcomes: list[Outcome] = [None] * len(batch)
    if not batch:
        return outcomes  # (pricing reads its rounds itself)
    claimed = _claimed(session, batch, outcomes)
    betting_rounds(service, session, pricing, list(range(len(pricing))), [None] * len(pricing))  # (kept: session.info)
    now = service.clock.now()
    for i in claimed:
        if not batch[i].bets:
            outcomes[i] = RoundError("a bet slip needs at least one bet")
    rounds = betting_rounds(service, session, batch, [i for i in claimed if outcomes[i] is None], outcomes)
    live = [i for i in claimed if outcomes[i] is None]
    currencies = {round_id: service.table(session, row.table_id).currency for round_id, row in rounds.items()}
    ledgers: dict[str, Ledger] = {}
    for currency in sorted({currencies[batch[i].round_id] for i in live}):
        ledgers[currency] = Ledger(session, currency)
    accounts: dict[str, dict[str, tuple[int, int]]] = {}  # currency -> player -> (wallet, escrow)
    locked: dict[str, dict[int, Locked]] = {}
    for currency, ledger in ledgers.items():
        players = [batch[i].player for i in live if currencies[batch[i].round_id] == currency]
        accounts[currency], locked[currency] = service.accounts.lock_players(session, ledger, players)
        service.accounts.account(session, ledger, AccountKind.CASH)  # (an operator's debit is mirrored from it)
    debits = [slip.debited for slip in (batch[i] for i in live) if slip.debited is not None]
    debit_rows, rolled_back = locked_debits(session, debits) if debits else ({}, set())
    owns = own_wagers(session, [(batch[i].round_id, batch[i].player) for i in live])
    balances = {account: row.balance for rows in locked.values() for account, row in rows.items()}
    accepted: list[Accepted] = []
    for i in live:
        slip = batch[i]
        currency = currencies[slip.round_id]
        wallet, escrow = accounts[currency][slip.player]
        mirrored = 0 if slip.debited is None else slip.debited.debit.amount  # what the operator's debit brings in
        try:
            plan = _judged(service, slip, rounds[slip.round_id], owns[(slip.round_id, slip.player)], now,
                           balances[wallet] + mirrored, currency)  # fmt: skip
            row = None if slip.debited is None else checked_debit(slip.debited, slip.player, debit_rows, rolled_back)
        except (*REFUSALS, DebitRolledBackError) as refusal:
            outcomes[i] = refusal
            continue
        balances[wallet] += mirrored - plan.holding()
        owns[(slip.round_id, slip.player)] = [OwnWager(w, *spot) for w, spot in plan.wagers.items()]
        balance = balances[wallet] if slip.debited is None else slip.debited.debit.balance  # the operator's, there
        outcomes[i] = {"round_id": slip.round_id, "wagers": plan.answer(), "balance": balance}
        accepted.append(Accepted(slip.player, slip.round_id, slip.debited, plan, currency, wallet, escrow, row))
    idempotency.release(session, [batch[i].key for i in claimed if isinstance(outcomes[i], BaseException)])
    if accepted:
        written(session, accepted, ledgers, locked, now)
        answers = [(batch[i].key, answer) for i in live if isinstance(answer := outcomes[i], dict)]
        idempotency.finish_many(session, answers)
    return outcomes


def _claimed(session: Session, batch: list[Pending], outcomes: list[Outcome]) -> list[int]:
    """Claim the slips' keys (a key used before answers as it did then, or is refused): the slips that hold one."""
    fresh: list[int] = []
    for i, slip in enumerate(batch):
        try:
            idempotency.check_key(slip.key)
        except LedgerError as refusal:
            outcomes[i] = refusal
            continue
        fresh.append(i)
    claimed = idempotency.claim_many(session, [(batch[i].key, batch[i].player, batch[i].request) for i in fresh])
    mine: list[int] = []
    for i in fresh:
        slip = batch[i]
        if slip.key in claimed:
            mine.append(i)
            continue
        try:
            outcomes[i] = idempotency.stored(session, slip.key, slip.player, slip.request)  # None: in use elsewhere
        except LedgerError as refusal:
            outcomes[i] = refusal
    return mine


def _judged(
    service: RoundCore, slip: Pending, round_: Any, own: list[Any], now: datetime, balance: int, currency: str,
) -> Slip:  # fmt: skip
    """The slip planned against the player's wagers so far (the game's rules) and the wallet's balance so far (and,
    debited at the operator, the stake as it was debited: the one-slip path's checks, in its order)."""
    adapter = slip.adapter
    settings = service.round_settings(slip.round_id, round_.settings, adapter.game)
    plan = adapter._plan(settings, slip.player, slip.round_id, own, slip.bets, now)
    if slip.debited is not None:
        slip.debited.debit.check(plan.holding())
    for _, amount in plan.holds:
        if type(amount) is not int or amount <= 0:
            raise InvalidAmountError(f"hold amount must be a positive whole number, got {amount!r}")
    needed = plan.holding()
    if balance < needed:  # as ``Ledger.post_many`` words it on the one-slip path
        raise InsufficientFundsError(f"insufficient funds: {slip.player} wallet holds {balance} {currency}, "
                                     f"{needed} needed")  # fmt: skip
    return plan
