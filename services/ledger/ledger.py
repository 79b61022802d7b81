"""The ledger: double-entry transfers between accounts, two-phase holds, debts.

A ``Ledger`` works inside its caller's transaction (one ``Session``) and never commits: the
service that owns the business transaction does. Every balance change goes through a
conditional ``UPDATE`` that refuses to take a never-negative account below zero, so the check
and the change are one atomic statement on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from services.ledger.errors import InsufficientFundsError, InvalidAmountError
from services.ledger.models import MAY_GO_NEGATIVE, Account, AccountKind, Hold, HoldStatus, Transfer, utcnow

SYSTEM = ""  # the owner of system accounts (house, cash, commission)
PLAYER_KINDS = (AccountKind.WALLET, AccountKind.HOLD, AccountKind.RECEIVABLE)


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
        self.request_key: str | None = None  # stamped on every transfer posted while set

    # ---- accounts --------------------------------------------------------------------

    def account(self, kind: AccountKind, owner: str = SYSTEM) -> int:
        """The id of the account, created on first use (safely under concurrent first uses)."""
        cached = self._ids.get((kind, owner))
        if cached is not None:
            return cached
        kinds = PLAYER_KINDS if kind in PLAYER_KINDS else (kind,)
        self._create_missing(owner, kinds)
        rows = self.session.execute(
            select(Account.kind, Account.id).where(
                Account.owner == owner, Account.currency == self.currency, Account.kind.in_(list(kinds))
            )
        )
        for row_kind, row_id in rows:
            self._ids[(row_kind, owner)] = row_id
        return self._ids[(kind, owner)]

    def balance(self, kind: AccountKind, owner: str = SYSTEM) -> int:
        value = self.session.scalar(select(Account.balance).where(Account.id == self.account(kind, owner)))
        return int(value or 0)

    def wallet(self, player: str) -> int:
        return self.balance(AccountKind.WALLET, player)

    def debt(self, player: str) -> int:
        return -self.balance(AccountKind.RECEIVABLE, player)

    def _create_missing(self, owner: str, kinds: Iterable[AccountKind]) -> None:
        now = utcnow()
        rows = [
            {"kind": str(kind), "owner": owner, "currency": self.currency, "balance": 0, "created_at": now}
            for kind in kinds
        ]
        dialect = self.session.get_bind().dialect.name
        statement: Any = (pg_insert if dialect == "postgresql" else sqlite_insert)(Account).values(rows)
        self.session.execute(statement.on_conflict_do_nothing())

    # ---- posting ---------------------------------------------------------------------

    def post(self, movement: Movement) -> None:
        self.post_many([movement])

    def post_many(self, movements: list[Movement]) -> None:
        """Apply balance changes (accounts in id order, so concurrent batches cannot deadlock), then record."""
        deltas: dict[int, int] = defaultdict(int)
        for movement in movements:
            if type(movement.amount) is not int or movement.amount <= 0:
                raise InvalidAmountError(f"transfer amount must be a positive whole number, got {movement.amount!r}")
            deltas[movement.debit] -= movement.amount
            deltas[movement.credit] += movement.amount
        for account_id in sorted(deltas):
            self._change_balance(account_id, deltas[account_id])
        if movements:
            now = utcnow()
            self.session.execute(
                insert(Transfer),
                [
                    {
                        "debit_account_id": m.debit,
                        "credit_account_id": m.credit,
                        "amount": m.amount,
                        "currency": self.currency,
                        "kind": m.kind,
                        "round_id": m.round_id,
                        "wager_id": m.wager_id,
                        "hold_id": m.hold_id,
                        "request_key": self.request_key,
                        "memo": m.memo,
                        "created_at": now,
                    }
                    for m in movements
                ],
            )

    def _change_balance(self, account_id: int, delta: int) -> None:
        if delta == 0:
            return
        statement = update(Account).where(Account.id == account_id)
        if delta < 0:
            may_go_negative = Account.kind.in_([str(kind) for kind in MAY_GO_NEGATIVE])
            statement = statement.where(or_(may_go_negative, Account.balance + delta >= 0))
        result = self.session.execute(statement.values(balance=Account.balance + delta).returning(Account.id))
        if result.first() is None:
            kind, owner, balance = self.session.execute(
                select(Account.kind, Account.owner, Account.balance).where(Account.id == account_id)
            ).one()
            raise InsufficientFundsError(
                f"insufficient funds: {owner or 'system'} {kind} holds {balance} {self.currency}, {-delta} needed"
            )

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
        taken = min(-delta, self.wallet(player))
        owed = -delta - taken
        movements = []
        if taken:
            movements.append(Movement(wallet, house, taken, "adjustment", round_id=round_id, memo=memo))
        if owed:
            receivable = self.account(AccountKind.RECEIVABLE, player)
            movements.append(Movement(receivable, house, owed, "debt", round_id=round_id, memo=memo))
        self.post_many(movements)
        return owed

    # ---- holds -----------------------------------------------------------------------

    def hold(self, player: str, amount: int, round_id: str, wager_id: str) -> int:
        """Move ``amount`` from the wallet into escrow as a pending hold; returns the hold id."""
        if type(amount) is not int or amount <= 0:
            raise InvalidAmountError(f"hold amount must be a positive whole number, got {amount!r}")
        hold_id = self.session.scalar(
            insert(Hold)
            .values(
                player=player,
                currency=self.currency,
                amount=amount,
                round_id=round_id,
                wager_id=wager_id,
                status=HoldStatus.PENDING,
                created_at=utcnow(),
            )
            .returning(Hold.id)
        )
        assert hold_id is not None
        hold_id = int(hold_id)
        wallet, escrow = self.account(AccountKind.WALLET, player), self.account(AccountKind.HOLD, player)
        self.post(Movement(wallet, escrow, amount, "hold", round_id=round_id, wager_id=wager_id, hold_id=hold_id))
        return hold_id

    def claim_holds(self, round_id: str, status: HoldStatus) -> list[tuple[int, str, str, int]]:
        """Resolve every pending hold of the round at once: (id, player, wager_id, amount) of each.

        The conditional UPDATE is what makes "posted or voided exactly once" hold under concurrency:
        a second claimer finds no pending rows.
        """
        rows = self.session.execute(
            update(Hold)
            .where(Hold.round_id == round_id, Hold.status == HoldStatus.PENDING, Hold.currency == self.currency)
            .values(status=status, resolved_at=utcnow())
            .returning(Hold.id, Hold.player, Hold.wager_id, Hold.amount)
        ).all()
        return sorted((int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows)

    def void_holds(self, round_id: str) -> int:
        """Return every pending hold of the round to its wallet; returns how many were voided."""
        claimed = self.claim_holds(round_id, HoldStatus.VOIDED)
        self.post_many(
            [
                Movement(
                    self.account(AccountKind.HOLD, player),
                    self.account(AccountKind.WALLET, player),
                    amount,
                    "release",
                    round_id=round_id,
                    wager_id=wager_id,
                    hold_id=hold_id,
                )
                for hold_id, player, wager_id, amount in claimed
            ]
        )
        return len(claimed)
