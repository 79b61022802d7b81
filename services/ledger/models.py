"""Ledger tables: accounts, immutable transfers, two-phase holds, idempotency keys.

Balances are kept on the account row and changed only in the same transaction as the transfer
that moves them; ``tests`` recompute them from the transfers to prove it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from services.db.base import Base


def utcnow() -> datetime:
    return datetime.now(UTC)


class AccountKind(StrEnum):
    WALLET = "wallet"  # a player's spendable money: never negative
    HOLD = "hold"  # a player's money held for open wagers and insurance: never negative
    RECEIVABLE = "receivable"  # what a player owes after a correction took back more than the wallet held
    HOUSE = "house"  # the house bankroll: wins and pays bets; may go negative
    COMMISSION = "commission"  # commission taken from winnings
    CASH = "cash"  # the outside world deposits come from and withdrawals go to; may go negative


MAY_GO_NEGATIVE = frozenset({AccountKind.RECEIVABLE, AccountKind.HOUSE, AccountKind.CASH})


class HoldStatus(StrEnum):
    """How a hold was resolved: its stake settled (``POSTED``) or handed back (``VOIDED``). A hold with no
    ``HoldResolution`` row is pending."""

    POSTED = "posted"
    VOIDED = "voided"


class Account(Base):
    __tablename__ = "accounts"
    __table_args__ = (
        UniqueConstraint("kind", "owner", "currency", name="uq_accounts_kind_owner_currency"),
        CheckConstraint("kind IN ('receivable', 'house', 'cash') OR balance >= 0", name="balance_not_negative"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    owner: Mapped[str] = mapped_column(String(64))  # the player id, or "" for system accounts
    currency: Mapped[str] = mapped_column(String(3))
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Transfer(Base):
    """One double-entry movement: ``amount`` leaves ``debit`` and reaches ``credit``. Never updated."""

    __tablename__ = "transfers"
    __table_args__ = (
        CheckConstraint("amount > 0", name="amount_positive"),
        CheckConstraint("debit_account_id <> credit_account_id", name="distinct_accounts"),
        Index("ix_transfers_round", "round_id"),
        Index("ix_transfers_debit", "debit_account_id", "id"),
        Index("ix_transfers_credit", "credit_account_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    # accounts and holds without foreign keys: the ledger writes only ids it has locked or claimed in the same
    # transaction (migration 0013 says why)
    debit_account_id: Mapped[int] = mapped_column(Integer)
    credit_account_id: Mapped[int] = mapped_column(Integer)
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    kind: Mapped[str] = mapped_column(String(24))
    round_id: Mapped[str | None] = mapped_column(String(64))
    wager_id: Mapped[str | None] = mapped_column(String(64))
    hold_id: Mapped[int | None] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"))
    request_key: Mapped[str | None] = mapped_column(String(128))
    memo: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Hold(Base):
    """A player's money moved into escrow for one stake. Never updated: it is resolved exactly once, posted or
    voided, by the one ``HoldResolution`` row that names it (the row's key on ``hold_id`` says "once")."""

    __tablename__ = "holds"
    __table_args__ = (
        CheckConstraint("amount > 0", name="amount_positive"),
        Index("ix_holds_round", "round_id", "id"),
        Index("ix_holds_player_round", "player", "round_id"),  # a player's rounds, for their history
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    player: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(3))
    amount: Mapped[int] = mapped_column(BigInteger)
    round_id: Mapped[str] = mapped_column(String(64))
    wager_id: Mapped[str] = mapped_column(String(64))  # the wager, or "insurance:<player>"
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HoldResolution(Base):
    """How one hold ended, as money: what of it went to the house (``loss``; the rest went back to the wallet),
    and under the stake's first hold what the house paid (``win``, gross) and the commission taken from it. A
    stake's net is ``sum(win - commission - loss)`` over its holds' rows. Never updated.

    The transfers a settlement posts are summed per player and kind (release, loss, win, commission): these rows
    are what ties each of them to the holds and stakes it resolved. Narrow on purpose — the round, stake, player and
    amount are the hold's (join on ``hold_id``): a settlement writes one per hold.
    """

    __tablename__ = "hold_resolutions"
    __table_args__ = (
        CheckConstraint("status IN ('posted', 'voided')", name="status_known"),
        CheckConstraint("loss >= 0", name="loss_not_negative"),
        CheckConstraint("win >= 0 AND commission >= 0 AND commission <= win", name="win_and_commission"),
    )

    hold_id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    status: Mapped[str] = mapped_column(String(8))
    loss: Mapped[int] = mapped_column(BigInteger, default=0)
    win: Mapped[int] = mapped_column(BigInteger, default=0)
    commission: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class IdempotencyKey(Base):
    """The first result of a money-moving request, returned again to a retry with the same key."""

    __tablename__ = "idempotency_keys"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    actor: Mapped[str] = mapped_column(String(64))
    request_hash: Mapped[str] = mapped_column(String(64))
    response: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
