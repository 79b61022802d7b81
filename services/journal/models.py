"""The shoe journal: every message the controller took from a table's shoe and what became of it, and each deck's
reconciliation when it ended. The controller writes them; the round service, the operator's tools and the audit read
them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from services.db.base import Base
from services.ledger.models import utcnow

MANUAL_SHOE = "manual"  # the journal's shoe for a card entered by hand on two operators' word (services.rounds.manual)


class ShoeJournal(Base):
    """One shoe message as the controller disposed of it: dealt, burn, refused (with why) or a new deck.

    Unique per ``(table, shoe, boot, seq)``: a message delivered twice is recorded once, and after a
    restart the controller resumes the shoe's feed after the last message of the shoe's sequence recorded
    here — its run (``boot_id``) and ``seq`` — knowing the newest stamp taken (``stamped_at``: a run of the
    shoe stamped no later is an old message sent again). A message that takes no place in the sequence (a
    forgery, a replay, one the feed had moved past) is journaled apart: its ``boot_id`` begins ``untrusted-``.
    """

    __tablename__ = "shoe_journal"
    __table_args__ = (
        UniqueConstraint("table_id", "shoe_id", "boot_id", "seq", name="uq_shoe_journal_message"),
        Index("ix_shoe_journal_table", "table_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64))
    shoe_id: Mapped[str] = mapped_column(String(64))
    boot_id: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))  # card | new_deck
    card: Mapped[str | None] = mapped_column(String(2))
    burn: Mapped[bool] = mapped_column(Boolean, default=False)
    disposition: Mapped[str] = mapped_column(String(16))  # dealt | burn | refused | deck
    reason: Mapped[str] = mapped_column(Text, default="")
    round_id: Mapped[str | None] = mapped_column(String(64))
    video_tc: Mapped[str] = mapped_column(String(16), default="")
    # the evidence: how the card was read (serial, camera, sim), the reader's confidence, the device's raw bytes
    source: Mapped[str] = mapped_column(String(16), default="")
    confidence: Mapped[float | None] = mapped_column(Float)
    raw: Mapped[str] = mapped_column(Text, default="")
    crop: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)  # a camera's card as read (JPEG)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stamped_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # the shoe's stamp (UTC); None: none


DECK_OK, DECK_HELD, DECK_ACKNOWLEDGED = "ok", "held", "acknowledged"


class DeckReport(Base):
    """A deck reconciled when it ended (a new deck loaded): every card that left the shoe against the full deck.

    Written in the transaction that journals the new deck. A deck not whole (``missing`` or ``doubled`` cards) is
    ``held``: the table opens no round until an operator acknowledges it, with a note of what they found.
    """

    __tablename__ = "deck_reports"
    __table_args__ = (
        Index("ix_deck_reports_table", "table_id", "status"),
        CheckConstraint("status IN ('ok', 'held', 'acknowledged')", name="deck_report_status_known"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64))
    shoe_id: Mapped[str] = mapped_column(String(64))
    # the round being dealt when the deck ended: until it ends, the report names no card (the cards missing from a
    # deck changed mid-round are the complement of those dealt, the face-down one among them)
    round_id: Mapped[str | None] = mapped_column(String(64))
    ended_by: Mapped[int] = mapped_column(  # the new deck's journal row
        BigInteger().with_variant(Integer(), "sqlite"), ForeignKey("shoe_journal.id"), unique=True
    )
    seen: Mapped[int] = mapped_column(Integer)
    missing: Mapped[str] = mapped_column(Text)  # card codes, space-separated
    doubled: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    acknowledged_by: Mapped[str | None] = mapped_column(String(64))
    acknowledged_from: Mapped[str | None] = mapped_column(String(128))
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    note: Mapped[str] = mapped_column(Text, default="")
