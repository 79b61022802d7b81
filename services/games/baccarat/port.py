"""Punto Banco on the game port: a coup per round, dealt Player, Banker, Player, Banker and the third cards its
drawing rules call for (``services.games.baccarat.rules``), every bet settled by ``services.games.baccarat.bets``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.cards import Card
from services.games.baccarat import bets
from services.games.baccarat.rules import BANKER, MOST_CARDS, PLAYER, Coup, next_hand
from services.games.baccarat.settings import BaccaratSettings
from services.games.baccarat.transcript import coup_to_dict, hand_to_dict
from services.games.base import CardWanted
from services.games.coup_game import CoupGame
from services.games.coups import Outcome

ORDINALS = ("first", "second", "third")
NAMES = {PLAYER: "Player", BANKER: "Banker"}


def split(dealt: Sequence[tuple[str, Card]]) -> tuple[list[Card], list[Card]]:
    """The Player's and the Banker's cards, each in the order dealt."""
    return [card for hand, card in dealt if hand == PLAYER], [card for hand, card in dealt if hand == BANKER]


class Baccarat(CoupGame[BaccaratSettings, Coup]):
    name = "baccarat"
    spots = bets.SPOTS
    sides = (PLAYER, BANKER)
    opposite = frozenset(sides)
    most = MOST_CARDS
    mark_keys = ("winner", "player_pair", "banker_pair", "natural")

    def settings(self, raw: Mapping[str, Any]) -> BaccaratSettings:
        return BaccaratSettings.of(raw)

    def next_card(self, dealt: Sequence[tuple[str, Card]]) -> CardWanted | None:
        player, banker = split(dealt)
        hand = next_hand(player, banker)
        if hand is None:
            return None
        index = len(player if hand == PLAYER else banker)
        return CardWanted(hand, index, True, f"the {NAMES[hand]}'s {ORDINALS[index]} card")

    def finished(self, dealt: Sequence[tuple[str, Card]]) -> Coup:
        player, banker = split(dealt)
        return Coup(tuple(player), tuple(banker))

    def outcome(self, spot: str, stake: int, coup: Coup, settings: BaccaratSettings) -> Outcome:
        return bets.outcome(spot, stake, coup, settings)

    def winner(self, coup: Coup) -> str:
        return str(coup.winner)

    def coup_dict(self, coup: Coup) -> dict[str, Any]:
        return coup_to_dict(coup)

    def hands(self, dealt: Sequence[tuple[str, Card]]) -> dict[str, dict[str, Any]]:
        player, banker = split(dealt)
        return {PLAYER: hand_to_dict(player), BANKER: hand_to_dict(banker)}


BACCARAT = Baccarat()
