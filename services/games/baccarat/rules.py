"""Punto Banco's coup: card values, the fixed drawing rules, and what a finished coup shows.

A = 1, 2–9 their face value, T/J/Q/K = 0; a hand's total is its sum mod 10. The cards come Player, Banker, Player,
Banker. A natural (8 or 9 on either hand's first two cards) ends the coup. Otherwise the Player draws on 0–5 and
stands on 6–7. If the Player stood, the Banker draws on 0–5. If the Player drew, the Banker draws by its total and
the Player's third card: 0–2 always, 3 unless that card is an 8, 4 on 2–7, 5 on 4–7, 6 on 6–7, 7 never.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from services.cards import Card

PLAYER, BANKER = "player", "banker"
MOST_CARDS = 6


class Winner(StrEnum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


VALUES = {rank: "A23456789".find(rank) + 1 for rank in "A23456789TJQK"}  # T, J, Q, K: not found, 0


def value(card: Card) -> int:
    return VALUES[card.rank]


def total(cards: Sequence[Card]) -> int:
    return sum([VALUES[card.rank] for card in cards]) % 10


def banker_draws(banker: int, player_third: int | None) -> bool:
    """Whether the Banker, on ``banker``, draws; ``player_third`` is the value of the Player's third card (None: the
    Player stood)."""
    if player_third is None:
        return banker <= 5
    match banker:
        case 0 | 1 | 2:
            return True
        case 3:
            return player_third != 8
        case 4:
            return 2 <= player_third <= 7
        case 5:
            return 4 <= player_third <= 7
        case 6:
            return 6 <= player_third <= 7
    return False


def next_hand(player: Sequence[Card], banker: Sequence[Card]) -> str | None:
    """The hand the next card goes to, or None: the coup is complete."""
    if len(player) + len(banker) < 4:
        return PLAYER if len(player) == len(banker) else BANKER
    player_total, banker_total = total(player[:2]), total(banker[:2])
    if player_total >= 8 or banker_total >= 8:
        return None
    if len(player) == 2 and player_total <= 5:
        return PLAYER
    if len(banker) == 2 and banker_draws(banker_total, value(player[2]) if len(player) == 3 else None):
        return BANKER
    return None


@dataclass(frozen=True, slots=True)
class Coup:
    """A complete coup's two hands, in the order each got its cards, and who won it."""

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    winner: Winner = field(init=False)

    def __post_init__(self) -> None:
        player, banker = total(self.player), total(self.banker)
        won = Winner.PLAYER if player > banker else Winner.BANKER if banker > player else Winner.TIE
        object.__setattr__(self, "winner", won)  # a frozen dataclass's derived field

    @property
    def natural(self) -> bool:
        return total(self.player[:2]) >= 8 or total(self.banker[:2]) >= 8

    @property
    def player_pair(self) -> bool:
        return self.player[0].rank == self.player[1].rank

    @property
    def banker_pair(self) -> bool:
        return self.banker[0].rank == self.banker[1].rank


def coup_of(cards: Sequence[Card]) -> Coup:
    """The coup ``cards`` deal, in order; ``ValueError`` names a transcript with too few or too many cards."""
    player: list[Card] = []
    banker: list[Card] = []
    for index, card in enumerate(cards):
        hand = next_hand(player, banker)
        if hand is None:
            raise ValueError(f"the coup was complete after {index} cards, but {len(cards)} were given")
        (player if hand == PLAYER else banker).append(card)
    if next_hand(player, banker) is not None:
        raise ValueError(f"the coup needs more cards than the {len(cards)} given")
    return Coup(tuple(player), tuple(banker))
