"""The outbox of calls to an operator's wallet: each call recorded before it is first sent, kept until answered."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from services.db.base import Base
from services.ledger.models import utcnow

PENDING, OK, REFUSED = "pending", "ok", "refused"

# why a call was made (what the studio does with its answer)
STAKE = "stake"  # a debit before a bet or insurance is accepted; mirrored when the stake is placed
PAYOUT = "payout"  # a credit of what a round (or its correction) gives back; mirrored when recorded
ROLLBACK = "rollback"  # a stake's debit undone (a void, or a stake that was not placed); mirrored when recorded
COLLECT = "collect"  # a debit of what a correction takes back; mirrored (paying the recorded debt) once accepted


class WalletCallRecord(Base):
    """One call (its exact signed body) and, once the operator has answered, its final answer."""

    __tablename__ = "wallet_calls"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'ok', 'refused')", name="wallet_call_status_known"),
        Index("ix_wallet_calls_status", "status", "created_at"),
        Index("ix_wallet_calls_round", "round_id"),
        Index("ix_wallet_calls_unmirrored", "purpose", "mirrored_at"),
    )

    request_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    transaction_id: Mapped[str] = mapped_column(String(128), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    player: Mapped[str] = mapped_column(String(64))
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    round_id: Mapped[str] = mapped_column(String(64))
    original_transaction_id: Mapped[str | None] = mapped_column(String(128))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(8), default=PENDING)
    answer: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    answered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    purpose: Mapped[str] = mapped_column(String(16))
    mirrored_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # the ledger's mirror written
