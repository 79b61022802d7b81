"""Round records: tables, players, rounds, wagers and each round's append-only command log."""

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
from sqlalchemy.orm import Mapped, Session, mapped_column

from services.db.base import Base
from services.ledger.models import utcnow
from services.rounds.errors import NotFoundError

BIG_ID = BigInteger().with_variant(Integer(), "sqlite")


class Player(Base):
    """Anyone who calls the API: players, dealers, operators and admins, told apart by ``role``."""

    __tablename__ = "players"
    __table_args__ = (CheckConstraint("role IN ('player', 'dealer', 'operator', 'admin')", name="role_known"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # who issued the current token (an admin, the database's tools ``cli@HOST``; the holder's own rotation keeps it),
    # and, for an operator, who confirmed that token: unconfirmed, it proposes and decides nothing (staff.may_confirm)
    token_issued_by: Mapped[str] = mapped_column(String(64), default="", server_default="")
    confirmed_by: Mapped[str | None] = mapped_column(String(64))


class ThresholdChange(Base):
    """A player's auto-draw threshold from ``changed_at`` on: it applies to rounds opened after it."""

    __tablename__ = "threshold_changes"
    __table_args__ = (CheckConstraint("threshold BETWEEN 1 AND 5", name="threshold_range"),)

    id: Mapped[int] = mapped_column(BIG_ID, primary_key=True)
    player: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    threshold: Mapped[int] = mapped_column(Integer)
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class GameTable(Base):
    __tablename__ = "game_tables"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(3))
    settings: Mapped[str] = mapped_column(Text)  # JSON of the game's settings object
    # where operators watch a moment of the table's video: ``services.rounds.video`` fills in its fields
    video_url_template: Mapped[str] = mapped_column(String(500), default="")
    # an operator's explicit word that the settings may let a bet return 100 % or more (``services.rounds.returns``)
    allow_return_over_100: Mapped[bool] = mapped_column(Boolean, default=False)
    # how the table is shown: the overlay holds each change back this long (the viewers' stream latency), and the
    # language its overlay speaks (``services.rounds.display``)
    overlay_delay_ms: Mapped[int] = mapped_column(Integer, default=0)
    language: Mapped[str] = mapped_column(String(8), default="en")
    # how long a round's result stays up before the next round opens (null: the controller's own setting)
    result_pause_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # whose books hold the players' money: ``internal`` (the studio's ledger) or ``operator`` (the operator's
    # wallet, called over HTTP; the ledger mirrors each movement: ``services.wallet.seamless``); fixed at creation
    wallet: Mapped[str] = mapped_column(String(16), default="internal")
    # the shoe + camera cross-check (``services.rounds.checks``): off, warn (alert the dealer) or hold (settlement
    # waits for an operator's word on a card the camera did not confirm), and how long the camera has to see a card
    verify: Mapped[str] = mapped_column(String(8), default="off")
    verify_window_ms: Mapped[int] = mapped_column(Integer, default=3000)
    # whether a card the shoe could not read may be entered by hand: an operator's proposal that a second operator
    # approves (``services.rounds.manual``); off unless an operator turns it on
    manual_cards: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def locked_table(session: Session, table_id: str) -> GameTable:
    """The table, locked for a change of its settings; ``NotFoundError`` naming it if there is none."""
    table = session.get(GameTable, table_id, with_for_update=True)
    if table is None:
        raise NotFoundError(f"table {table_id!r} does not exist")
    return table


class Round(Base):
    __tablename__ = "rounds"
    __table_args__ = (
        UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),
        Index("ix_rounds_table_phase", "table_id", "phase"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("game_tables.id"))
    number: Mapped[int] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(16))
    settings: Mapped[str] = mapped_column(Text)  # the table's settings as they were when the round opened
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    betting_closes_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    window_closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    voided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    video_ref: Mapped[str] = mapped_column(String(128), default="")
    result: Mapped[str | None] = mapped_column(Text)  # JSON of the settled result, for history
    log_length: Mapped[int] = mapped_column(Integer, default=0)
    # A room dealt online: its committed shuffle. The commitment is public from the start; the deck (codes in
    # dealing order, comma-separated) and the salt only once the round is over (``state_header``).
    shuffle_commitment: Mapped[str | None] = mapped_column(String(64))
    shuffle_deck: Mapped[str | None] = mapped_column(Text)
    shuffle_salt: Mapped[str | None] = mapped_column(String(64))
    # the table's cross-check as the round opened (``GameTable.verify``), fixed for the round's life
    verify: Mapped[str] = mapped_column(String(8), default="off")
    verify_window_ms: Mapped[int] = mapped_column(Integer, default=3000)
    result_pause_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the table's, as the round opened


