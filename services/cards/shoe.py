"""Bookkeeping of the cards dealt from one shoe fill (one 52-card deck)."""

from __future__ import annotations

from services.cards.card import FULL_DECK, Card
from services.cards.errors import DuplicateCardError

DECK_SIZE = len(FULL_DECK)


class DeckTracker:
    """Remembers which cards left the shoe since the last shuffle.

    A second scan of a card already dealt is refused: in a single deck it can only be a misread
    or a card put back, and either needs a human.
    """

    def __init__(self, seen: tuple[Card, ...] = ()) -> None:
        self._seen: dict[Card, int] = {}
        self.shuffles = 0
        for card in seen:
            self.record(card)

    def verify_record(self, card: Card) -> None:
        if card in self._seen:
            raise DuplicateCardError(
                f"duplicate card: {card} was already dealt as card #{self._seen[card] + 1} since the last shuffle"
            )

    def record(self, card: Card) -> None:
        self.verify_record(card)
        self._seen[card] = len(self._seen)

    def shuffle(self) -> None:
        """A new deck: every card may appear again."""
        self._seen.clear()
        self.shuffles += 1

    def has_seen(self, card: Card) -> bool:
        return card in self._seen

    @property
    def dealt(self) -> tuple[Card, ...]:
        return tuple(self._seen)

    @property
    def remaining(self) -> int:
        return DECK_SIZE - len(self._seen)

    def can_deal(self, count: int) -> bool:
        """Whether ``count`` more cards can still come out of this deck."""
        return count <= self.remaining
