"""Card codes as devices write them: rank then suit (``4S``, ``TH``). Which card beats which is not our business."""

RANKS = "A23456789TJQK"
SUITS = "SHDC"
DECK = tuple(rank + suit for suit in SUITS for rank in RANKS)