class Wager(Base):
    __tablename__ = "wagers"
    __table_args__ = (
        UniqueConstraint("round_id", "player", "side", "seat", name="uq_wagers_round_player_side_seat"),
        CheckConstraint("stake > 0", name="stake_positive"),
        Index("ix_wagers_player_round", "player", "round_id"),
    )

    seq: Mapped[int] = mapped_column(BIG_ID, primary_key=True)  # the order of first placement
    id: Mapped[str] = mapped_column(String(64), unique=True)
    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.id"))
    player: Mapped[str] = mapped_column(String(64))
    side: Mapped[str] = mapped_column(String(16))  # the spot: what the wager is on (Pok Deng: player | banker)
    seat: Mapped[str] = mapped_column(String(16))  # and where ("" in a game of one hand per side)
    stake: Mapped[int] = mapped_column(BigInteger)
    net: Mapped[int | None] = mapped_column(BigInteger)  # filled at settlement
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RoundLogEntry(Base):
    """One command applied to the round's engine, in order. Replaying the log rebuilds the round."""

    __tablename__ = "round_log"

    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    command: Mapped[str] = mapped_column(Text)  # JSON
    actor: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TableDealer(Base):
    """A dealer assigned to a table: only assigned dealers (and operators) see its dealer console."""

    __tablename__ = "table_dealers"

    table_id: Mapped[str] = mapped_column(ForeignKey("game_tables.id"), primary_key=True)
    dealer: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True, index=True)
    assigned_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ExperienceAward(Base):
    """The experience points (ĐKN) a Tiến Lên round gave a player who played it to the end; one row per round and
    player, so a round is never counted twice. A player's ĐKN is the sum of theirs."""

    __tablename__ = "experience_awards"
    __table_args__ = (Index("ix_experience_awards_player", "player"),)

    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.id"), primary_key=True)
    player: Mapped[str] = mapped_column(String(64), primary_key=True)
    points: Mapped[int] = mapped_column(BigInteger)
    awarded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Proposal(Base):
    """A correction or a void of a settled round, or a card entered by hand: proposed by one operator, applied or
    rejected by another (the database refuses a decision by the proposer). ``details``: what to do (JSON);
    ``preview``: what it would change, as computed when proposed (JSON)."""

    __tablename__ = "proposals"
    __table_args__ = (
        CheckConstraint("action IN ('void', 'correct', 'card')", name="proposal_action_known"),
        CheckConstraint("status IN ('pending', 'applied', 'rejected')", name="proposal_status_known"),
        CheckConstraint("decided_by IS NULL OR decided_by <> proposed_by", name="proposal_four_eyes"),
        Index("ix_proposals_round", "round_id"),
        Index("ix_proposals_status", "status", "id"),
    )

    id: Mapped[int] = mapped_column(BIG_ID, primary_key=True, autoincrement=True)
    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.id"))
    action: Mapped[str] = mapped_column(String(16))
    details: Mapped[str] = mapped_column(Text)
    preview: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    proposed_by: Mapped[str] = mapped_column(String(64))
    proposed_from: Mapped[str] = mapped_column(String(128))
    proposed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_by: Mapped[str | None] = mapped_column(String(64))
    decided_from: Mapped[str | None] = mapped_column(String(128))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    decision_reason: Mapped[str] = mapped_column(Text, default="", server_default="")


class CardCheck(Base):
    """A face-up card the shoe read, checked against what the overhead camera saw (``services.rounds.checks``).

    Opened in the transaction that shows the card (dealt face up, or revealed), ``pending`` until the camera sees a
    card: the same one (``agreed``) or another (``mismatch``); ``unseen`` when its window ends first. An operator's
    word on a disputed card makes it ``confirmed``, with the read they found right, who and why.
    """

    __tablename__ = "card_checks"
    __table_args__ = (
        CheckConstraint(
            "status IN ('pending', 'agreed', 'mismatch', 'unseen', 'confirmed')", name="card_check_status_known"
        ),
        CheckConstraint("confirmed_read IS NULL OR confirmed_read IN ('shoe', 'camera')", name="card_check_read"),
        Index("ix_card_checks_status", "status", "due_at"),
    )

    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)  # the card's index in shoe order (0-based)
    card: Mapped[str] = mapped_column(String(2))  # the shoe's read
    status: Mapped[str] = mapped_column(String(16))
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    checked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    camera_card: Mapped[str | None] = mapped_column(String(2))
    camera_confidence: Mapped[float | None] = mapped_column(Float)
    camera_crop: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)  # the camera's card as read (JPEG)
    confirmed_read: Mapped[str | None] = mapped_column(String(8))
    confirmed_by: Mapped[str | None] = mapped_column(String(64))
    confirmed_why: Mapped[str] = mapped_column(Text, default="")
    confirmed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class StaffEvent(Base):
    """The staff log, append-only: every change to a staff account (created, token reissued, a table given or taken)
    and every action a staff member was refused, with who, from where and why (``services.rounds.staff``)."""

    __tablename__ = "staff_events"
    __table_args__ = (Index("ix_staff_events_subject", "subject", "id"),)

    id: Mapped[int] = mapped_column(BIG_ID, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(64))  # an account id, or ``cli@HOST`` for the database's own tools
    actor_role: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(32))  # account_created | token_reissued | table_assigned | …
    subject: Mapped[str] = mapped_column(String(64), default="")  # whose account, or what was tried on
    # the account's role (account_created, token_reissued), the table (table_*), or ``METHOD PATH: code: why`` (refused)
    detail: Mapped[str] = mapped_column(Text, default="")
    address: Mapped[str] = mapped_column(String(128), default="")
