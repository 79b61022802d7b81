"""What an operator reads of rounds (game recall, evidence, money): every round of a table by state and time, and a
round in full — its log, every shoe message journaled for it, its wagers and every money movement.

Operators see everything of an ended round. While a round is being dealt, the cards no one may see yet (the
banker's face-down card, a player's own hand) stay ``null`` here too: the log, the journal and the wagers are read
by people who are not at the table. Nothing here locks or writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, aliased

from services.cards import Card
from services.games.base import FINISHED, PUBLIC
from services.journal.models import ShoeJournal
from services.ledger.models import Account, Hold, HoldResolution, Transfer
from services.rounds import checks
from services.rounds.clock import aware
from services.rounds.display import display_of
from services.rounds.engines import RECALCULATE
from services.rounds.errors import NotFoundError, RoundError
from services.rounds.models import GameTable, Round, RoundLogEntry
from services.rounds.returns import table_returns
from services.rounds.service import RoundService, stored_round
from services.rounds.video import video_link
from services.wallet.models import WalletCallRecord

STATES: Final = ("open", "settled", "void", "corrected")
CARD_CODE: Final = re.compile(r"[2-9TJQKA][SHDC]")
CORRECTION: Final = json.dumps({"type": RECALCULATE})[:-1]  # how the service logs a recalculation begins
PAGE_MAX: Final = 200


class AuditQueryError(RoundError):
    code = "invalid_query"


def checked_limit(limit: int) -> int:
    """A page size an operator may ask for (1–``PAGE_MAX``)."""
    if not 1 <= limit <= PAGE_MAX:
        raise AuditQueryError(f"limit must be 1–{PAGE_MAX}, got {limit}")
    return limit


@dataclass(frozen=True)
class RoundsQuery:
    """Which rounds: by table, state (open, settled, void, corrected: settled, then recalculated from the video) and
    the time they opened (``since`` ≤ opened < ``until``; UTC when a time names no zone), newest first."""

    table: str | None = None
    state: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 50


def rounds(service: RoundService, query: RoundsQuery) -> list[dict[str, Any]]:
    """The rounds ``query`` asks for, newest first."""
    table, state, limit = query.table, query.state, query.limit
    since, until = (aware(moment) if moment else None for moment in (query.since, query.until))
    if state is not None and state not in STATES:
        raise AuditQueryError(f"state {state!r} is not one of {', '.join(STATES)}")
    checked_limit(limit)
    corrected = exists().where(RoundLogEntry.round_id == Round.id, RoundLogEntry.command.startswith(CORRECTION))
    select_ = select(Round, corrected.label("corrected"))
    if table is not None:
        select_ = select_.where(Round.table_id == table)
    if since is not None:
        select_ = select_.where(Round.opened_at >= since)
    if until is not None:
        select_ = select_.where(Round.opened_at < until)
    if state == "open":
        select_ = select_.where(Round.phase.not_in(FINISHED))
    elif state == "void":
        select_ = select_.where(Round.phase == "void")
    elif state == "settled":
        select_ = select_.where(Round.phase == "settled", ~corrected)
    elif state == "corrected":
        select_ = select_.where(corrected)
    with service.sessions() as session:
        rows = session.execute(select_.order_by(Round.opened_at.desc(), Round.id.desc()).limit(limit)).all()
        return [_header(round_, bool(was_corrected)) for round_, was_corrected in rows]


def tables(service: RoundService, table_id: str | None = None) -> list[dict[str, Any]]:
    """Every table (or the one named) as operators see it: game, currency, settings, the returns of its bets, where
    its video is watched."""
    query = select(GameTable).order_by(GameTable.id)
    with service.sessions() as session:
        rows = session.scalars(query if table_id is None else query.where(GameTable.id == table_id)).all()
    if table_id is not None and not rows:
        raise NotFoundError(f"table {table_id!r} does not exist")
    games = service.games
    return [
        {"table_id": t.id, "game": t.game, "currency": t.currency, "settings": json.loads(t.settings),
         "returns": table_returns(games.adapter(t.game), games.game(t.game).settings(json.loads(t.settings))),
         "allow_return_over_100": t.allow_return_over_100, "video_url_template": t.video_url_template,
         "display": display_of(t), "wallet": t.wallet,
         "verify": {"mode": t.verify, "window_ms": t.verify_window_ms}, "manual_cards": t.manual_cards}
        for t in rows
    ]  # fmt: skip


def round_audit(service: RoundService, round_id: str) -> dict[str, Any]:
    """One round in full: header, log, shoe journal, wagers, money movements (hidden cards ``null`` until it ends)."""
    with service.sessions() as session:
        round_ = stored_round(session, round_id)
        shown: set[str] | None = None  # an ended round's cards are all shown
        port = service.game_of(session, round_)
        with service.reading(session, round_) as engine:  # at the log length read above
            if round_.phase not in FINISHED:
                shown = _public_cards(port, engine)
            cards = _cards(port.cards(engine), port.positions(engine), shown)
        log = _log(session, round_id, round_.log_length, shown)
        stakes = service.adapter_of(session, round_).stakes(session, round_)
        template = session.scalar(select(GameTable.video_url_template).where(GameTable.id == round_.table_id)) or ""
        shoe = _shoe(session, round_id, shown)
        for row in shoe:
            row["video_url"] = video_link(
                template, table=round_.table_id, round_id=round_id, video_tc=row["video_tc"], video_ref=round_.video_ref
            )
        first_tc = next((row["video_tc"] for row in shoe if row["video_tc"]), "")
        return _header(round_, any(entry["command"].get("type") == RECALCULATE for entry in log)) | {
            "video_url": video_link(
                template, table=round_.table_id, round_id=round_id, video_tc=first_tc, video_ref=round_.video_ref
            ),
            "result": json.loads(round_.result) if round_.result else None,
            "cards": cards,
            "dealt_at": _dealt_at(log, len(cards)),
            "log": log,
            "shoe": shoe,
            "wagers": stakes,  # the game's own (its adapter's ``stakes``)
            "money": _money(session, round_id),
            "holds": _holds(session, round_id),
            "wallet_calls": _wallet_calls(session, round_id),
            "checks": _card_checks(session, round_id, _hidden(service, session, round_id)),
        }


def card_checks(service: RoundService, round_id: str) -> list[dict[str, Any]]:
    """The round's face-up cards checked against the overhead camera (``services.rounds.checks``)."""
    with service.sessions() as session:
        stored_round(session, round_id)
        return _card_checks(session, round_id, _hidden(service, session, round_id))


