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
one-slip path, so no slip pays for another's trouble. Only slips of internal-wallet tables come here: an operator's
wallet debits each stake at the operator before it is placed (``services.rounds.stakes``).
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, insert, select, text
from sqlalchemy.orm import Session

from services.db.unit_of_work import UNAVAILABLE
from services.games.base import GameError
from services.ledger import idempotency
from services.ledger.errors import InsufficientFundsError, InvalidAmountError, LedgerError
from services.ledger.ledger import HOLDS, Ledger, Locked, Movement
from services.ledger.models import utcnow
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.house import NEW_WAGERS, RAISE_WAGERS, WAGERS, HouseAdapter, Slip, SpotBet

log = logging.getLogger("studio.bets")
MAX_BATCH = 500  # slips in one transaction at most (a burst beyond it is the next batch)
STOP_WAIT_S = 10.0  # how long a stop waits for the slips queued before it to be written
REFUSALS = (RoundError, GameError, LedgerError)  # a slip's own refusal: the one-slip path raises the same
INSERT_HOLDS = insert(HOLDS).returning(HOLDS.c.id, sort_by_parameter_order=True)  # one hold id per row, in order
# On PostgreSQL the same fed as arrays (no statement text built per batch size, no value converted one by one)
HOLD_MANY = text(
    "INSERT INTO holds (player, currency, amount, round_id, wager_id, created_at) "
    "SELECT h.player, h.currency, h.amount, h.round_id, h.wager_id, :now FROM unnest(CAST(:player AS text[]), "
    "CAST(:currency AS text[]), CAST(:amount AS bigint[]), CAST(:round_id AS text[]), CAST(:wager_id AS text[])) "
    "WITH ORDINALITY AS h(player, currency, amount, round_id, wager_id, n) ORDER BY h.n RETURNING id, wager_id, amount"
)
WAGERS_MANY = text(  # the new wagers in the order given (``seq``: the order of first placement)
    "INSERT INTO wagers (id, round_id, player, side, seat, stake, net, created_at, updated_at) "
    "SELECT w.id, w.round_id, w.player, w.side, w.seat, w.stake, NULL, :now, :now FROM unnest(CAST(:id AS text[]), "
    "CAST(:round_id AS text[]), CAST(:player AS text[]), CAST(:side AS text[]), CAST(:seat AS text[]), "
    "CAST(:stake AS bigint[])) WITH ORDINALITY AS w(id, round_id, player, side, seat, stake, n) ORDER BY w.n"
)
RAISE_MANY = text(
    "UPDATE wagers SET stake = wagers.stake + r.add, updated_at = :now "
    "FROM unnest(CAST(:ids AS text[]), CAST(:adds AS bigint[])) AS r(id, add) WHERE wagers.id = r.id"
)


class OwnWager(NamedTuple):
    """A player's wager as the slip's plan reads it (``OWN_WAGERS``' columns)."""

    id: str
    side: str
    seat: str
    stake: int
    net: int | None = None


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

    @property
    def request(self) -> dict[str, Any]:  # what the key is claimed for (as the one-slip path fingerprints it)
        return {"op": "bets", "round": self.round_id, "bets": [[b.side, b.seat, b.stake] for b in self.bets]}


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
        then: Callable[[dict[str, Any]], Any] | None = None,
    ) -> Future[Any]:  # fmt: skip
        """Queue the slip for the next batch: the future of its answer (``then(answer)`` if given) or its refusal."""
        slip = Pending(adapter, player, round_id, list(bets), key, then=then)
        if self._stopped:
            _answer(slip, SlipsStoppedError("the API is stopping and takes no more bet slips; send it again"))
            return slip.answer
        thread = self._thread
        if thread is None or not thread.is_alive():
            with self._start:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="slip-writer", daemon=True)
                    self._thread.start()
        self._queue.put(slip)
        return slip.answer

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
                _answer(left, SlipsStoppedError("the API stopped before the slip was written; send it again"))

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
        try:
            outcomes = self.service.run(lambda session: _together(self.service, session, batch))
        except UNAVAILABLE as error:
            log.warning("a batch of %d bet slips: the database is unavailable (%s)", len(batch), error)
            outcomes = [_own(error) for _ in batch]
        except Exception:  # anything else: each slip is placed alone, where its own error is its answer
            log.warning("a batch of %d bet slips failed as a whole; placing them one by one", len(batch), exc_info=True)
            outcomes = [None] * len(batch)
        for slip, outcome in zip(batch, outcomes, strict=True):
            _answer(slip, _alone(self.service, slip) if outcome is None else outcome)


