"""Dragon Tiger on the game port: a coup per round, one card face up to Dragon then one to Tiger
(``services.games.dragontiger.rules``); its roads are the Bead Plate and the Big Road."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.cards import Card
from services.games.base import CardWanted
from services.games.coup_game import CoupGame
from services.games.coups import Outcome
from services.games.dragontiger.rules import DRAGON, SPOTS, TIGER, Coup, DragonTigerSettings, net, rank
from services.games.dragontiger.transcript import coup_to_dict

ORDER = (DRAGON, TIGER)


class DragonTiger(CoupGame[DragonTigerSettings, Coup]):
    name = "dragontiger"
    spots = SPOTS
    sides = ORDER
    opposite = frozenset(ORDER)
    has_derived_roads = False
    most = 2
    mark_keys = ("winner", "suited_tie")

    def settings(self, raw: Mapping[str, Any]) -> DragonTigerSettings:
        return DragonTigerSettings.of(raw)

    def next_card(self, dealt: Sequence[tuple[str, Card]]) -> CardWanted | None:
        if len(dealt) >= 2:
            return None
        position = ORDER[len(dealt)]
        return CardWanted(position, 0, True, f"the {position.capitalize()}'s card")

    def finished(self, dealt: Sequence[tuple[str, Card]]) -> Coup:
        return Coup(dealt[0][1], dealt[1][1])

    def outcome(self, spot: str, stake: int, coup: Coup, settings: DragonTigerSettings) -> Outcome:
        return Outcome(net(spot, stake, coup, settings))

    def winner(self, coup: Coup) -> str:
        return str(coup.winner)

    def coup_dict(self, coup: Coup) -> dict[str, Any]:
        return coup_to_dict(coup)

    def hands(self, dealt: Sequence[tuple[str, Card]]) -> dict[str, dict[str, Any]]:
        """Each side's card and its rank (A 1 … K 13), once dealt."""
        cards = dict(dealt)
        return {
            side: {"cards": [str(cards[side])], "total": rank(cards[side])}
            if side in cards
            else {"cards": [], "total": None}
            for side in ORDER
        }


DRAGON_TIGER = DragonTiger()
