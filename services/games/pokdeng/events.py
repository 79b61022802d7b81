"""What goes into a round (commands) and what comes out of it (events). All frozen.

Commands are the round's complete input: replaying them into a fresh round rebuilds it exactly,
which is how a crashed controller recovers and how operators recalculate. Events are the
round's output, one or more per command, in the order they happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from services.cards import Card
from services.games.pokdeng.model import Position, Side, Wager
from services.games.pokdeng.settlement import RoundResult

# ---- commands ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlaceWager:
    """A new wager, or a raise of the player's wager on the same side and seat (same id)."""

    wager_id: str
    player: str
    side: Side
    seat: Position
    stake: int


@dataclass(frozen=True, slots=True)
class CloseBetting:
    """Auto-draw thresholds: the players' as they stood when the round began.

    ``seat_thresholds`` overrides the decider's threshold for a seat; transcripts record thresholds
    per seat and replay through it.
    """

    thresholds: Mapping[str, int] = field(default_factory=dict)
    seat_thresholds: Mapping[Position, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DealCard:
    card: Card


@dataclass(frozen=True, slots=True)
class BuyInsurance:
    player: str
    amount: int


@dataclass(frozen=True, slots=True)
class CloseInsurance:
    pass


@dataclass(frozen=True, slots=True)
class Decide:
    """A draw/stand choice; ``player`` None is a trusted caller (replay, operator)."""

    seat: Position
    draw: bool
    player: str | None = None


@dataclass(frozen=True, slots=True)
class DecisionTimeout:
    seat: Position


@dataclass(frozen=True, slots=True)
class VoidRound:
    reason: str


Command = PlaceWager | CloseBetting | DealCard | BuyInsurance | CloseInsurance | Decide | DecisionTimeout | VoidRound

_COMMANDS: dict[str, type[Any]] = {
    "place_wager": PlaceWager,
    "close_betting": CloseBetting,
    "deal_card": DealCard,
    "buy_insurance": BuyInsurance,
    "close_insurance": CloseInsurance,
    "decide": Decide,
    "decision_timeout": DecisionTimeout,
    "void": VoidRound,
}
_COMMAND_NAMES = {cls: name for name, cls in _COMMANDS.items()}


def command_to_dict(command: Command) -> dict[str, Any]:
    """A JSON-ready form of a command, for the round's event log."""
    data: dict[str, Any] = {"type": _COMMAND_NAMES[type(command)]}
    for name in command.__slots__:
        value = getattr(command, name)
        data[name] = str(value) if isinstance(value, Card | StrEnum) else value
        if isinstance(value, Mapping):
            data[name] = dict(value)
    return data


def command_from_dict(data: Mapping[str, Any]) -> Command:
    kind = data.get("type")
    if kind not in _COMMANDS:
        raise ValueError(f"unknown command type: {kind!r} (known: {', '.join(_COMMANDS)})")
    values = {key: value for key, value in data.items() if key != "type"}
    if "card" in values:
        values["card"] = Card.from_code(values["card"])
    if "side" in values:
        values["side"] = Side(values["side"])
    if "seat" in values:
        values["seat"] = Position(values["seat"])
    if "seat_thresholds" in values:
        values["seat_thresholds"] = {Position(seat): value for seat, value in values["seat_thresholds"].items()}
    command: Command = _COMMANDS[kind](**values)
    return command


# ---- events -----------------------------------------------------------------------------


class DrawReason(StrEnum):
    """Why a hand drew or stood."""

    POK = "pok"  # a two-card 8 or 9 may not draw
    FORCED = "forced"  # 0 points must draw
    PLAYER = "player"  # the decider chose
    TIMEOUT = "timeout"  # the window closed: the decider's threshold
    NO_DECIDER = "no_decider"  # no player-side wagers: the table's default threshold
    OUTWEIGHED = "outweighed"  # the banker side staked more than the largest player-side wager: the default threshold
    BANKER_RULE = "banker_rule"  # banker draws on 0–5


@dataclass(frozen=True, slots=True)
class WagerAccepted:
    wager: Wager
    raised_by: int  # 0 for a new wager


@dataclass(frozen=True, slots=True)
class BettingClosed:
    wagers: int


@dataclass(frozen=True, slots=True)
class CardDealt:
    position: Position
    index: int  # 0, 1 or 2 within the hand
    card: Card
    face_up: bool  # False only for the banker's face-down card


@dataclass(frozen=True, slots=True)
class InsuranceOffered:
    banker_up_card: Card


@dataclass(frozen=True, slots=True)
class InsuranceBought:
    player: str
    amount: int


@dataclass(frozen=True, slots=True)
class InsuranceClosed:
    bought: int  # how many players bought


@dataclass(frozen=True, slots=True)
class DecisionWindowOpened:
    seat: Position
    decider: str
    points: int
    threshold: int  # what a timeout will apply


@dataclass(frozen=True, slots=True)
class DrawDecided:
    position: Position
    draw: bool
    reason: DrawReason
    points: int


@dataclass(frozen=True, slots=True)
class CardRevealed:
    """A face-down card turned over: from here on its value is public."""

    position: Position
    index: int
    card: Card


@dataclass(frozen=True, slots=True)
class RoundSettled:
    result: RoundResult


@dataclass(frozen=True, slots=True)
class RoundVoided:
    reason: str
    was_settled: bool


Event = (
    WagerAccepted
    | BettingClosed
    | CardDealt
    | InsuranceOffered
    | InsuranceBought
    | InsuranceClosed
    | DecisionWindowOpened
    | DrawDecided
    | CardRevealed
    | RoundSettled
    | RoundVoided
)