def _answer(slip: Pending, outcome: dict[str, Any] | BaseException) -> None:
    """Give the slip's request its answer, unless it stopped waiting (its future cancelled: a client gone)."""
    if not slip.answer.set_running_or_notify_cancel():
        return
    try:
        if isinstance(outcome, BaseException):
            slip.answer.set_exception(outcome)
        else:
            slip.answer.set_result(outcome if slip.then is None else slip.then(outcome))
    except Exception as error:  # the answer's own model refused it: the request is told, the writer goes on
        slip.answer.set_exception(error)


def _own(error: BaseException) -> BaseException:
    """A copy of ``error`` for one slip (an exception raised to several requests would gather their tracebacks)."""
    try:
        return copy.copy(error)
    except Exception:  # an exception that cannot be copied: the one instance
        return error


def _alone(service: RoundCore, slip: Pending) -> dict[str, Any] | BaseException:
    try:
        return slip.adapter.place_bets(service, slip.player, slip.round_id, slip.bets, slip.key)
    except Exception as error:  # handed to the request that waits for it
        return error


Outcome = dict[str, Any] | BaseException | None  # the answer, the refusal, or None: place it alone


@dataclass
class Accepted:
    """A slip the batch places: its plan, and the accounts its holds move between."""

    slip: Pending
    plan: Slip
    currency: str
    wallet: int
    escrow: int


def _together(service: RoundCore, session: Session, batch: list[Pending]) -> list[Outcome]:
    """The batch's transaction: every slip's outcome in batch order (``None``: place it alone after the commit)."""
    outcomes: list[Outcome] = [None] * len(batch)
    claimed = _claimed(session, batch, outcomes)
    now = service.clock.now()
    rounds = _betting_rounds(service, session, batch, claimed, outcomes)
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
    owns = _own_wagers(session, batch, live)
    balances = {account: row.balance for rows in locked.values() for account, row in rows.items()}
    accepted: list[Accepted] = []
    for i in live:
        slip = batch[i]
        currency = currencies[slip.round_id]
        wallet, escrow = accounts[currency][slip.player]
        try:
            plan = _judged(service, slip, rounds[slip.round_id], owns[(slip.round_id, slip.player)], now,
                           balances[wallet], currency)  # fmt: skip
        except REFUSALS as refusal:
            outcomes[i] = refusal
            continue
        balances[wallet] -= plan.holding()
        owns[(slip.round_id, slip.player)] = [OwnWager(w, *spot) for w, spot in plan.wagers.items()]
        outcomes[i] = {"round_id": slip.round_id, "wagers": plan.answer(), "balance": balances[wallet]}
        accepted.append(Accepted(slip, plan, currency, wallet, escrow))
    idempotency.release(session, [batch[i].key for i in claimed if isinstance(outcomes[i], BaseException)])
    if accepted:
        _write(session, accepted, ledgers, locked, now)
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


def _betting_rounds(
    service: RoundCore, session: Session, batch: list[Pending], claimed: list[int], outcomes: list[Outcome]
) -> dict[str, Any]:
    """Each round of the slips under the shared lock (in id order), if betting is open; else its slips refused."""
    for i in claimed:
        if not batch[i].bets:
            outcomes[i] = RoundError("a bet slip needs at least one bet")
    rounds: dict[str, Any] = {}
    connection = session.connection()
    for round_id in sorted({batch[i].round_id for i in claimed if outcomes[i] is None}):
        slips = [i for i in claimed if batch[i].round_id == round_id and outcomes[i] is None]
        try:
            rounds[round_id] = batch[slips[0]].adapter._betting_round(service, connection, round_id)[0]
        except RoundError as refusal:
            for i in slips:
                outcomes[i] = _own(refusal)
    return rounds


OWN_BY_ROUND = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake, WAGERS.c.net, WAGERS.c.player)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player.in_(bindparam("players", expanding=True)))
    .order_by(WAGERS.c.seq)
)
OWN_BY_ROUND_ANY = text(  # PostgreSQL: the players as one array
    "SELECT id, side, seat, stake, net, player FROM wagers WHERE round_id = :round_id "
    "AND player = ANY(CAST(:players AS text[])) ORDER BY seq"
)


