"""One table's shoe journal and deck reports, read and written for its controller.

The controller decides what becomes of each shoe message; this is where that is kept and read back: a message's
journal row (written with whatever else must commit with it), whether a message is journaled already, what a
restarted controller rebuilds from, where the shoe's feed resumes, the cards operators entered by hand, and the
deck report that holds the table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Table, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from services.bus.feed import FeedStart, stamp_time
from services.bus.messages import ShoeCard, ShoeMessage, jpeg_bytes
from services.cards import Card, DeckCount, DeckTracker
from services.db.unit_of_work import run_transaction
from services.journal.models import DECK_HELD, DECK_OK, MANUAL_SHOE, DeckReport, ShoeJournal

log = logging.getLogger("studio.journal")
# the boot id of a message journaled apart from the shoe's sequence (a forgery, a replay, one the feed had moved past)
# begins so: it never counts as a card of this table's shoe, nor as where the feed stands
UNTRUSTED = "untrusted-"
JOURNAL_INSERT = insert(cast(Table, ShoeJournal.__table__))

Message = ShoeMessage
Also = Callable[[Session, ShoeJournal], None]  # more to write in the journal row's transaction
Guard = Callable[[Session], None]  # inside a write: refuses it if this writer lost the table (the lease's fence)


@dataclass(frozen=True)
class HeldReport:
    """A deck report that holds the table until an operator acknowledges it."""

    id: int
    count: DeckCount

    def text(self) -> str:
        """What the dealer is told: counts, never card names (a missing card's code may be a face-down card's in the
        deck after it; the operator's page names them, under its own rules)."""
        return (
            f"deck not whole: {len(self.count.missing)} missing, {len(self.count.doubled)} seen twice: the table is "
            f"held until an operator acknowledges deck report #{self.id} (count the cards)"
        )


@dataclass(frozen=True)
class Replayed:
    """What a restarted controller rebuilds from the journal."""

    deck: DeckTracker  # the deck since its last shuffle
    read_to: int  # the newest journal row (a card entered by hand after it is news)
    last: tuple[str, int]  # (boot, seq) of the last message of the table's own shoe (("", 0): none)
    held: HeldReport | None  # the deck report that holds the table
    rows: Sequence[Any]

    def refusals(self, round_id: str) -> list[tuple[str, datetime, str | None]]:
        """The round's refused messages, in order: why, when, and the card if the refusal named it."""
        return [
            (row.reason, row.received_at, row.card if row.card and f"card {row.card} " in row.reason else None)
            for row in self.rows
            if row.disposition == "refused" and row.round_id == round_id
        ]


@dataclass(frozen=True)
class TableJournal:
    sessions: sessionmaker[Session]
    table_id: str
    shoe_id: str  # the table's own shoe

    def entry(
        self, message: Message, disposition: str, reason: str, round_id: str | None, now: datetime
    ) -> dict[str, Any]:
        """The journal row of a message as the controller disposed of it (its columns' values)."""
        card = message.card if isinstance(message, ShoeCard) else None
        read = (message.source, message.confidence) if isinstance(message, ShoeCard) else ("", None)
        crop = message.crop if isinstance(message, ShoeCard) else ""
        stamped = stamp_time(message.ts)
        return dict(
            table_id=self.table_id, shoe_id=message.shoe_id, boot_id=message.boot_id, seq=message.seq,
            kind=message.type, card=card, burn=isinstance(message, ShoeCard) and message.burn,
            disposition=disposition, reason=reason[:500], round_id=round_id, video_tc=message.video_tc,
            source=read[0], confidence=read[1], raw=message.raw, received_at=now,
            stamped_at=stamped.astimezone(UTC) if stamped is not None else None,
            crop=(jpeg_bytes(crop) or None) if crop else None,
        )  # fmt: skip

    def write(self, entry: dict[str, Any], fence: Guard, also: Also | None = None) -> bool:
        """Journal the row (with what ``also`` writes, in the same transaction); False if it was already."""

        def work(session: Session) -> None:
            fence(session)
            row = ShoeJournal(**entry)
            session.add(row)
            if also is not None:
                also(session, row)

        try:
            run_transaction(self.sessions, work)
        except IntegrityError:
            log.info("table %s: shoe message %s already journaled", self.table_id, entry["seq"])
            return False
        return True

    @staticmethod
    def add(session: Session, entry: dict[str, Any]) -> None:
        """Journal the row in the caller's transaction (a dealt card's, with the card): one Core statement."""
        session.connection().execute(JOURNAL_INSERT, entry)

    def has(self, message: Message) -> bool:
        """Whether this very message (its shoe, run and seq) is in the journal."""
        with self.sessions() as session:
            found = session.scalar(
                select(ShoeJournal.id).where(
                    ShoeJournal.table_id == self.table_id, ShoeJournal.shoe_id == message.shoe_id,
                    ShoeJournal.boot_id == message.boot_id, ShoeJournal.seq == message.seq,
                )
            )  # fmt: skip
        return found is not None

    def own(self, shoe_id: str, boot_id: str) -> bool:
        """Whether a journaled message came from this table's shoe (not another shoe's, not a forgery in its name)."""
        return shoe_id == self.shoe_id and not boot_id.startswith(UNTRUSTED)

    def replay(self, decks: int) -> Replayed:
        """The table's journal replayed: the deck since its last shuffle (a shoe of ``decks`` decks), where the shoe's
        sequence stands, and the report holding the table."""
        with self.sessions() as session:
            rows = session.execute(
                select(
                    ShoeJournal.kind, ShoeJournal.card, ShoeJournal.disposition, ShoeJournal.reason,
                    ShoeJournal.round_id, ShoeJournal.received_at, ShoeJournal.shoe_id, ShoeJournal.boot_id,
                    ShoeJournal.seq, ShoeJournal.id,
                )
                .where(ShoeJournal.table_id == self.table_id)
                .order_by(ShoeJournal.id)
            ).all()  # fmt: skip
            held = self._held(session)
        deck = DeckTracker(decks=decks)
        for row in rows:
            if row.kind == "new_deck" and row.disposition == "deck":  # not another shoe's, refused
                deck.shuffle()
            elif row.disposition in ("dealt", "burn") and row.card:
                deck.record(Card.from_code(row.card))
            elif row.disposition == "refused" and row.card and self.own(row.shoe_id, row.boot_id):
                deck.note_refused(Card.from_code(row.card))
        own = [row for row in rows if self.own(row.shoe_id, row.boot_id)]
        last = (own[-1].boot_id, int(own[-1].seq)) if own else ("", 0)
        return Replayed(deck, max((row.id for row in rows), default=0), last, held, rows)

    def feed_start(self) -> FeedStart:
        """Where the shoe's feed resumes: after the last message of the shoe's sequence taken (its run and seq — not
        the highest seq of any run: a run that lost its outbox counts from 1 again), knowing the newest stamp taken.
        A message journaled apart (a forgery copying a real stamp, a replay) does not count: it must not make a
        restarted controller skip the real message with that ``seq`` (found by the simulation)."""
        own = (
            ShoeJournal.table_id == self.table_id,
            ShoeJournal.shoe_id == self.shoe_id,
            ~ShoeJournal.boot_id.startswith(UNTRUSTED),
        )
        with self.sessions() as session:
            last = session.execute(
                select(ShoeJournal.boot_id, ShoeJournal.seq).where(*own).order_by(ShoeJournal.id.desc()).limit(1)
            ).first()
            # a row journaled before stamps were kept has only its time of receipt: later than its stamp, so never
            # less strict
            stamped = func.coalesce(ShoeJournal.stamped_at, ShoeJournal.received_at)
            newest = session.scalar(select(func.max(stamped)).where(*own))
        if last is None:
            return FeedStart()
        if newest is not None and newest.tzinfo is None:
            newest = newest.replace(tzinfo=UTC)
        return FeedStart(int(last.seq) + 1, last.boot_id, newest)

    def manual_cards(self, after: int) -> list[tuple[int, Card | None]]:
        """The cards operators entered by hand (journaled by the API's approval) after journal row ``after``."""
        with self.sessions() as session:
            rows = session.execute(
                select(ShoeJournal.id, ShoeJournal.card).where(
                    ShoeJournal.table_id == self.table_id, ShoeJournal.shoe_id == MANUAL_SHOE,
                    ShoeJournal.id > after, ShoeJournal.disposition == "dealt",
                )
            ).all()  # fmt: skip
        return [(row.id, Card.from_code(row.card) if row.card else None) for row in rows]

    def report(
        self, session: Session, ended_by: ShoeJournal, count: DeckCount, round_id: str | None, now: datetime
    ) -> int:
        """Inside the new deck's journal transaction: the report of the deck that ended (its id)."""
        session.flush()  # the journal row's id
        row = DeckReport(
            table_id=self.table_id, shoe_id=ended_by.shoe_id, round_id=round_id, ended_by=ended_by.id,
            seen=count.seen, missing=" ".join(map(str, count.missing)), doubled=" ".join(map(str, count.doubled)),
            status=DECK_OK if count.clean else DECK_HELD, created_at=now,
        )  # fmt: skip
        session.add(row)
        session.flush()
        return row.id

    def held(self) -> HeldReport | None:
        with self.sessions() as session:
            return self._held(session)

    def acknowledged_by(self, report_id: int) -> str | None:
        """Who acknowledged the report (None: it still holds the table, or there is no such report)."""
        with self.sessions() as session:
            found = session.execute(
                select(DeckReport.status, DeckReport.acknowledged_by).where(DeckReport.id == report_id)
            ).first()
        if found is None or found.status == DECK_HELD:
            return None
        return str(found.acknowledged_by)

    def _held(self, session: Session) -> HeldReport | None:
        """The table's oldest deck report still holding it."""
        found = session.execute(
            select(DeckReport.id, DeckReport.missing, DeckReport.doubled, DeckReport.seen)
            .where(DeckReport.table_id == self.table_id, DeckReport.status == DECK_HELD)
            .order_by(DeckReport.id)
            .limit(1)
        ).first()
        if found is None:
            return None
        missing, doubled = (tuple(map(Card.from_code, codes.split())) for codes in (found.missing, found.doubled))
        return HeldReport(found.id, DeckCount(found.seen, missing, doubled))
