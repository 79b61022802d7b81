"""The ledger: double-entry transfers between accounts, two-phase holds, debts.

A ``Ledger`` works inside its caller's transaction (one ``Session``) and never commits: the
service that owns the business transaction does. A batch of transfers locks its accounts in id
order, refuses to take a never-negative account below zero (the database's CHECK constraint
stands behind that), then changes every balance in one statement and writes the transfers in
one more: ``COPY`` on PostgreSQL, a batched ``INSERT`` on SQLite. A caller that already locked the
accounts (``lock``) passes what it read to ``post_many``, which then does not read them again.
The statements on these paths are prebuilt, so they hit SQLAlchemy's compiled cache.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.orm import Session

from services.db.sql import CHUNK, Raw, chunks, execute, insert_ignoring_conflicts
from services.ledger.errors import InsufficientFundsError, InvalidAmountError
from services.ledger.models import MAY_GO_NEGATIVE, Account, AccountKind, Hold, Transfer, utcnow

SYSTEM = ""  # the owner of system accounts (house, cash, commission)
PLAYER_KINDS = (AccountKind.WALLET, AccountKind.HOLD, AccountKind.RECEIVABLE)
TRANSFER_COLUMNS = (
    "debit_account_id", "credit_account_id", "amount", "currency", "kind", "round_id", "wager_id", "hold_id",
    "request_key", "memo", "created_at",
)  # fmt: skip
ACCOUNTS = cast(Table, Account.__table__)
HOLDS = cast(Table, Hold.__table__)
LOCK = (
    select(ACCOUNTS.c.id, ACCOUNTS.c.kind, ACCOUNTS.c.owner, ACCOUNTS.c.balance)
    .where(ACCOUNTS.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(ACCOUNTS.c.id)
    .with_for_update()
)
LOCK_ANY = Raw(  # PostgreSQL: one statement text whatever the number of ids (an array, not a list of parameters)
    "SELECT id, kind, owner, balance FROM accounts WHERE id = ANY(CAST(:ids AS bigint[])) ORDER BY id FOR UPDATE"
)
APPLY_POSTGRES = Raw(
    "UPDATE accounts SET balance = accounts.balance + d.delta "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:deltas AS bigint[])) AS d(id, delta) "
    "WHERE accounts.id = d.id"
)
APPLY_EACH = (
    update(ACCOUNTS)
    .where(ACCOUNTS.c.id == bindparam("account"))
    .values(balance=ACCOUNTS.c.balance + bindparam("delta"))
)
INSERT_HOLDS = insert(HOLDS).returning(HOLDS.c.wager_id, HOLDS.c.id)  # executemany: one compiled statement
INSERT_TRANSFERS = insert(cast(Table, Transfer.__table__))
COPY_TRANSFERS = f"COPY transfers ({', '.join(TRANSFER_COLUMNS)}) FROM STDIN"
COPY_CHUNK = 5_000  # rows per write to the COPY stream
COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


NULL = "\\N"


def escaped(value: str) -> str:
    """``value`` for COPY's text format (the common case, nothing to escape, costs four substring tests)."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(COPY_ESCAPES)
    return value


def _line(m: Movement, shared: tuple[str, str, str]) -> str:
    """A transfer's row in COPY's text format, in ``TRANSFER_COLUMNS`` order; ``shared``: the batch's currency,
    request key and time, formatted with their separators."""
    currency, key, now = shared
    round_id = NULL if m.round_id is None else escaped(m.round_id)
    wager_id = NULL if m.wager_id is None else escaped(m.wager_id)
    hold_id = NULL if m.hold_id is None else m.hold_id
    return (
        f"{m.debit}\t{m.credit}\t{m.amount}\t{currency}{escaped(m.kind)}\t{round_id}\t{wager_id}\t{hold_id}"
        f"{key}{escaped(m.memo)}{now}"
    )


def copy_line(row: Sequence[object]) -> str:
    """One row in COPY's text format: tab-separated, ``\\N`` for NULL, backslash escapes (several times faster
    than the driver's per-value ``write_row`` on a large batch)."""
    return "\t".join("\\N" if value is None else str(value).translate(COPY_ESCAPES) for value in row) + "\n"


