"""Bookkeeping of the cards dealt from one shoe fill: ``decks`` standard 52-card decks shuffled together (one for Pok
Deng and the rooms; eight for a baccarat shoe). Each card code is counted: the shoe holds ``decks`` copies of each."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from services.cards.card import FULL_DECK, Card
from services.cards.errors import DuplicateCardError

DECK_SIZE = len(FULL_DECK)
MAX_DECKS = 16  # the largest shoe a table may declare


@dataclass(frozen=True)
class DeckCount:
    """A shoe fill's reconciliation: every card that left the shoe (dealt, burned or refused) against what it held."""

    seen: int  # cards that left the shoe, repeats included
    missing: tuple[Card, ...]  # a copy never seen (a card listed once per copy missing)
    doubled: tuple[Card, ...]  # seen more often than the shoe held copies of it (once per card)
    cut: bool = False  # the shoe ended at its cut card: the cards behind it were never dealt, so none is missing

    @property
    def clean(self) -> bool:
        return not self.doubled and (self.cut or not self.missing)


class DeckTracker:
    """Remembers which cards left the shoe since the last shuffle, per code.

    A scan of a code whose every copy has already been dealt is refused: it can only be a misread or a card put back,
    and either needs a human.
    """

    def __init__(self, seen: tuple[Card, ...] = (), decks: int = 1) -> None:
        if not 1 <= decks <= MAX_DECKS:
            raise ValueError(f"a shoe holds 1–{MAX_DECKS} decks, got {decks}")
        self.decks = decks
        self._order: list[Card] = []  # dealt and burned, in shoe order
        self._count: Counter[Card] = Counter()
        self._refused: list[Card] = []  # cards of this shoe refused since the shuffle: out of the shoe too
        self.shuffles = 0
        for card in seen:
            self.record(card)

    def verify_record(self, card: Card) -> None:
        if not self.can_take(card):
            copies = "" if self.decks == 1 else f" {self.decks} times (every copy), first"
            first = self._order.index(card) + 1
            raise DuplicateCardError(
                f"duplicate card: {card} was already dealt{copies} as card #{first} since the last shuffle"
            )

    def record(self, card: Card) -> None:
        self.verify_record(card)
        self._order.append(card)
        self._count[card] += 1

    def note_refused(self, card: Card) -> None:
        """A card of this shoe that was refused (scanned again, out of turn…): it left the shoe all the same."""
        self._refused.append(card)

    def reconcile(self, cut: bool = False) -> DeckCount:
        """Every card that left the shoe since the shuffle against what the shoe held (``cut``: it ended at its cut
        card, and the cards never seen are the ones behind it)."""
        counts = Counter([*self._order, *self._refused])
        return DeckCount(
            seen=sum(counts.values()),
            missing=tuple(card for card in FULL_DECK for _ in range(max(0, self.decks - counts[card]))),
            doubled=tuple(card for card in FULL_DECK if counts[card] > self.decks),
            cut=cut,
        )

    @property
    def touched(self) -> bool:
        """Whether any card left the shoe since the shuffle (a deck never dealt from has nothing to reconcile)."""
        return bool(self._order or self._refused)

    def shuffle(self) -> None:
        """A new shoe fill: every copy may appear again."""
        self._order.clear()
        self._count.clear()
        self._refused.clear()
        self.shuffles += 1

    def has_seen(self, card: Card) -> bool:
        """Whether a copy of ``card`` has left the shoe since the shuffle."""
        return self._count[card] > 0

    def can_take(self, card: Card) -> bool:
        """Whether the shoe still holds a copy of ``card`` not yet dealt."""
        return self._count[card] < self.decks

    @property
    def dealt(self) -> tuple[Card, ...]:
        return tuple(self._order)

    @property
    def size(self) -> int:
        return DECK_SIZE * self.decks

    @property
    def remaining(self) -> int:
        return self.size - len(self._order)

    def can_deal(self, count: int) -> bool:
        """Whether ``count`` more cards can still come out of this shoe fill."""
        return count <= self.remaining
