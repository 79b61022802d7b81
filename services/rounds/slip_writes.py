"""What a batch of bet slips writes (``services.rounds.slips``): each statement once per batch, fed arrays on
PostgreSQL (no statement text built per batch size, no value converted one by one) and lists of rows on SQLite."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, Table, bindparam, func, insert, select, update
from sqlalchemy.orm import Session

from services.db.sql import Raw, execute
from services.ledger.ledger import HOLDS, Ledger, Locked, Movement
from services.ledger.models import AccountKind, utcnow
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.house import NEW_WAGERS, RAISE_WAGERS, WAGERS, Slip
from services.rounds.stakes import Debited
from services.wallet.models import OK, WalletCallRecord
from services.wallet.outbox import first_answer
from services.wallet.seamless import MIRROR_IN, DebitRolledBackError, rollback_of, rolled_back_words

INSERT_HOLDS = insert(HOLDS).returning(HOLDS.c.id, sort_by_parameter_order=True)  # one hold id per row, in order
# On PostgreSQL the same fed as arrays (no statement text built per batch size, no value converted one by one)
HOLD_MANY = Raw(
    "INSERT INTO holds (player, currency, amount, round_id, wager_id, created_at) "
    "SELECT h.player, h.currency, h.amount, h.round_id, h.wager_id, :now FROM unnest(CAST(:player AS text[]), "
    "CAST(:currency AS text[]), CAST(:amount AS bigint[]), CAST(:round_id AS text[]), CAST(:wager_id AS text[])) "
    "WITH ORDINALITY AS h(player, currency, amount, round_id, wager_id, n) ORDER BY h.n RETURNING id, wager_id, amount"
)
WAGERS_MANY = Raw(  # the new wagers in the order given (``seq``: the order of first placement)
    "INSERT INTO wagers (id, round_id, player, side, seat, stake, net, created_at, updated_at) "
    "SELECT w.id, w.round_id, w.player, w.side, w.seat, w.stake, NULL, :now, :now FROM unnest(CAST(:id AS text[]), "
    "CAST(:round_id AS text[]), CAST(:player AS text[]), CAST(:side AS text[]), CAST(:seat AS text[]), "
    "CAST(:stake AS bigint[])) WITH ORDINALITY AS w(id, round_id, player, side, seat, stake, n) ORDER BY w.n"
)
RAISE_MANY = Raw(
    "UPDATE wagers SET stake = wagers.stake + r.add, updated_at = :now "
    "FROM unnest(CAST(:ids AS text[]), CAST(:adds AS bigint[])) AS r(id, add) WHERE wagers.id = r.id"
)


OWN_BY_ROUND = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake, WAGERS.c.net, WAGERS.c.player)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player.in_(bindparam("players", expanding=True)))
    .order_by(WAGERS.c.seq)
)
OWN_BY_ROUND_ANY = Raw(  # PostgreSQL: the players as one array
    "SELECT id, side, seat, stake, net, player FROM wagers WHERE round_id = :round_id "
    "AND player = ANY(CAST(:players AS text[])) ORDER BY seq"
)


ROUNDS_READ = "betting_rounds"  # session.info: the rounds this transaction read under the shared lock


def betting_rounds(
    service: RoundCore, session: Session, batch: Sequence[Any], slips: list[int], outcomes: list[Any]
) -> dict[str, Any]:
    """The rounds of the batch's ``slips`` (each with an ``adapter`` and a ``round_id``) under the shared lock, in id
    order, where betting is open; the slips of any other are refused in ``outcomes``."""
    rounds: dict[str, Any] = {}
    connection = session.connection()
    read: dict[str, Any] = session.info.setdefault(ROUNDS_READ, {})  # the batch's placing and pricing read each once
    for round_id in sorted({batch[i].round_id for i in slips}):
        theirs = [i for i in slips if batch[i].round_id == round_id]
        if round_id not in read:
            try:
                read[round_id] = batch[theirs[0]].adapter._betting_round(service, connection, round_id)[0]
            except RoundError as refusal:
                read[round_id] = refusal
        if isinstance(read[round_id], RoundError):
            for i in theirs:
                outcomes[i] = own_error(read[round_id])
        else:
            rounds[round_id] = read[round_id]
    return rounds


def own_error(error: BaseException) -> BaseException:
    """A copy of ``error`` for one slip (an exception raised to several requests would gather their tracebacks)."""
    try:
        return copy.copy(error)
    except Exception:  # an exception that cannot be copied: the one instance
        return error


class OwnWager(NamedTuple):
    """A player's wager as the slip's plan reads it (``OWN_WAGERS``' columns)."""

    id: str
    side: str
    seat: str
    stake: int
    net: int | None = None


@dataclass
class Accepted:
    """A slip the batch places: its plan, and the accounts its holds (and an operator's debit) move between."""

    player: str
    round_id: str
    debited: Debited | None
    plan: Slip
    currency: str
    wallet: int
    escrow: int

    mirror: Mirror | None = None  # its debit's outbox row as the placing writes it (``checked_debit``)

    @property
    def debit_of(self) -> Debited:
        assert self.debited is not None
        return self.debited


def own_wagers(session: Session, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[Any]]:
    """The wagers of each ``(round, player)`` so far, by one statement per round."""
    owns: dict[tuple[str, str], list[Any]] = {pair: [] for pair in pairs}
    connection = session.connection()
    for round_id in sorted({round_id for round_id, _ in pairs}):
        players = sorted({player for each, player in pairs if each == round_id})
        statement = OWN_BY_ROUND_ANY if connection.dialect.name == "postgresql" else OWN_BY_ROUND
        for row in execute(connection, statement, {"round_id": round_id, "players": players}):
            owns[(round_id, row.player)].append(OwnWager(row.id, row.side, row.seat, row.stake, row.net))
    return owns


def written(
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
            rows.append({"player": each.player, "currency": each.currency, "amount": amount,
                         "round_id": each.round_id, "wager_id": wager_id, "created_at": stamp})  # fmt: skip
            owners.append(each)
    connection = session.connection()
    hold_ids = _inserted_holds(connection, rows)
    movements: dict[str, list[Movement]] = defaultdict(list)
    debited = [each for each in accepted if each.debited is not None]
    for each, mirror in zip(debited, _mirrors(connection, ledgers, debited) if debited else [], strict=True):
        movements[each.currency].append(mirror)  # an operator's-wallet slip: its debit mirrored into the wallet first
    for row, each, hold_id in zip(rows, owners, hold_ids, strict=True):
        movements[each.currency].append(
            Movement(each.wallet, each.escrow, row["amount"], "hold", row["round_id"], row["wager_id"], hold_id)
        )
    for currency, moves in movements.items():
        ledgers[currency].post_many(moves, locked[currency])
    new = [row for each in accepted for row in each.plan.new.values()]
    if new and connection.dialect.name == "postgresql":
        columns = {name: [row[name] for row in new] for name in ("id", "round_id", "player", "side", "seat", "stake")}
        execute(connection, WAGERS_MANY, {**columns, "now": now})
    elif new:
        connection.execute(NEW_WAGERS, new)
    added: dict[str, int] = defaultdict(int)  # a wager two slips of the batch raise is raised once, by both
    for each in accepted:
        for wager_id, add in each.plan.raises.items():
            added[wager_id] += add
    if not added:
        return
    if connection.dialect.name == "postgresql":
        execute(connection, RAISE_MANY, {"ids": list(added), "adds": list(added.values()), "now": now})
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
    for hold_id, wager_id, amount in execute(connection, HOLD_MANY, {**columns, "now": rows[0]["created_at"]}):
        ids[where[(wager_id, amount)].pop()] = hold_id  # two rows alike (a wager raised twice alike) are one to us
    return ids


CALLS = cast(Table, WalletCallRecord.__table__)
LOCK_DEBITS = (
    select(CALLS.c.request_id, CALLS.c.transaction_id, CALLS.c.status, CALLS.c.amount, CALLS.c.player, CALLS.c.answer)
    .where(CALLS.c.request_id.in_(bindparam("ids", expanding=True)))
    .order_by(CALLS.c.request_id)
    .with_for_update()
)
LOCK_DEBITS_ANY = Raw(  # PostgreSQL: the ids as one array (one statement text whatever the batch's size)
    "SELECT request_id, transaction_id, status, amount, player, answer FROM wallet_calls "
    "WHERE request_id = ANY(CAST(:ids AS text[])) ORDER BY request_id FOR UPDATE"
)
CALLS_MANY = Raw(  # PostgreSQL: a batch's new outbox rows, fed as arrays
    "INSERT INTO wallet_calls (request_id, transaction_id, kind, player, amount, currency, round_id, body, status, "
    "attempts, last_error, created_at, purpose) SELECT c.request_id, c.transaction_id, c.kind, c.player, c.amount, "
    "c.currency, c.round_id, c.body, 'pending', 0, '', :now, c.purpose FROM unnest(CAST(:request_id AS text[]), "
    "CAST(:transaction_id AS text[]), CAST(:kind AS text[]), CAST(:player AS text[]), CAST(:amount AS bigint[]), "
    "CAST(:currency AS text[]), CAST(:round_id AS text[]), CAST(:body AS text[]), CAST(:purpose AS text[])) "
    "AS c(request_id, transaction_id, kind, player, amount, currency, round_id, body, purpose)"
)
FOUND_CALLS = select(CALLS).where(CALLS.c.transaction_id.in_(bindparam("ids", expanding=True)))
FOUND_CALLS_ANY = Raw("SELECT * FROM wallet_calls WHERE transaction_id = ANY(CAST(:ids AS text[]))")
MIRRORED = (
    update(CALLS)
    .where(CALLS.c.request_id == bindparam("b_id"))
    .values(status=bindparam("b_status"), answer=bindparam("b_answer"),
            answered_at=func.coalesce(bindparam("b_answered_at"), CALLS.c.answered_at),
            attempts=CALLS.c.attempts + bindparam("b_tries"), mirrored_at=bindparam("b_now"))
)  # fmt: skip
MIRRORED_MANY = Raw(
    "UPDATE wallet_calls SET status = m.status, answer = m.answer, "
    "answered_at = COALESCE(m.answered_at, wallet_calls.answered_at), attempts = wallet_calls.attempts + m.tries, "
    "mirrored_at = :now FROM unnest(CAST(:id AS text[]), CAST(:status AS text[]), CAST(:answer AS text[]), "
    "CAST(:tries AS integer[]), CAST(:answered_at AS timestamptz[])) AS m(request_id, status, answer, tries, "
    "answered_at) WHERE wallet_calls.request_id = m.request_id"
)


def insert_calls(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """New pending outbox rows (``row_of``'s, each with no answer yet, none mirrored), by one statement."""
    if connection.dialect.name != "postgresql":
        connection.execute(insert(CALLS), rows)
        return
    names = ("request_id", "transaction_id", "kind", "player", "amount", "currency", "round_id", "body", "purpose")
    if any(row["original_transaction_id"] or row["mirrored_at"] or row["status"] != "pending" for row in rows):
        raise AssertionError("insert_calls records new pending calls only")
    execute(connection, CALLS_MANY, {**{name: [row[name] for row in rows] for name in names},
                                    "now": rows[0]["created_at"]})  # fmt: skip


def found_calls(connection: Connection, transactions: list[str]) -> list[Any]:
    """The outbox rows recorded for any of the transaction ids, by one statement."""
    if not transactions:
        return []
    statement = FOUND_CALLS_ANY if connection.dialect.name == "postgresql" else FOUND_CALLS
    return execute(connection, statement, {"ids": transactions})


def locked_debits(session: Session, debited: list[Debited]) -> tuple[dict[str, Any], set[str]]:
    """The debits' outbox rows locked (in id order), and which of their transactions were rolled back — read after
    the lock, so a rollback recorded under it (``SeamlessWallet.rollback``) is seen: one statement each."""
    connection = session.connection()
    statement = LOCK_DEBITS_ANY if connection.dialect.name == "postgresql" else LOCK_DEBITS
    ids = sorted(each.request_id for each in debited)
    rows = {row.request_id: row for row in execute(connection, statement, {"ids": ids})}
    rollbacks = [rollback_of(each.debit.transaction) for each in debited]
    return rows, {row.transaction_id for row in found_calls(connection, rollbacks)}


class Mirror(NamedTuple):
    """How a checked debit's outbox row is written when its stake is placed: its status and answer (the operator's
    first, recorded now if ``answered``) and the attempts the request's call took."""

    request_id: str
    status: str
    answer: str | None
    answered: bool
    tries: int


def checked_debit(debited: Debited, player: str, rows: dict[str, Any], rolled_back: set[str]) -> Mirror:
    """The debit's row as the placing writes it, if the stake may be placed with it (``mirror_stake``'s checks):
    refused if its transaction was rolled back (a mirror and a rollback of one debit never both happen)."""
    debit, row = debited.debit, rows.get(debited.request_id)
    if row is None:
        raise AssertionError(f"the stake {debit.transaction} has no recorded debit")
    first = first_answer(row.request_id, row.status, row.answer, debited.answer) if debited.tries else None
    status, answer = first if first is not None else (row.status, row.answer)
    if status != OK or row.amount != debit.amount or row.player != player:
        raise AssertionError(f"the stake {debit.transaction} has no accepted debit of {debit.amount} for {player}")
    if rollback_of(debit.transaction) in rolled_back:
        raise DebitRolledBackError(rolled_back_words(debit.transaction))
    return Mirror(row.request_id, status, answer, first is not None, debited.tries)


def _mirrors(connection: Connection, ledgers: dict[str, Ledger], debited: list[Accepted]) -> list[Movement]:
    """The operator's accepted debits of the slips' stakes (checked: ``checked_debit``): each outbox row written as
    its ``Mirror`` says and marked mirrored, by one statement; the mirrors' movements (``cash → wallet``) to post with
    the batch's holds."""
    now = utcnow()
    movements = []
    cash = {currency: ledger.account(AccountKind.CASH) for currency, ledger in ledgers.items()}
    updates = [{"b_id": m.request_id, "b_status": m.status, "b_answer": m.answer, "b_tries": m.tries,
                "b_answered_at": now if m.answered else None, "b_now": now}
               for m in (each.mirror for each in debited if each.mirror is not None)]  # fmt: skip
    for each in debited:
        debit = each.debit_of.debit
        source = cash[each.currency]
        movements.append(Movement(source, each.wallet, debit.amount, MIRROR_IN, each.round_id, memo=debit.transaction))
    if connection.dialect.name == "postgresql":  # one statement fed arrays, not one per row
        columns = {name: [row[f"b_{name}"] for row in updates] for name in ("id", "status", "answer", "tries",
                                                                             "answered_at")}  # fmt: skip
        execute(connection, MIRRORED_MANY, {**columns, "now": now})
    else:
        connection.execute(MIRRORED, updates)
    return movements
