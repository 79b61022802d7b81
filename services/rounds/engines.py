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
from services.games.base import PUBLIC, Game
from services.rounds.models import Round, RoundLogEntry

RECALCULATE = "recalculate"  # a log entry that corrects earlier card reads (not an engine command)
NOTES = frozenset({"verified"})  # log entries that record a decision and change no card (``services.rounds.checks``)


def rebuild(port: Game[Any, Any], settings: Any, entries: list[dict[str, Any]]) -> Any:
    """Replay the log. A recalculation entry replaces card reads and replays from the start."""
    commands: list[Any] = []
    for entry in entries:
        if entry["type"] == RECALCULATE:
            commands = corrected(port, commands, entry["cards"])
        elif entry["type"] in NOTES:
            continue
        else:
            commands.append(port.command_from_dict(entry))
    return port.replay(commands, settings)


def corrected(port: Game[Any, Any], commands: list[Any], cards: dict[str, str]) -> list[Any]:
    """The commands with the n-th dealt card (0-based, shoe order) replaced as ``cards`` says."""
    result: list[Any] = []
    dealt = 0
    for command in commands:
        if port.dealt(command) is not None:
            replacement = cards.get(str(dealt))
            command = port.deal(Card.from_code(replacement)) if replacement else command
            dealt += 1
        result.append(command)
    return result


class EngineCache:
    """Engines for writers (taken out while in use) and finished public views for readers."""

    def __init__(self, size: int = 256) -> None:
        self._entries: OrderedDict[str, tuple[int, Any, Game[Any, Any]]] = OrderedDict()
        self._views: OrderedDict[str, tuple[int, dict[str, Any]]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def take(self, session: Session, round_: Round, port: Game[Any, Any]) -> Any:
        """The round's engine at its current log length (removed from the cache while in use)."""
        with self._lock:
            cached = self._entries.pop(round_.id, None)
        if cached is not None and cached[0] == round_.log_length:
            return cached[1]
        return load(session, round_, port)

    def give_back(
        self, round_id: str, log_length: int, engine: Any, port: Game[Any, Any], view: dict[str, Any] | None = None
    ) -> None:
        """Back after the commit, with its public view (computed here unless the caller did, or it is cached at this
        log length already: an engine given back after a read)."""
        with self._lock:
            cached = self._views.get(round_id)
        if view is None and (cached is None or cached[0] != log_length):
            view = port.view(engine, PUBLIC)
        with self._lock:
            _put(self._entries, round_id, (log_length, engine, port), self._size)
            if view is not None:
                _put(self._views, round_id, (log_length, view), self._size)

    def view(self, session: Session, round_: Round, port: Game[Any, Any]) -> dict[str, Any]:
        """The round's public view at its current log length; never shares a live engine."""
        with self._lock:
            cached = self._views.get(round_.id)
        if cached is not None and cached[0] == round_.log_length:
            return cached[1]
        view = port.view(load(session, round_, port), PUBLIC)
        with self._lock:
            _put(self._views, round_.id, (round_.log_length, view), self._size)
        return view


def load(session: Session, round_: Round, port: Game[Any, Any]) -> Any:
    rows = session.scalars(
        select(RoundLogEntry.command).where(RoundLogEntry.round_id == round_.id).order_by(RoundLogEntry.seq)
    )
    settings = port.settings(json.loads(round_.settings))
    return rebuild(port, settings, [json.loads(row) for row in rows])


def _put(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)
