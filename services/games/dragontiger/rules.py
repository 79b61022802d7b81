"""Dragon Tiger: one card to Dragon, then one to Tiger; the higher rank wins (A low, K high, suits ignored).

Dragon and Tiger pay 1:1 and, on a tie, lose half (``tie_half_back``) or all; Tie pays ``tie_pays``:1; Suited Tie
(the same rank and suit) pays ``suited_tie_pays``:1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from fractions import Fraction
from typing import Any

from services.cards import Card
from services.games import coups

DRAGON, TIGER = "dragon", "tiger"
SPOTS = ("dragon", "tiger", "tie", "suited_tie")


class Winner(StrEnum):
    DRAGON = "dragon"
    TIGER = "tiger"
    TIE = "tie"


def rank(card: Card) -> int:
    return "A23456789TJQK".index(card.rank) + 1


@dataclass(frozen=True)
class DragonTigerSettings:
    decks: int = 8
    tie_half_back: bool = True
    tie_pays: int = 8
    suited_tie_pays: int = 50
    min_stake: int = 100
    max_stake: int = 1_000_000
    betting_ms: int = 12_000

    def __post_init__(self) -> None:
        ranges = {
            "decks": (1, 8),
            "tie_pays": (1, 100),
            "suited_tie_pays": (1, 1_000),
            "min_stake": (1, coups.LARGEST_STAKE),
            "max_stake": (1, coups.LARGEST_STAKE),
            "betting_ms": (1_000, 120_000),
        }
        coups.check_settings(self, ranges, ("tie_half_back",))

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> DragonTigerSettings:
        return coups.settings_of(cls, [field.name for field in fields(cls)], raw)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Coup:
    dragon: Card
    tiger: Card

    @property
    def winner(self) -> Winner:
        dragon, tiger = rank(self.dragon), rank(self.tiger)
        return Winner.DRAGON if dragon > tiger else Winner.TIGER if tiger > dragon else Winner.TIE

    @property
    def suited_tie(self) -> bool:
        return self.dragon == self.tiger


def net(spot: str, stake: int, coup: Coup, settings: DragonTigerSettings) -> int:
    """What a bet wins (+) or loses (−) on ``coup``, the stake aside."""
    winner = coup.winner
    match spot:
        case "dragon" | "tiger" if winner is Winner.TIE:
            return -(stake - stake // 2) if settings.tie_half_back else -stake
        case "dragon" | "tiger":
            return stake if winner == spot else -stake
        case "tie":
            return stake * settings.tie_pays if winner is Winner.TIE else -stake
        case "suited_tie":
            return stake * settings.suited_tie_pays if coup.suited_tie else -stake
    raise ValueError(f"no bet {spot!r} (bets: {', '.join(SPOTS)})")


def returns(settings: DragonTigerSettings) -> dict[str, Fraction]:
    """Each bet's exact return per unit staked, stake included, for a full shoe of ``decks`` decks: two cards
    drawn without replacement; a rank has 4 × decks cards, one card (rank and suit) decks of them."""
    size = 52 * settings.decks
    pairs = size * (size - 1)
    same_rank, same_card = 4 * settings.decks, settings.decks
    tie = Fraction(13 * same_rank * (same_rank - 1), pairs)
    suited = Fraction(52 * same_card * (same_card - 1), pairs)
    win = (1 - tie) / 2  # Dragon and Tiger are alike
    back_on_tie = Fraction(1, 2) if settings.tie_half_back else Fraction(0)
    side = 2 * win + back_on_tie * tie
    return {
        "dragon": side,
        "tiger": side,
        "tie": (settings.tie_pays + 1) * tie,
        "suited_tie": (settings.suited_tie_pays + 1) * suited,
    }
