"""Rebuilding a round's engine from its command log, with a small per-process cache.

The log is the source of truth; the cache only saves replaying it. An entry is used only when
the round's ``log_length`` in the database still matches, and is handed back only after the
transaction that advanced it committed.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cards import Card
from services.games.pokdeng import PokDengRound, TableSettings
from services.games.pokdeng import events as ev
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
    def __init__(self, size: int = 256) -> None:
        self._entries: OrderedDict[str, tuple[int, PokDengRound]] = OrderedDict()
        self._size = size

    def take(self, session: Session, round_: Round) -> PokDengRound:
        """The round's engine at its current log length (removed from the cache while in use)."""
        cached = self._entries.pop(round_.id, None)
        if cached is not None and cached[0] == round_.log_length:
            return cached[1]
        rows = session.scalars(
            select(RoundLogEntry.command).where(RoundLogEntry.round_id == round_.id).order_by(RoundLogEntry.seq)
        )
        settings = TableSettings.from_mapping(json.loads(round_.settings))
        return rebuild(settings, [json.loads(row) for row in rows])

    def give_back(self, round_id: str, log_length: int, engine: PokDengRound) -> None:
        self._entries[round_id] = (log_length, engine)
        self._entries.move_to_end(round_id)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
