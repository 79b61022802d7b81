"""Tiến Lên Miền Nam: combinations, chops, turns and payments (pure, synchronous, replayable)."""

from services.games.tienlen.combos import Combination, Kind, classify, combination
from services.games.tienlen.engine import HAND_SIZE, Phase, TienLenRound
from services.games.tienlen.errors import (
    CombinationError,
    DealError,
    IllegalPlayError,
    RoomEntryError,
    SettingsError,
    TienLenError,
    TranscriptError,
)
from services.games.tienlen.events import (
    ChainSettled,
    Command,
    Event,
    Leave,
    Pass,
    Passed,
    Play,
    Played,
    PlayerLeft,
    RoundEnded,
    RoundResult,
    TrickWon,
)
from services.games.tienlen.settings import INSTANT_WINS, InstantWin, TienLenSettings

__all__ = [
    "HAND_SIZE",
    "INSTANT_WINS",
    "ChainSettled",
    "Combination",
    "CombinationError",
    "Command",
    "DealError",
    "Event",
    "IllegalPlayError",
    "InstantWin",
    "Kind",
    "Leave",
    "Pass",
    "Passed",
    "Phase",
    "Play",
    "Played",
    "PlayerLeft",
    "RoomEntryError",
    "RoundEnded",
    "RoundResult",
    "SettingsError",
    "TienLenError",
    "TienLenRound",
    "TienLenSettings",
    "TranscriptError",
    "TrickWon",
    "classify",
    "combination",
]