def _card_checks(session: Session, round_id: str, hidden: set[str]) -> list[dict[str, Any]]:
    """The checks, a camera's read that happens to name a card still face down left out (the camera cannot have
    seen it: a misread, but its code is not said before the reveal)."""
    rows = checks.every(session, round_id)
    for row in rows:
        if row["camera_card"] in hidden:
            row["camera_card"] = None
        has_crop = row.pop("has_crop")
        row["crop_url"] = f"/v1/operator/rounds/{round_id}/checks/{row['position']}/crop" if has_crop else None
    return rows


def _wallet_calls(session: Session, round_id: str) -> list[dict[str, Any]]:
    """The round's calls to the operator's wallet (an operator's-wallet table) and what the operator answered."""
    rows = session.scalars(
        select(WalletCallRecord).where(WalletCallRecord.round_id == round_id).order_by(WalletCallRecord.created_at)
    )
    return [
        {"transaction_id": r.transaction_id, "purpose": r.purpose, "kind": r.kind, "player": r.player,
         "amount": r.amount, "status": r.status, "attempts": r.attempts,
         "answer": json.loads(r.answer) if r.answer else None, "last_error": r.last_error or None}
        for r in rows
    ]  # fmt: skip


def _cards(dealt: list[Card], positions: list[str | None], shown: set[str] | None) -> list[dict[str, Any]]:
    """Every card dealt, in shoe order — the index a correction names — with the hand it went to (while the round
    is dealt, a card still face down is ``null`` and so is its hand)."""
    return [
        {"index": index, "card": str(card), "position": position}
        if shown is None or str(card) in shown
        else {"index": index, "card": None, "position": None}
        for index, (card, position) in enumerate(zip(dealt, positions, strict=True))
    ]


def _dealt_at(log: list[dict[str, Any]], count: int) -> list[str]:
    """When each card was dealt, by its index in ``cards`` (each game's deal command names its card): where its
    moment is in the table camera's recording. Empty when the log's deals and the cards do not line up."""
    dealt = [entry["at"] for entry in log if "card" in entry["command"]]
    return dealt if len(dealt) == count else []


def _log(session: Session, round_id: str, length: int, shown: set[str] | None) -> list[dict[str, Any]]:
    """The log up to ``length`` (what ``shown`` was computed at: a later entry may be a card not yet judged)."""
    query = select(RoundLogEntry).where(RoundLogEntry.round_id == round_id, RoundLogEntry.seq <= length)
    entries = session.scalars(query.order_by(RoundLogEntry.seq))
    return [
        {"seq": entry.seq, "command": _redact(json.loads(entry.command), shown), "actor": entry.actor,
         "at": aware(entry.created_at).isoformat()}
        for entry in entries
    ]  # fmt: skip


def _shoe(session: Session, round_id: str, shown: set[str] | None) -> list[dict[str, Any]]:
    """Every shoe message journaled while the round was current: dealt, burned, refused (with why), new decks. A
    refused card is named only where its refusal named it (another shoe's card may be another table's face-down
    card); while the round is dealt, only the cards its public view shows."""
    has_crop = ShoeJournal.crop.is_not(None).label("has_crop")
    query = select(ShoeJournal, has_crop).where(ShoeJournal.round_id == round_id).order_by(ShoeJournal.id)
    return [
        {"seq": row.seq, "boot_id": row.boot_id, "shoe_id": row.shoe_id, "kind": row.kind,
         "card": row.card if _named(row, shown) else None, "burn": row.burn, "disposition": row.disposition,
         "reason": row.reason, "video_tc": row.video_tc, "received_at": aware(row.received_at).isoformat(),
         "source": row.source, "confidence": row.confidence, "raw": row.raw if _named(row, shown) else None,
         "crop_url": f"/v1/operator/evidence/{row.id}" if cropped and _named(row, shown) else None}
        for row, cropped in session.execute(query)
    ]  # fmt: skip


