"""Positions, sides and wagers of a Pok Deng round."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Position(StrEnum):
    """The four hands dealt every round: seats A, B, C and the banker (nhà cái)."""

    A = "A"
    B = "B"
    C = "C"
    BANKER = "banker"


SEATS: Final = (Position.A, Position.B, Position.C)
TURN_ORDER: Final = (*SEATS, Position.BANKER)
INITIAL_DEAL: Final = TURN_ORDER + TURN_ORDER


class Side(StrEnum):
    """A player bets on the seats (player side) or on the banker against chosen seats."""

    PLAYER = "player"
    BANKER = "banker"


def parse_seat(text: str) -> Position:
    try:
        position = Position(text)
    except ValueError:
        position = None
    if position is None or position is Position.BANKER:
        raise ValueError(f"unknown seat: {text!r} (expected A, B or C)")
    return position


@dataclass(frozen=True, slots=True)
class Wager:
    """One (player, side, seat) stake. ``order`` is when it was first placed: it breaks decider ties."""

    wager_id: str
    player: str
    side: Side
    seat: Position
    stake: int
    order: int

    @property
    def key(self) -> tuple[str, Side, Position]:
        return self.player, self.side, self.seat
