"""What every room game (players in seats, a dealt hand) shares: taking a seat, the end of seating, a card
dealt, a void — as commands, with their stored form. Each game adds its own moves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from services.cards import Card
from services.games.base import Game, GameError, NotExpectedError, NotYourMoveError


@dataclass(frozen=True)
class Sit:
    player: str
    seat: str


@dataclass(frozen=True)
class CloseSeating:
    pass


@dataclass(frozen=True)
class Deal:
    card: Card


@dataclass(frozen=True)
class Void:
    reason: str


RoomCommand = Sit | CloseSeating | Deal | Void


def to_dict(command: object) -> dict[str, Any] | None:
    """The stored form of a room command (None: not one of them)."""
    match command:
        case Sit(player=player, seat=seat):
            return {"type": "sit", "player": player, "seat": seat}
        case CloseSeating():
            return {"type": "close_seating"}
        case Deal(card=card):
            return {"type": "deal", "card": str(card)}
        case Void(reason=reason):
            return {"type": "void", "reason": reason}
    return None


def from_dict(data: Mapping[str, Any]) -> RoomCommand | None:
    """A room command from its stored form (None: the type is not one of them)."""
    match data.get("type"):
        case "sit":
            return Sit(str(data["player"]), str(data["seat"]))
        case "close_seating":
            return CloseSeating()
        case "deal":
            return Deal(Card.from_code(data["card"]))
        case "void":
            return Void(str(data["reason"]))
    return None


def check_seating(command: Sit | CloseSeating, phase: str, seats: Mapping[str, str], names: Sequence[str]) -> None:
    """Refuse a seat (or the end of seating) the round cannot take now, naming why."""
    if phase != "seating":
        what = "seating is closed" if isinstance(command, Sit) else "seating is already closed"
        raise NotExpectedError(f"{what} (phase {phase})")
    if isinstance(command, Sit):
        if command.seat not in names:
            raise GameError(f"no seat {command.seat!r} (seats: {', '.join(names)})")
        if command.seat in seats:
            raise NotYourMoveError(f"seat {command.seat} is taken")
        if command.player in seats.values():
            raise NotYourMoveError(f"{command.player} already has a seat")


R = TypeVar("R")


class RoomGame(Game[R, Any]):
    """A game played in seats: the room commands are handled here; a game adds its own moves' stored form."""

    def deal(self, card: Card) -> Deal:
        return Deal(card)

    def dealt(self, command: object) -> Card | None:
        return command.card if isinstance(command, Deal) else None

    def void(self, reason: str) -> Void:
        return Void(reason)

    def command_to_dict(self, command: object) -> dict[str, Any]:
        stored = self.move_to_dict(command) or to_dict(command)
        if stored is None:
            raise NotExpectedError(f"unknown command {command!r}")
        return stored

    def command_from_dict(self, data: Mapping[str, Any]) -> Any:
        command = self.move_from_dict(data) or from_dict(data)
        if command is None:
            raise NotExpectedError(f"unknown command type {data.get('type')!r}")
        return command

    def move_to_dict(self, command: object) -> dict[str, Any] | None:
        """The stored form of one of the game's own moves (None: not one)."""
        return None

    def move_from_dict(self, data: Mapping[str, Any]) -> Any:
        return None
