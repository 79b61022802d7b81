"""Over/under: a toy house-banked game that proves a house game is only its own rules on the shared parts.

Players bet while betting is open on ``over`` (the card will be 8 or higher, aces low) or ``under`` (6 or lower),
each at 1:1; a 7 loses both. After betting one card is dealt face up and the round settles. Built on the coup games'
engine (``services.games.coup_game``: betting, the deal, settlement, roads) and the house games' bet path
(``services.rounds.house`` through ``services.rounds.coups.CoupAdapter``): it says where its card goes, who wins and
what its bets return, and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.games.base import CardWanted
from services.games.coup_game import CoupGame
from services.games.coups import Outcome
from services.rounds.adapters import Strict
from services.rounds.coups import CoupAdapter
from tests.toy.toys import settings_of, whole_numbers

RANKS = "A23456789TJQK"
SPOTS = ("over", "under")


@dataclass(frozen=True)
class Settings:
    min_stake: int = 10
    max_stake: int = 10_000
    betting_ms: int = 15_000
    decks: int = 1

    def __post_init__(self) -> None:
        whole_numbers(self)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OverUnder(CoupGame[Settings, Card]):
    name = "overunder"
    spots = SPOTS
    sides = SPOTS
    opposite = frozenset(SPOTS)
    has_derived_roads = False
    most = 1

    def settings(self, raw: Mapping[str, Any]) -> Settings:
        return settings_of(Settings, raw)

    def next_card(self, dealt: Sequence[tuple[str, Card]]) -> CardWanted | None:
        return None if dealt else CardWanted("card", 0, True, "the card, face up")

    def finished(self, dealt: Sequence[tuple[str, Card]]) -> Card:
        return dealt[0][1]

    def winner(self, coup: Card) -> str:
        rank = RANKS.index(coup.rank) + 1
        return "over" if rank >= 8 else "under" if rank <= 6 else "tie"  # a 7: neither

    def outcome(self, spot: str, stake: int, coup: Card, settings: Settings) -> Outcome:
        return Outcome(stake if spot == self.winner(coup) else -stake)

    def coup_dict(self, coup: Card) -> dict[str, Any]:
        return {"card": str(coup), "winner": self.winner(coup)}

    def hands(self, dealt: Sequence[tuple[str, Card]]) -> dict[str, dict[str, Any]]:
        return {"card": {"cards": [str(card) for _, card in dealt]}}


class BetIn(Strict):
    side: Literal["over", "under"]
    stake: Annotated[int, Field(gt=0, le=10**15)]


class SlipIn(Strict):
    bets: Annotated[list[BetIn], Field(min_length=1, max_length=2)]


class OverUnderAdapter(CoupAdapter):
    def __init__(self, game: OverUnder) -> None:
        super().__init__(game)
        self.actions = (self.bets_action(SlipIn, "Bet over or under while betting is open."),)

    def returns(self, settings: Settings) -> dict[str, Any]:
        """Over and under each win on 24 cards of 52 at 1:1: 48/52 returned per unit staked."""
        rtp = 48 / 52
        each = {"rtp": rtp, "ci95": [rtp, rtp]}
        return {"bets": {"over": each, "under": each}, "fix": ""}


GAME = OverUnder()
GAMES = STUDIO_GAMES.adding(OverUnderAdapter(GAME))  # the studio's games and this one
