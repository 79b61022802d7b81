"""Reads: a round's public state, the current round of a table, a player's history.

Nothing here locks or writes. What a player sees of a live round is the public view: the
banker's face-down card stays hidden until its reveal, whoever asks.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, aliased

from services.journal.models import ShoeJournal
from services.ledger.models import Account, Hold, Transfer
from services.rounds.clock import aware
from services.rounds.display import display_of
from services.rounds.errors import NotFoundError
from services.rounds.models import GameTable, Round, RoundLogEntry
from services.rounds.service import RoundService, as_seen, result_nets, stored_round

HISTORY_PAGE_MAX = 100


def tables(service: RoundService) -> list[dict[str, str]]:
    """Every table: its id, game, currency and the page its players play at (public: the lobby and the studio's own
    pages list them)."""
    with service.sessions() as session:
        rows = session.execute(select(GameTable.id, GameTable.game, GameTable.currency).order_by(GameTable.id)).all()
    return [
        {"table_id": id_, "game": game, "currency": currency, "player_page": player_page(service, game, id_)}
        for id_, game, currency in rows
    ]


def player_page(service: RoundService, game: str, table_id: str) -> str:
    """Where a table's players play: the page its game's adapter names."""
    return f"/{service.games.adapter(game).player_page}/{quote(table_id, safe='')}"


def table(service: RoundService, table_id: str) -> dict[str, Any]:
    """A table: its id, game, currency, settings, what its game's player page shows of them, and how its overlay
    shows it (delay, language)."""
    with service.sessions() as session:
        found = session.get(GameTable, table_id)
        if found is None:
            raise NotFoundError(f"table {table_id!r} does not exist")
        port = service.games.game(found.game)
        settings = port.settings(json.loads(found.settings))
        return {
            "table_id": found.id,
            "game": found.game,
            "currency": found.currency,
            "settings": port.settings_dict(settings),
            "page": service.games.adapter(found.game).page(settings),
            "player_page": player_page(service, found.game, found.id),
            "display": display_of(found),
        }


def round_state(service: RoundService, round_id: str) -> dict[str, Any]:
    with service.sessions() as session:
        return _state(session, service, stored_round(session, round_id))


def current_round(service: RoundService, table_id: str) -> dict[str, Any]:
    """The public state of the table's latest round; before its first, a state with no round (``round_id``
    null) that its streams replace when the round opens. An unknown table is a ``NotFoundError``."""
    with service.sessions() as session:
        round_ = session.scalar(select(Round).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1))
        if round_ is None:
            service.table(session, table_id)
            return {"v": 1, "table_id": table_id, "round_id": None, "phase": None, "hands": {}}
        return _state(session, service, round_)


def history(service: RoundService, player: str, before: datetime | None, limit: int) -> list[dict[str, Any]]:
    """The player's rounds of every game, newest first (a round is theirs if they staked in it: a wager, insurance, a
    room's seat — each took a hold): page with ``before`` = the last ``opened_at`` seen."""
    limit = max(1, min(limit, HISTORY_PAGE_MAX))
    with service.sessions() as session:
        query = select(Round).where(Round.id.in_(select(Hold.round_id).where(Hold.player == player)))
        if before is not None:
            query = query.where(Round.opened_at < before)
        rounds = session.scalars(query.order_by(Round.opened_at.desc(), Round.id.desc()).limit(limit)).all()
        return [_summary(service, session, round_, player) for round_ in rounds]


def round_detail(service: RoundService, player: str, round_id: str) -> dict[str, Any]:
    with service.sessions() as session:
        round_ = stored_round(session, round_id)
        if session.scalar(select(Hold.id).where(Hold.round_id == round_id, Hold.player == player).limit(1)) is None:
            raise NotFoundError(f"round {round_id!r} is not in {player}'s history")
        detail = _summary(service, session, round_, player)
        return detail | {"state": _state(session, service, round_)} | _recall(session, round_)


def _recall(session: Session, round_: Round) -> dict[str, Any]:
    """Game recall beyond the hands, once the round has ended: the cards burned while it was dealt (from the shoe's
    journal, with their video timecode) and why it was voided."""
    ended = round_.settled_at or round_.voided_at
    if ended is None:
        return {"burns": [], "void_reason": None}
    burns = session.execute(
        select(ShoeJournal.card, ShoeJournal.video_tc)
        .where(ShoeJournal.round_id == round_.id, ShoeJournal.disposition == "burn", ShoeJournal.received_at <= ended)
        .order_by(ShoeJournal.id)
    ).all()
    reason = None
    if round_.voided_at is not None:
        commands = session.scalars(
            select(RoundLogEntry.command).where(RoundLogEntry.round_id == round_.id).order_by(RoundLogEntry.seq.desc())
        )
        reason = next((data.get("reason") for data in map(json.loads, commands) if data.get("type") == "void"), None)
    return {"burns": [{"card": card, "video_tc": tc} for card, tc in burns], "void_reason": reason}


def _state(session: Session, service: RoundService, round_: Round) -> dict[str, Any]:
    return as_seen(round_, service.engines.view(session, round_, service.game_of(session, round_)))


def _summary(service: RoundService, session: Session, round_: Round, player: str) -> dict[str, Any]:
    """What every game's history shows of a round, and what the round's game adds (its adapter's ``history``)."""
    result = json.loads(round_.result) if round_.result and round_.voided_at is None else None
    game = service.table(session, round_.table_id).game  # cached: no query per round of a history page
    return {
        "round_id": round_.id,
        "table_id": round_.table_id,
        "game": game,
        "number": round_.number,
        "phase": round_.phase,
        "opened_at": round_.opened_at.isoformat(),
        "hands": result.get("hands") if result else None,
        "outcomes": result.get("outcomes") if result else None,
        "net": None if result is None else result_nets(result).get(player, 0),  # after any correction; void: None
        "corrections": _corrections(session, round_.id, player),  # after settlement (recalculations, a void)
    } | service.games.adapter(game).history(session, round_, player)


def _corrections(session: Session, round_id: str, player: str) -> list[dict[str, Any]]:
    """What was posted to or taken from ``player`` after the round settled, oldest first (+ to the player):
    adjustments, and the part of one the wallet could not cover, recorded as a debt (a settlement's own
    debts name their wager)."""
    debit, credit = aliased(Account), aliased(Account)
    rows = session.execute(
        select(Transfer.amount, Transfer.kind, Transfer.memo, Transfer.created_at, credit.owner)
        .join(debit, Transfer.debit_account_id == debit.id)
        .join(credit, Transfer.credit_account_id == credit.id)
        .where(
            Transfer.round_id == round_id,
            or_(Transfer.kind == "adjustment", and_(Transfer.kind == "debt", Transfer.wager_id.is_(None))),
            or_(debit.owner == player, credit.owner == player),
        )
        .order_by(Transfer.id)
    ).all()
    return [
        {"amount": amount if owner == player else -amount, "kind": kind, "memo": memo, "at": aware(at).isoformat()}
        for amount, kind, memo, at, owner in rows
    ]
