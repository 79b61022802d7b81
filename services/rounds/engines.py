"""Rebuilding a round's engine from its command log, with a small per-process cache.

The log is the source of truth; the cache only saves replaying it. An entry is used only when
the round's ``log_length`` in the database still matches, and is handed back only after the
transaction that advanced it committed.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cards import Card
from services.games.pokdeng import PokDengRound, TableSettings
from services.games.pokdeng import events as ev
from services.games.pokdeng.views import public_view
from services.rounds.models import Round, RoundLogEntry

RECALCULATE = "recalculate"  # a log entry that corrects earlier card reads (not an engine command)


def rebuild(settings: TableSettings, entries: list[dict[str, Any]]) -> PokDengRound:
    """Replay the log. A recalculation entry replaces card reads and replays from the start."""
    commands: list[ev.Command] = []
    for entry in entries:
        if entry["type"] == RECALCULATE:
            commands = corrected(commands, entry["cards"])
        else:
            commands.append(ev.command_from_dict(entry))
    return PokDengRound.replay(commands, settings)


def corrected(commands: list[ev.Command], cards: dict[str, str]) -> list[ev.Command]:
    """The commands with the n-th dealt card (0-based, shoe order) replaced as ``cards`` says."""
    result: list[ev.Command] = []
    dealt = 0
    for command in commands:
        if isinstance(command, ev.DealCard):
            replacement = cards.get(str(dealt))
            command = ev.DealCard(Card.from_code(replacement)) if replacement else command
            dealt += 1
        result.append(command)
    return result


class EngineCache:
    """Engines for writers (taken out while in use) and finished public views for readers."""

    def __init__(self, size: int = 256) -> None:
        self._entries: OrderedDict[str, tuple[int, PokDengRound]] = OrderedDict()
        self._views: OrderedDict[str, tuple[int, dict[str, Any]]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def take(self, session: Session, round_: Round) -> PokDengRound:
        """The round's engine at its current log length (removed from the cache while in use)."""
        with self._lock:
            cached = self._entries.pop(round_.id, None)
        if cached is not None and cached[0] == round_.log_length:
            return cached[1]
        return load(session, round_)

    def give_back(self, round_id: str, log_length: int, engine: PokDengRound) -> None:
        view = public_view(engine)
        with self._lock:
            _put(self._entries, round_id, (log_length, engine), self._size)
            _put(self._views, round_id, (log_length, view), self._size)

    def view(self, session: Session, round_: Round) -> dict[str, Any]:
        """The round's public view at its current log length; never shares a live engine."""
        with self._lock:
            cached = self._views.get(round_.id)
        if cached is not None and cached[0] == round_.log_length:
            return cached[1]
        view = public_view(load(session, round_))
        with self._lock:
            _put(self._views, round_.id, (round_.log_length, view), self._size)
        return view


def load(session: Session, round_: Round) -> PokDengRound:
    rows = session.scalars(
        select(RoundLogEntry.command).where(RoundLogEntry.round_id == round_.id).order_by(RoundLogEntry.seq)
    )
    settings = TableSettings.from_mapping(json.loads(round_.settings))
    return rebuild(settings, [json.loads(row) for row in rows])


def _put(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)
