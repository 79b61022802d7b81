"""The ``Card`` value and its two-character code."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from hardware.codes import RANKS, SUITS
from services.cards.errors import InvalidCardCodeError


@dataclass(frozen=True, slots=True)
class Card:
    """One physical card. Unordered on purpose: every game defines its own order."""

    rank: str
    suit: str

    def __post_init__(self) -> None:
        if self.rank not in RANKS or len(self.rank) != 1:
            raise InvalidCardCodeError(f"invalid card rank: {self.rank!r} (expected one of {RANKS})")
        if self.suit not in SUITS or len(self.suit) != 1:
            raise InvalidCardCodeError(f"invalid card suit: {self.suit!r} (expected one of {SUITS})")

    @classmethod
    def from_code(cls, code: str) -> Card:
        """Parse ``"TD"``, ``"as"``, ``"9h"``…; anything else raises ``InvalidCardCodeError``."""
        if not isinstance(code, str) or not code.isascii():
            raise InvalidCardCodeError(f"invalid card code: {code!r} (expected an ASCII string such as 'TD')")
        text = code.upper()
        if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
            raise InvalidCardCodeError(
                f"invalid card code: {code!r} (expected rank {RANKS} then suit {SUITS}, e.g. 'TD')"
            )
        return cls(text[0], text[1])

    def code(self) -> str:
        return self.rank + self.suit

    def __str__(self) -> str:
        return self.code()

    def __repr__(self) -> str:
        return f"Card({self.code()!r})"


FULL_DECK: Final[tuple[Card, ...]] = tuple(Card(rank, suit) for suit in SUITS for rank in RANKS)


def parse_cards(codes: Iterable[str]) -> list[Card]:
    """Parse many codes; the error names the first bad one and its position."""
    cards = []
    for index, code in enumerate(codes):
        try:
            cards.append(Card.from_code(code))
        except InvalidCardCodeError as error:
            raise InvalidCardCodeError(f"card #{index + 1}: {error}") from None
    return cards
