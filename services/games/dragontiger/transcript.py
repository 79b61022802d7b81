"""``studio dragontiger replay``: a coup recomputed from its two cards and bets (JSON in, JSON out)."""

from __future__ import annotations

from typing import Any

from services.games import coups
from services.games.dragontiger.rules import SPOTS, Coup, DragonTigerSettings, net


def replay(transcript: Any) -> dict[str, Any]:
    read = coups.read(transcript, SPOTS, DragonTigerSettings.of, lambda settings: settings.decks)
    if len(read.cards) != 2:
        raise coups.TranscriptError(f"a coup is two cards, Dragon then Tiger; {len(read.cards)} given")
    coup = Coup(*read.cards)
    return coup_to_dict(coup) | {
        "payouts": [
            {"on": bet.on, "stake": bet.stake, "net": net(bet.on, bet.stake, coup, read.settings)} for bet in read.bets
        ]
    }


def coup_to_dict(coup: Coup) -> dict[str, Any]:
    return {
        "dragon": str(coup.dragon),
        "tiger": str(coup.tiger),
        "winner": str(coup.winner),
        "suited_tie": coup.suited_tie,
    }


replay_to_dict = coups.answer(replay)
