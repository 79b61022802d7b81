"""Card identity, codes and shoe bookkeeping shared by every game.

A card is written rank + suit: ranks ``A 2 3 4 5 6 7 8 9 T J Q K``, suits ``S H D C``.
Parsing is strict (exactly one rank and one suit) and case-insensitive. Orders between
ranks and suits differ per game, so this package defines none: each game owns its own.
"""

from hardware.codes import RANKS, SUITS
from services.cards.card import FULL_DECK, Card, parse_cards
from services.cards.errors import CardError, DuplicateCardError, InvalidCardCodeError
from services.cards.shoe import DeckCount, DeckTracker

__all__ = [
    "FULL_DECK",
    "RANKS",
    "SUITS",
    "Card",
    "CardError",
    "DeckCount",
    "DeckTracker",
    "DuplicateCardError",
    "InvalidCardCodeError",
    "parse_cards",
]
