"""Wallet requests: deposits and withdrawals (operator tools), balances and statements."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import run_transaction
from services.ledger import idempotency
from services.ledger.ledger import Ledger
from services.ledger.models import Account, AccountKind, Transfer


@dataclass(frozen=True, slots=True)
class StatementLine:
    transfer_id: int
    at: datetime
    kind: str
    amount: int  # signed: positive into the wallet
    round_id: str | None
    wager_id: str | None
    memo: str


class WalletService:
    def __init__(self, sessions: sessionmaker[Session], currency: str = "THB") -> None:
        self.sessions = sessions
        self.currency = currency

    def deposit(self, player: str, amount: int, key: str, actor: str) -> dict[str, Any]:
        return self._move("deposit", player, amount, key, actor)

    def withdraw(self, player: str, amount: int, key: str, actor: str) -> dict[str, Any]:
        return self._move("withdraw", player, amount, key, actor)

    def _move(self, op: str, player: str, amount: int, key: str, actor: str) -> dict[str, Any]:
        request = {"op": op, "player": player, "amount": amount, "currency": self.currency}

        def work(session: Session) -> dict[str, Any]:
            stored = idempotency.begin(session, key, actor, request)
            if stored is not None:
                return stored
            ledger = Ledger(session, self.currency)
            ledger.request_key = key
            (ledger.deposit if op == "deposit" else ledger.withdraw)(player, amount)
            return idempotency.finish(session, key, self._summary(ledger, player))

        return run_transaction(self.sessions, work)

    def balance(self, player: str) -> dict[str, Any]:
        with self.sessions() as session:
            return self._summary(Ledger(session, self.currency), player)

    def statement(self, player: str, before: int | None = None, limit: int = 50) -> list[StatementLine]:
        """The wallet's transfers, newest first; page with ``before`` = the last transfer id seen."""
        with self.sessions() as session:
            wallet = session.scalar(
                select(Account.id).where(
                    Account.kind == AccountKind.WALLET, Account.owner == player, Account.currency == self.currency
                )
            )
            if wallet is None:
                return []
            query = select(Transfer).where(
                or_(Transfer.debit_account_id == wallet, Transfer.credit_account_id == wallet)
            )
            if before is not None:
                query = query.where(Transfer.id < before)
            rows = session.scalars(query.order_by(Transfer.id.desc()).limit(limit)).all()
            return [
                StatementLine(
                    row.id,
                    row.created_at,
                    row.kind,
                    row.amount if row.credit_account_id == wallet else -row.amount,
                    row.round_id,
                    row.wager_id,
                    row.memo,
                )
                for row in rows
            ]

    def _summary(self, ledger: Ledger, player: str) -> dict[str, Any]:
        return {
            "player": player,
            "currency": self.currency,
            "balance": ledger.wallet(player),
            "held": ledger.balance(AccountKind.HOLD, player),
            "debt": ledger.debt(player),
        }