@dataclass(frozen=True, slots=True)
class Locked:
    """An account row as read under its lock (``Ledger.lock``) in the current transaction."""

    kind: str
    owner: str
    balance: int


@dataclass(frozen=True, slots=True)
class Holds:
    """What ``Ledger.place_holds`` did: each wager's hold id, and the new balances of wallet and escrow."""

    ids: dict[str, int]
    balances: dict[int, int]


@dataclass(frozen=True, slots=True)
class Movement:
    """A transfer about to be posted; ``Ledger.post_many`` applies a batch of them at once."""

    debit: int
    credit: int
    amount: int
    kind: str
    round_id: str | None = None
    wager_id: str | None = None
    hold_id: int | None = None
    memo: str = ""


def validate_currency(currency: str) -> str:
    if not isinstance(currency, str) or len(currency) != 3 or not currency.isalpha() or not currency.isupper():
        raise InvalidAmountError(f"invalid currency: {currency!r} (expected a 3-letter code such as 'THB')")
    return currency


class Ledger:
    def __init__(self, session: Session, currency: str) -> None:
        self.session = session
        self.currency = validate_currency(currency)
        self._ids: dict[tuple[str, str], int] = {}
        self._dialect: str | None = None
        self.request_key: str | None = None  # stamped on every transfer posted while set

    @property
    def postgres(self) -> bool:
        if self._dialect is None:
            self._dialect = self.session.get_bind().dialect.name
        return self._dialect == "postgresql"

    # ---- accounts --------------------------------------------------------------------

    def account(self, kind: AccountKind, owner: str = SYSTEM) -> int:
        """The id of the account, created on first use (safely under concurrent first uses)."""
        known = self._ids.get((kind, owner))
        return known if known is not None else self.accounts(kind, [owner])[owner]

    def accounts(self, kind: AccountKind, owners: Iterable[str]) -> dict[str, int]:
        """The ids of many owners' accounts of one kind: one query when they exist, two more for any missing.

        A player's wallet, escrow and receivable are created together, so later look-ups find all three.
        """
        wanted = sorted({owner for owner in owners if (kind, owner) not in self._ids})
        kinds = PLAYER_KINDS if kind in PLAYER_KINDS else (kind,)
        self._load(wanted, kinds)
        missing = [owner for owner in wanted if (kind, owner) not in self._ids]
        if missing:
            now = utcnow()
            for chunk in chunks(missing, CHUNK // len(kinds)):
                rows = [
                    {"kind": str(k), "owner": owner, "currency": self.currency, "balance": 0, "created_at": now}
                    for owner in chunk
                    for k in kinds
                ]
                self.session.execute(insert_ignoring_conflicts(self.session, Account).values(rows))
            self._load(missing, kinds)
        return {owner: self._ids[(kind, owner)] for owner in owners}

    def know(self, kind: AccountKind, owner: str, account_id: int) -> None:
        """Tell the ledger an account id the caller already knows (committed earlier), sparing the look-up."""
        self._ids[(kind, owner)] = account_id

    def _load(self, owners: Sequence[str], kinds: Sequence[AccountKind]) -> None:
        for chunk in chunks(owners):
            rows = self.session.execute(
                select(Account.kind, Account.owner, Account.id).where(
                    Account.owner.in_(chunk), Account.currency == self.currency, Account.kind.in_(list(kinds))
                )
            )
            for row_kind, owner, row_id in rows:
                self._ids[(row_kind, owner)] = row_id

    def balance(self, kind: AccountKind, owner: str = SYSTEM) -> int:
        value = self.session.scalar(select(Account.balance).where(Account.id == self.account(kind, owner)))
        return int(value or 0)

    def wallet(self, player: str) -> int:
        return self.balance(AccountKind.WALLET, player)

    def debt(self, player: str) -> int:
        return -self.balance(AccountKind.RECEIVABLE, player)

    def debtors(self, players: Iterable[str]) -> list[str]:
        """Those of the players who owe money (one query; normally none)."""
        owners = sorted(set(players))
        found: list[str] = []
        for chunk in chunks(owners):
            found += self.session.scalars(
                select(Account.owner).where(
                    Account.kind == AccountKind.RECEIVABLE,
                    Account.currency == self.currency,
                    Account.owner.in_(chunk),
                    Account.balance < 0,
                )
            ).all()
        return sorted(found)

    # ---- posting ---------------------------------------------------------------------

    def post(self, movement: Movement) -> dict[int, int]:
        return self.post_many([movement])

    def post_many(self, movements: Sequence[Movement], locked: Mapping[int, Locked] | None = None) -> dict[int, int]:
        """Lock the accounts (in id order, so concurrent batches cannot deadlock), check, apply, record.

        Set-based whatever the batch size: one locking read, one balance update, one transfer write.
        ``locked``: accounts the caller already locked with ``lock`` in this transaction and has not
        changed since; they are not read again (any others are locked here). Returns the new balance
        of every account the batch touched.
        """
        deltas: dict[int, int] = defaultdict(int)
        for movement in movements:
            if type(movement.amount) is not int or movement.amount <= 0:
                raise InvalidAmountError(f"transfer amount must be a positive whole number, got {movement.amount!r}")
            deltas[movement.debit] -= movement.amount
            deltas[movement.credit] += movement.amount
        rows = dict(locked or {})
        missing = [account_id for account_id in deltas if account_id not in rows]
        if missing:
            rows.update(self.lock(missing))
        self._check(deltas, rows)
        changed = {account_id: delta for account_id, delta in deltas.items() if delta}
        if changed:
            self._apply(changed)
        if movements:
            self._record(movements)
        return {account_id: rows[account_id].balance + deltas[account_id] for account_id in deltas}

    def lock(self, account_ids: Iterable[int]) -> dict[int, Locked]:
        """Lock the accounts for update, in id order (so concurrent lockers cannot deadlock); read them."""
        connection = self.session.connection()
        ids = sorted(set(account_ids))
        parts = [{"ids": ids}] if self.postgres else [{"ids": list(chunk)} for chunk in chunks(ids)]
        rows: dict[int, Locked] = {}
        for part in parts:
            for account_id, kind, owner, balance in execute(connection, LOCK_ANY if self.postgres else LOCK, part):
                rows[account_id] = Locked(kind, owner, balance)
        return rows

    def _check(self, deltas: Mapping[int, int], rows: Mapping[int, Locked]) -> None:
        for account_id in sorted(deltas):
            row = rows.get(account_id)
            if row is not None and row.balance + deltas[account_id] < 0 and row.kind not in MAY_GO_NEGATIVE:
                raise InsufficientFundsError(
                    f"insufficient funds: {row.owner or 'system'} {row.kind} holds {row.balance} {self.currency}, "
                    f"{-deltas[account_id]} needed"
                )
        unknown = sorted(set(deltas) - set(rows))
        if unknown:
            raise InvalidAmountError(f"no account with id {unknown[0]}")

    def _apply(self, changed: dict[int, int]) -> None:
        connection = self.session.connection()
        if self.postgres:
            execute(connection, APPLY_POSTGRES, {"ids": list(changed), "deltas": list(changed.values())})
            return
        connection.execute(
            APPLY_EACH, [{"account": account_id, "delta": delta} for account_id, delta in changed.items()]
        )

    def _record(self, movements: Sequence[Movement]) -> None:
        now = utcnow()
        connection = self.session.connection()
        if self.postgres:
            driver = connection.connection.driver_connection
            assert driver is not None
            # what every row of the batch shares, formatted once: currency, request key, time
            key = NULL if self.request_key is None else escaped(self.request_key)
            shared = f"{self.currency}\t", f"\t{key}\t", f"\t{now}\n"
            cursor = driver.cursor()
            with cursor, cursor.copy(COPY_TRANSFERS) as copy:
                for chunk in chunks(movements, COPY_CHUNK):
                    copy.write("".join([_line(m, shared) for m in chunk]))
            return
        rows = [
            (m.debit, m.credit, m.amount, self.currency, m.kind, m.round_id, m.wager_id, m.hold_id,
             self.request_key, m.memo, now)
            for m in movements
        ]  # fmt: skip
        connection.execute(INSERT_TRANSFERS, [dict(zip(TRANSFER_COLUMNS, row, strict=True)) for row in rows])

    # ---- player money ----------------------------------------------------------------

    def deposit(self, player: str, amount: int, memo: str = "") -> None:
        self.post(
            Movement(
                self.account(AccountKind.CASH), self.account(AccountKind.WALLET, player), amount, "deposit", memo=memo
            )
        )
        self.recover_debt(player)

    def withdraw(self, player: str, amount: int, memo: str = "") -> None:
        self.post(
            Movement(
                self.account(AccountKind.WALLET, player),
                self.account(AccountKind.CASH),
                amount,
                "withdrawal",
                memo=memo,
            )
        )

    def recover_debt(self, player: str) -> int:
        """Move what the wallet can spare to the player's receivable; returns the amount recovered."""
        recovered = min(self.debt(player), self.wallet(player))
        if recovered > 0:
            self.post(
                Movement(
                    self.account(AccountKind.WALLET, player),
                    self.account(AccountKind.RECEIVABLE, player),
                    recovered,
                    "debt_recovery",
                )
            )
        return recovered

    def adjust(self, player: str, delta: int, round_id: str, memo: str) -> int:
        """A correction after settlement. Taking back more than the wallet holds records a debt.

        Returns the part recorded as debt (0 when the wallet covered it).
        """
        if delta == 0:
            return 0
        wallet, house = self.account(AccountKind.WALLET, player), self.account(AccountKind.HOUSE)
        if delta > 0:
            self.post(Movement(house, wallet, delta, "adjustment", round_id=round_id, memo=memo))
            self.recover_debt(player)
            return 0
        return self.take(player, -delta, "adjustment", round_id, memo=memo)

    def take(
        self, player: str, amount: int, kind: str, round_id: str, wager_id: str | None = None, memo: str = ""
    ) -> int:
        """Move ``amount`` from the player to the house: from the wallet as far as it goes, the rest recorded as
        the player's debt (never dropped). Returns the part recorded as debt."""
        wallet, house = self.account(AccountKind.WALLET, player), self.account(AccountKind.HOUSE)
        taken = min(amount, self.wallet(player))
        owed = amount - taken
        movements = []
        if taken:
            movements.append(Movement(wallet, house, taken, kind, round_id=round_id, wager_id=wager_id, memo=memo))
        if owed:
            receivable = self.account(AccountKind.RECEIVABLE, player)
            movements.append(Movement(receivable, house, owed, "debt", round_id, wager_id, memo=memo))
        self.post_many(movements)
        return owed

    # ---- holds -----------------------------------------------------------------------

    def hold(self, player: str, amount: int, round_id: str, wager_id: str) -> int:
        """Move ``amount`` from the wallet into escrow as a pending hold; returns the hold id."""
        return self.place_holds(player, round_id, [(wager_id, amount)]).ids[wager_id]

    def place_holds(
        self, player: str, round_id: str, stakes: Sequence[tuple[str, int]], locked: Mapping[int, Locked] | None = None
    ) -> Holds:
        """Hold each ``(wager_id, amount)`` from the player's wallet, all or none (a wager named twice: one hold
        of the sum); returns the hold ids and the new balances. ``locked`` as for ``post_many``."""
        amounts: dict[str, int] = {}
        for wager_id, amount in stakes:
            if type(amount) is not int or amount <= 0:
                raise InvalidAmountError(f"hold amount must be a positive whole number, got {amount!r}")
            amounts[wager_id] = amounts.get(wager_id, 0) + amount
        if not amounts:
            return Holds({}, {})
        now = utcnow()
        rows = [
            {"player": player, "currency": self.currency, "amount": amount, "round_id": round_id,
             "wager_id": wager_id, "created_at": now}
            for wager_id, amount in amounts.items()
        ]  # fmt: skip
        returned = self.session.connection().execute(INSERT_HOLDS, rows)
        hold_ids = {str(wager_id): int(hold_id) for wager_id, hold_id in returned}
        wallet, escrow = self.account(AccountKind.WALLET, player), self.account(AccountKind.HOLD, player)
        movements = [
            Movement(wallet, escrow, amount, "hold", round_id, wager_id, hold_ids[wager_id])
            for wager_id, amount in amounts.items()
        ]
        return Holds(hold_ids, self.post_many(movements, locked))
