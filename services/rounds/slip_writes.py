"""What a batch of bet slips writes (``services.rounds.slips``): each statement once per batch, fed arrays on
PostgreSQL (no statement text built per batch size, no value converted one by one) and lists of rows on SQLite."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, insert, select, text
from sqlalchemy.orm import Session

from services.ledger.ledger import HOLDS, Ledger, Locked, Movement
from services.ledger.models import AccountKind, utcnow
from services.rounds.house import NEW_WAGERS, RAISE_WAGERS, WAGERS, Slip
from services.rounds.stakes import Debited
from services.wallet.models import WalletCallRecord
from services.wallet.outbox import SeamlessWallet
from services.wallet.seamless import MIRROR_IN, refuse_if_rolled_back

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


OWN_BY_ROUND = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake, WAGERS.c.net, WAGERS.c.player)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player.in_(bindparam("players", expanding=True)))
    .order_by(WAGERS.c.seq)
)
OWN_BY_ROUND_ANY = text(  # PostgreSQL: the players as one array
    "SELECT id, side, seat, stake, net, player FROM wagers WHERE round_id = :round_id "
    "AND player = ANY(CAST(:players AS text[])) ORDER BY seq"
)


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


def own_wagers(session: Session, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[Any]]:
    """The wagers of each ``(round, player)`` so far, by one statement per round."""
    owns: dict[tuple[str, str], list[Any]] = {pair: [] for pair in pairs}
    connection = session.connection()
    for round_id in sorted({round_id for round_id, _ in pairs}):
        players = sorted({player for each, player in pairs if each == round_id})
        statement = OWN_BY_ROUND_ANY if connection.dialect.name == "postgresql" else OWN_BY_ROUND
        for row in connection.execute(statement, {"round_id": round_id, "players": players}):
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
    for each in accepted:  # an operator's-wallet slip: its debit's answer kept and mirrored into the wallet first
        if each.debited is not None:
            movements[each.currency].append(_mirrored(session, ledgers[each.currency], each))
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


def _mirrored(session: Session, ledger: Ledger, each: Accepted) -> Movement:
    """The operator's accepted debit of the slip's stake: its answer recorded (if not before), its outbox row marked
    mirrored; the mirror's movement (``cash → wallet``) to post with the batch's holds."""
    debited = each.debited
    assert debited is not None
    debit = debited.debit
    row: WalletCallRecord | None
    if debited.tries:
        row = SeamlessWallet.answered(session, debited.request_id, debited.answer, debited.tries)
    else:
        row = session.get(WalletCallRecord, debited.request_id, with_for_update=True)
    if row is None or row.status != "ok" or row.amount != debit.amount or row.player != each.player:
        raise AssertionError(f"the stake {debit.transaction} has no accepted debit of {debit.amount}")
    refuse_if_rolled_back(session, debit.transaction)
    row.mirrored_at = utcnow()
    cash = ledger.account(AccountKind.CASH)
    return Movement(cash, each.wallet, debit.amount, MIRROR_IN, each.round_id, memo=debit.transaction)