def _own_wagers(session: Session, batch: list[Pending], live: list[int]) -> dict[tuple[str, str], list[Any]]:
    """Every live slip's player's wagers in its round, by one statement per round."""
    owns: dict[tuple[str, str], list[Any]] = {(batch[i].round_id, batch[i].player): [] for i in live}
    connection = session.connection()
    for round_id in sorted({batch[i].round_id for i in live}):
        players = sorted({batch[i].player for i in live if batch[i].round_id == round_id})
        statement = OWN_BY_ROUND_ANY if connection.dialect.name == "postgresql" else OWN_BY_ROUND
        for row in connection.execute(statement, {"round_id": round_id, "players": players}):
            owns[(round_id, row.player)].append(OwnWager(row.id, row.side, row.seat, row.stake, row.net))
    return owns


def _judged(
    service: RoundCore, slip: Pending, round_: Any, own: list[Any], now: datetime, balance: int, currency: str
) -> Slip:
    """The slip planned against the player's wagers so far (the game's rules) and the wallet's balance so far."""
    adapter = slip.adapter
    settings = service.round_settings(slip.round_id, round_.settings, adapter.game)
    plan = adapter._plan(settings, slip.player, slip.round_id, own, slip.bets, now)
    for _, amount in plan.holds:
        if type(amount) is not int or amount <= 0:
            raise InvalidAmountError(f"hold amount must be a positive whole number, got {amount!r}")
    needed = plan.holding()
    if balance < needed:  # as ``Ledger.post_many`` words it on the one-slip path
        raise InsufficientFundsError(f"insufficient funds: {slip.player} wallet holds {balance} {currency}, "
                                     f"{needed} needed")  # fmt: skip
    return plan


def _write(
    session: Session, accepted: list[Accepted], ledgers: dict[str, Ledger], locked: dict[str, dict[int, Locked]],
    now: datetime,
) -> None:  # fmt: skip
    """The accepted slips' holds (one per wager a slip bets on), their transfers into escrow, and their wagers."""
    stamp = utcnow()
    rows: list[dict[str, Any]] = []
    owners: list[Accepted] = []
    for each in accepted:
        amounts: dict[str, int] = {}
        for wager_id, amount in each.plan.holds:
            amounts[wager_id] = amounts.get(wager_id, 0) + amount
        for wager_id, amount in amounts.items():
            rows.append({"player": each.slip.player, "currency": each.currency, "amount": amount,
                         "round_id": each.slip.round_id, "wager_id": wager_id, "created_at": stamp})  # fmt: skip
            owners.append(each)
    connection = session.connection()
    hold_ids = _inserted_holds(connection, rows)
    movements: dict[str, list[Movement]] = defaultdict(list)
    for row, each, hold_id in zip(rows, owners, hold_ids, strict=True):
        movements[each.currency].append(
            Movement(each.wallet, each.escrow, row["amount"], "hold", row["round_id"], row["wager_id"], hold_id)
        )
    for currency, moves in movements.items():
        ledgers[currency].post_many(moves, locked[currency])
    new = [row for each in accepted for row in each.plan.new.values()]
    if new and connection.dialect.name == "postgresql":
        columns = {name: [row[name] for row in new] for name in ("id", "round_id", "player", "side", "seat", "stake")}
        connection.execute(WAGERS_MANY, {**columns, "now": now})
    elif new:
        connection.execute(NEW_WAGERS, new)
    added: dict[str, int] = defaultdict(int)  # a wager two slips of the batch raise is raised once, by both
    for each in accepted:
        for wager_id, add in each.plan.raises.items():
            added[wager_id] += add
    if not added:
        return
    if connection.dialect.name == "postgresql":
        connection.execute(RAISE_MANY, {"ids": list(added), "adds": list(added.values()), "now": now})
    else:
        connection.execute(RAISE_WAGERS, [{"wager_id": w, "add": add, "now": now} for w, add in added.items()])


def _inserted_holds(connection: Connection, rows: list[dict[str, Any]]) -> list[int]:
    """Insert the holds; their ids, in the order of ``rows``."""
    if connection.dialect.name != "postgresql":
        return list(connection.scalars(INSERT_HOLDS, rows))
    columns = {name: [row[name] for row in rows] for name in ("player", "currency", "amount", "round_id", "wager_id")}
    where: dict[tuple[str, int], list[int]] = defaultdict(list)  # each hold's row by its wager and amount
    for n, row in enumerate(rows):
        where[(row["wager_id"], row["amount"])].append(n)
    ids = [0] * len(rows)
    for hold_id, wager_id, amount in connection.execute(HOLD_MANY, {**columns, "now": rows[0]["created_at"]}):
        ids[where[(wager_id, amount)].pop()] = hold_id  # two rows alike (a wager raised twice alike) are one to us
    return ids
