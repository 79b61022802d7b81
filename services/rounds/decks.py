"""Shoe-end reconciliation as operators see it: each deck's report, and the acknowledgement that lifts a table's hold.

The round controller writes a report when a deck ends (``services.controller.table``): every card that left the shoe
— dealt, burned or refused — against the full deck. A deck not whole is ``held``: its table opens no round until an
operator who has counted the cards acknowledges the report, saying what they found. While the table's round is
dealt, a doubled card that is that round's face-down card is ``null`` here, as in the round's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db.unit_of_work import run_transaction
from services.games.base import FINISHED, PUBLIC
from services.journal.models import DECK_ACKNOWLEDGED, DECK_HELD, DECK_OK, DeckReport
from services.rounds.audit import AuditQueryError, checked_limit
from services.rounds.clock import aware
from services.rounds.errors import NotFoundError, RoundError
from services.rounds.models import Round
from services.rounds.proposals import Origin
from services.rounds.service import RoundService

STATUSES: Final = (DECK_OK, DECK_HELD, DECK_ACKNOWLEDGED)


class DeckReportError(RoundError):
    code = "deck_report_refused"


@dataclass(frozen=True)
class DecksQuery:
    """Which reports: by table and status (ok, held, acknowledged), newest first."""

    table: str | None = None
    status: str | None = None
    limit: int = 50


def reports(service: RoundService, query: DecksQuery) -> list[dict[str, Any]]:
    if query.status is not None and query.status not in STATUSES:
        raise AuditQueryError(f"status {query.status!r} is not one of {', '.join(STATUSES)}")
    select_ = select(DeckReport).order_by(DeckReport.id.desc()).limit(checked_limit(query.limit))
    if query.table is not None:
        select_ = select_.where(DeckReport.table_id == query.table)
    if query.status is not None:
        select_ = select_.where(DeckReport.status == query.status)
    with service.sessions() as session:
        rows = session.scalars(select_).all()
        hidden = {table: _face_down(service, session, table) for table in {row.table_id for row in rows}}
        return [_described(row, hidden[row.table_id]) for row in rows]


def acknowledge(service: RoundService, report_id: int, note: str, origin: Origin) -> dict[str, Any]:
    """The operator has counted the deck: the report is acknowledged with their note, and the table may deal again."""
    note = note.strip()
    if not note:
        raise RoundError("say what the count found (the note)")

    def work(session: Session) -> dict[str, Any]:
        report = session.get(DeckReport, report_id, with_for_update=True)
        if report is None:
            raise NotFoundError(f"deck report #{report_id} does not exist")
        if report.status != DECK_HELD:
            raise DeckReportError(f"deck report #{report_id} is {report.status}: nothing to acknowledge")
        report.status = DECK_ACKNOWLEDGED
        report.acknowledged_by, report.acknowledged_from = origin.operator, origin.address
        report.acknowledged_at, report.note = service.clock.now(), note[:1000]
        session.flush()
        return _described(report, _face_down(service, session, report.table_id))

    return run_transaction(service.sessions, work)


def _face_down(service: RoundService, session: Session, table_id: str) -> tuple[str | None, set[str]]:
    """The table's round being dealt, and its cards no one may see yet."""
    round_ = session.scalar(
        select(Round).where(Round.table_id == table_id, Round.phase.not_in(FINISHED)).order_by(Round.number.desc())
    )
    if round_ is None:
        return None, set()
    port = service.game_of(session, round_)
    with service.reading(session, round_) as engine:
        return round_.id, {str(card) for card in port.hidden(engine, PUBLIC)}


def _described(report: DeckReport, live: tuple[str | None, set[str]]) -> dict[str, Any]:
    """A report; while the round dealt when its deck ended is still dealt, no card is named (the cards missing from
    a deck changed mid-round are the complement of those dealt, its face-down card among them): only counts."""
    missing, doubled = report.missing.split(), report.doubled.split()
    round_id, face_down = live
    secret = report.round_id is not None and report.round_id == round_id and bool(face_down)
    return {
        "id": report.id, "table_id": report.table_id, "shoe_id": report.shoe_id, "status": report.status,
        "seen": report.seen, "missing_count": len(missing), "doubled_count": len(doubled),
        "missing": None if secret else [None if code in face_down else code for code in missing],
        "doubled": None if secret else [None if code in face_down else code for code in doubled],
        "at": aware(report.created_at).isoformat(),
        "acknowledged": None if report.acknowledged_by is None else {
            "by": report.acknowledged_by, "from": report.acknowledged_from, "note": report.note,
            "at": aware(report.acknowledged_at).isoformat() if report.acknowledged_at else None,
        },
    }  # fmt: skip