def evidence(service: RoundService, journal_id: int) -> bytes:
    """A camera card's crop (JPEG), if the operator may see that card now (not while it is a live round's
    face-down card, never another shoe's refused card)."""
    with service.sessions() as session:
        row = session.get(ShoeJournal, journal_id)
        crop = row.crop if row is not None else None
        if row is None or crop is None:
            raise NotFoundError(f"shoe message #{journal_id} has no camera crop")
        shown = _shown(service, session, row.round_id)
        if not _named(row, shown):
            raise NotFoundError(f"shoe message #{journal_id}: its card may not be shown now")
        return crop


def _hidden(service: RoundService, session: Session, round_id: str) -> set[str]:
    """The cards of a live round no one may see yet (none once it has ended)."""
    round_ = session.get(Round, round_id)
    if round_ is None or round_.phase in FINISHED:
        return set()
    port = service.game_of(session, round_)
    with service.reading(session, round_) as engine:
        return {str(card) for card in port.hidden(engine, PUBLIC)}


def _shown(service: RoundService, session: Session, round_id: str | None) -> set[str] | None:
    """The cards of a live round its public view shows (None: the round has ended, or there is none)."""
    round_ = session.get(Round, round_id) if round_id else None
    if round_ is None or round_.phase in FINISHED:
        return None
    port = service.game_of(session, round_)
    with service.reading(session, round_) as engine:
        return _public_cards(port, engine)


def _public_cards(port: Any, engine: Any) -> set[str]:
    """The dealt cards a round's public view shows (its face-down ones are not among them)."""
    return {str(card) for card in port.cards(engine)} - {str(c) for c in port.hidden(engine, PUBLIC)}


def _header(round_: Round, corrected: bool) -> dict[str, Any]:
    state = "open" if round_.phase not in FINISHED else "corrected" if corrected else round_.phase
    return {
        "round_id": round_.id, "table_id": round_.table_id, "number": round_.number, "phase": round_.phase,
        "state": state, "opened_at": aware(round_.opened_at).isoformat(),
        "settled_at": aware(round_.settled_at).isoformat() if round_.settled_at else None,
        "voided_at": aware(round_.voided_at).isoformat() if round_.voided_at else None,
        "video_ref": round_.video_ref,
    }  # fmt: skip


def _money(session: Session, round_id: str) -> list[dict[str, Any]]:
    """Every transfer of the round, in order: what moved from which account to which, and why."""
    debit, credit = aliased(Account), aliased(Account)
    rows = session.execute(
        select(Transfer, debit.kind, debit.owner, credit.kind, credit.owner)
        .join(debit, Transfer.debit_account_id == debit.id)
        .join(credit, Transfer.credit_account_id == credit.id)
        .where(Transfer.round_id == round_id)
        .order_by(Transfer.id)
    ).all()
    return [
        {"id": t.id, "kind": t.kind, "amount": t.amount, "currency": t.currency,
         "from": {"account": str(from_kind), "owner": from_owner}, "to": {"account": str(to_kind), "owner": to_owner},
         "wager_id": t.wager_id, "hold_id": t.hold_id, "memo": t.memo, "at": aware(t.created_at).isoformat()}
        for t, from_kind, from_owner, to_kind, to_owner in rows
    ]  # fmt: skip


def _holds(session: Session, round_id: str) -> list[dict[str, Any]]:
    """Every hold of the round and how it was resolved (``None`` while pending): the money transfers are summed per
    player, these lines say what each stake's hold gave up and won."""
    rows = session.execute(
        select(Hold, HoldResolution)
        .outerjoin(HoldResolution, HoldResolution.hold_id == Hold.id)
        .where(Hold.round_id == round_id)
        .order_by(Hold.id)
    ).all()
    return [
        {"hold_id": hold.id, "wager_id": hold.wager_id, "player": hold.player, "amount": hold.amount,
         "currency": hold.currency, "at": aware(hold.created_at).isoformat(),
         "resolution": None if line is None else {
             "status": str(line.status), "loss": line.loss, "win": line.win, "commission": line.commission,
             "at": aware(line.created_at).isoformat()}}
        for hold, line in rows
    ]  # fmt: skip


def _named(row: ShoeJournal, shown: set[str] | None) -> bool:
    if row.card is None:
        return False
    if row.disposition == "refused" and f"card {row.card} " not in row.reason:
        return False
    return shown is None or row.card in shown or row.disposition == "refused"


def _redact(value: Any, shown: set[str] | None) -> Any:
    """``value`` with every card code not in ``shown`` replaced by ``null`` (``shown`` None: nothing hidden)."""
    if shown is None:
        return value
    if isinstance(value, str):
        return None if CARD_CODE.fullmatch(value.upper()) and value.upper() not in shown else value
    if isinstance(value, list):
        return [_redact(item, shown) for item in value]
    if isinstance(value, dict):
        return {key: _redact(item, shown) for key, item in value.items()}
    return value
