"""Pok Deng, the live banker game: hands, settlement and the round engine (pure, synchronous)."""

from services.games.pokdeng.engine import (
    AwaitingBets,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    Expectation,
    Phase,
    PokDengRound,
)
from services.games.pokdeng.errors import (
    DecisionError,
    IllegalActionError,
    InsuranceError,
    PokDengError,
    SettingsError,
    TranscriptError,
    WagerError,
)
from services.games.pokdeng.hands import HandRank, HandValue, Outcome, classify, compare
from services.games.pokdeng.model import SEATS, Position, Side, Wager
from services.games.pokdeng.settings import TableSettings
from services.games.pokdeng.settlement import RoundResult

__all__ = [
    "SEATS",
    "AwaitingBets",
    "AwaitingCard",
    "AwaitingDecision",
    "AwaitingInsurance",
    "DecisionError",
    "Expectation",
    "HandRank",
    "HandValue",
    "IllegalActionError",
    "InsuranceError",
    "Outcome",
    "Phase",
    "PokDengError",
    "PokDengRound",
    "Position",
    "RoundResult",
    "SettingsError",
    "Side",
    "TableSettings",
    "TranscriptError",
    "Wager",
    "WagerError",
    "classify",
    "compare",
]
