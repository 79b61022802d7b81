"""``studio baccarat replay``: a coup recomputed from its cards and bets (JSON in, JSON out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.cards import Card
from services.games import coups
from services.games.baccarat.bets import SPOTS, outcome
from services.games.baccarat.rules import Coup, coup_of, total
from services.games.baccarat.settings import BaccaratSettings


def replay(transcript: Any) -> dict[str, Any]:
    read = coups.read(transcript, SPOTS, BaccaratSettings.of, lambda settings: settings.decks)
    try:
        coup = coup_of(read.cards)
    except ValueError as error:
        raise coups.TranscriptError(str(error)) from None
    return coup_to_dict(coup) | {
        "payouts": [
            {"on": bet.on, "stake": bet.stake, "net": outcome(bet.on, bet.stake, coup, read.settings).net}
            for bet in read.bets
        ]
    }


def hand_to_dict(cards: Sequence[Card]) -> dict[str, Any]:
    return {"cards": [str(card) for card in cards], "total": total(cards)}


def coup_to_dict(coup: Coup) -> dict[str, Any]:
    return {
        "player": hand_to_dict(coup.player),
        "banker": hand_to_dict(coup.banker),
        "winner": str(coup.winner),
        "natural": coup.natural,
        "player_pair": coup.player_pair,
        "banker_pair": coup.banker_pair,
    }


replay_to_dict = coups.answer(replay)
