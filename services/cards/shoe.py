"""Bookkeeping of the cards dealt from one shoe fill (one 52-card deck)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from services.cards.card import FULL_DECK, Card
from services.cards.errors import DuplicateCardError

DECK_SIZE = len(FULL_DECK)


@dataclass(frozen=True)
class DeckCount:
    """A deck's reconciliation: every card that left the shoe (dealt, burned or refused) against the full deck."""

    seen: int  # cards that left the shoe, repeats included
    missing: tuple[Card, ...]  # never seen
    doubled: tuple[Card, ...]  # seen more than once (a second copy in the deck, or a card put back and scanned again)

    @property
    def clean(self) -> bool:
        return not self.missing and not self.doubled


class DeckTracker:
    """Remembers which cards left the shoe since the last shuffle.

    A second scan of a card already dealt is refused: in a single deck it can only be a misread
    or a card put back, and either needs a human.
    """

    def __init__(self, seen: tuple[Card, ...] = ()) -> None:
        self._seen: dict[Card, int] = {}
        self._refused: list[Card] = []  # cards of this shoe refused since the shuffle: out of the shoe too
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

    def note_refused(self, card: Card) -> None:
        """A card of this shoe that was refused (scanned again, out of turn…): it left the shoe all the same."""
        self._refused.append(card)

    def reconcile(self) -> DeckCount:
        """Every card that left the shoe since the shuffle against the full deck."""
        counts = Counter([*self._seen, *self._refused])
        return DeckCount(
            seen=sum(counts.values()),
            missing=tuple(card for card in FULL_DECK if not counts[card]),
            doubled=tuple(card for card in FULL_DECK if counts[card] > 1),
        )

    @property
    def touched(self) -> bool:
        """Whether any card left the shoe since the shuffle (a deck never dealt from has nothing to reconcile)."""
        return bool(self._seen or self._refused)

    def shuffle(self) -> None:
        """A new deck: every card may appear again."""
        self._seen.clear()
        self._refused.clear()
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
