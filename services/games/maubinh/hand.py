"""A player's arranged hand: the three chi, their strengths, and whether it is binh lủng."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from services.games.maubinh.cards import distinct
from services.games.maubinh.errors import HandError
from services.games.maubinh.instant import instant_win
from services.games.maubinh.ranking import CHI_SIZES, Category, category_of, strength
from services.games.maubinh.settings import InstantWin, MauBinhSettings

CHI_NAMES: Final = ("chi1", "chi2", "chi3")
HAND_SIZE: Final = sum(CHI_SIZES)


@dataclass(frozen=True, slots=True)
class Hand:
    """Thirteen cards split into chi 1 (5 cards), chi 2 (5) and chi 3 (3); build with ``Hand.of``."""

    chis: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    strengths: tuple[int, int, int]

    @classmethod
    def of(cls, chi1: Sequence[int], chi2: Sequence[int], chi3: Sequence[int], who: str = "") -> Hand:
        """The hand, refusing a chi of the wrong size, a card listed twice or no card (named with ``who``)."""
        chis = (tuple(chi1), tuple(chi2), tuple(chi3))
        prefix = f"{who}." if who else ""
        for name, cards, size in zip(CHI_NAMES, chis, CHI_SIZES, strict=True):
            if len(cards) != size:
                message = f"{prefix}{name}: expected {size} cards, got {len(cards)}"
                raise HandError(message, reason="chi_size", params={"chi": name.removeprefix("chi"), "n": size})
        so_far: list[int] = []
        for name, cards in zip(CHI_NAMES, chis, strict=True):
            so_far.extend(cards)
            distinct(so_far, f"{prefix}{name}")  # a repeat is named with the chi it appears in again
        values = (strength(chis[0]), strength(chis[1]), strength(chis[2]))
        return cls(chis, values)

    @property
    def cards(self) -> tuple[int, ...]:
        return self.chis[0] + self.chis[1] + self.chis[2]

    @property
    def mis_set(self) -> bool:
        """*Binh lủng*: chi 1 weaker than chi 2, or chi 2 weaker than chi 3."""
        first, second, third = self.strengths
        return first < second or second < third

    def instant_win(self, settings: MauBinhSettings) -> InstantWin | None:
        """The instant win the 13 cards hold under a room's settings; it makes the arrangement irrelevant."""
        return instant_win(self.cards, settings)

    @property
    def categories(self) -> tuple[Category, Category, Category]:
        first, second, third = self.strengths
        return category_of(first), category_of(second), category_of(third)


@dataclass(frozen=True, slots=True)
class Left:
    """A player who left before the showdown: no cards are compared."""


LEFT: Final = Left()
Seat = Hand | Left
