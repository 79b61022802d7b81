"""Card codes as devices write them: rank then suit (``4S``, ``TH``). Which card beats which is not our business.

The one definition of the card alphabet: ``services.cards`` and the bus's message schemas take it from here.
"""

from typing import Final

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
DECK: Final = tuple(rank + suit for suit in SUITS for rank in RANKS)
CODE_PATTERN: Final = f"^[{RANKS}][{SUITS}]$"
