"""What the parts of a table's controller share: the table, the round as the service last reported it, the deck, and
the console's voice. ``TableController`` is the whole; each part (the camera's cross-check, the deck's watch) is a
base class of it that speaks through these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from services.bus.messages import ShoeMessage
from services.cards import Card, DeckTracker
from services.journal.models import ShoeJournal
from services.journal.table import TableJournal
from services.observability import metrics
from services.rounds.records import Applied
from services.rounds.service import RoundService


def described(message: ShoeMessage) -> str:
    """A shoe message as a refusal names it, its card aside (it may be another table's face-down card)."""
    return "a card" if message.type == "card" else "a new deck" if message.type == "new_deck" else "the cut card"


class Parts:
    table_id: str
    service: RoundService
    current: Applied | None
    deck: DeckTracker
    journal: TableJournal

    def _alert(self, kind: str, message: str, card: str | None = None) -> None:
        raise NotImplementedError

    def _publish(self) -> None:
        raise NotImplementedError

    def _follow(self, applied: Applied | None) -> None:
        raise NotImplementedError

    def _count(self, name: str) -> None:
        raise NotImplementedError

    def _hidden(self) -> frozenset[Card]:
        """Cards of the current round that are dealt but not shown to the public (the engine says which)."""
        return self.current.hidden if self.current is not None else frozenset()

    def _journal_entry(self, message: ShoeMessage, disposition: str, reason: str = "") -> dict[str, Any]:
        round_id = self.current.round_id if self.current else None
        return self.journal.entry(message, disposition, reason, round_id, self.service.clock.now())

    def _journal(
        self,
        message: ShoeMessage,
        disposition: str,
        reason: str = "",
        also: Callable[[Session, ShoeJournal], None] | None = None,
    ) -> bool:
        """Journal the message (with what ``also`` writes, in the same transaction); False if it was already."""
        metrics.CARDS.labels(self.table_id, disposition).inc()
        entry = self._journal_entry(message, disposition, reason)
        return self.journal.write(entry, lambda session: self.service.fenced(session, self.table_id), also)

    def most_cards(self) -> int:
        raise NotImplementedError
