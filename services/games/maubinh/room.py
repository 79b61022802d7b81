"""A Mậu Binh room's state: its commands (the room's own and the seats'), what they record, its settings, and the
hand in progress (``Room``). The rules that move it are ``port.MauBinh``'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from services.cards import Card
from services.games import rooms
from services.games.base import GameSettingsError
from services.games.maubinh.cards import CARDS
from services.games.maubinh.hand import Hand
from services.games.maubinh.settings import MauBinhSettings
from services.games.rooms import (
    CloseSeating,
    Deal,
    Dealt,
    Leave,
    Left,
    PhaseChanged,
    Ready,
    Remove,
    Seating,
    Short,
    Sit,
    Void,
)

SEATS: Final = ("1", "2", "3", "4")
CHIS: Final = 3
NUMBER: Final = {card: number for number, card in enumerate(CARDS)}
LARGEST: Final = 10**12


@dataclass(frozen=True)
class Arrange:
    """``player``'s arrangement. One that is *binh lủng* (a chi weaker than the one after it) is taken only with
    ``confirmed``: the player was told it loses every chi and sent it anyway."""

    player: str
    chi1: tuple[Card, ...]
    chi2: tuple[Card, ...]
    chi3: tuple[Card, ...]
    confirmed: bool = field(default=False, compare=False)  # how it came, not what it is


@dataclass(frozen=True)
class CloseArranging:
    """Arranging ran out: whoever has not submitted gets the auto-arrangement."""


@dataclass(frozen=True)
class Reveal:
    """The showdown moves on: the next chi is shown, or after chi 3 the hand settles."""


Command = Sit | Ready | Remove | Short | CloseSeating | Deal | Arrange | Leave | CloseArranging | Reveal | Void


class Phase(StrEnum):
    SEATING = "seating"
    DEALING = "dealing"
    ARRANGING = "arranging"
    SHOWDOWN = "showdown"
    SETTLED = "settled"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class Arranged:
    """``seat``'s hand is set: by its player, or by the house's best arrangement when the window ran out."""

    seat: str
    auto: bool = False


@dataclass(frozen=True, slots=True)
class Revealed:
    """The showdown has shown its ``chi``-th chi (4: the round's result)."""

    chi: int


RoomEvent = (
    rooms.Seated
    | rooms.Readied
    | rooms.Removed
    | Left
    | rooms.Unfunded
    | rooms.Freed
    | Dealt
    | Arranged
    | Revealed
    | PhaseChanged
)


@dataclass(frozen=True)
class RoomSettings:
    unit: int = 100  # minor units per unit (the stake per chi)
    ready_ms: int = 20_000
    # Seats held open: once everyone seated is ready, while a seat is free, the deal waits until this long has passed
    # since the seats last changed (a sit, a ready, a leave), so a newcomer can join; 0: the deal starts at once.
    seating_ms: int = 0
    arranging_ms: int = 90_000
    showdown_ms: int = 5_000  # each chi is shown this long
    deal: str = "shoe"  # or "online": a committed server shuffle deals (rooms.DEALS)
    rules: MauBinhSettings = field(default_factory=MauBinhSettings)

    def __post_init__(self) -> None:
        rooms.check_room_settings(self, LARGEST // 1000, optional=("seating_ms",))
        if self.hold > LARGEST:
            raise GameSettingsError(f"setting unit: the hold per seat ({self.hold:,}) is above {LARGEST:,}")

    @property
    def hold(self) -> int:
        """The most a seat ever holds: the largest loss of a hand at a full table, in minor units."""
        return self.rules.largest_loss(len(SEATS)) * self.unit


@dataclass
class Room:
    settings: RoomSettings
    phase: Phase = Phase.SEATING
    seating: Seating = field(default_factory=lambda: Seating(SEATS))
    dealt: list[Card] = field(default_factory=list)
    hands: dict[str, Hand] = field(default_factory=dict)  # player -> arranged
    left: set[str] = field(default_factory=set)  # players who left after the deal
    revealed: int = 0  # chi shown so far in the showdown
    seats_closed: bool = False  # the seats held open (``seating_ms``) closed: the deal may start
    commands: list[Command] = field(default_factory=list)
    events: list[RoomEvent] = field(default_factory=list)

    @property
    def seats(self) -> dict[str, str]:
        return self.seating.seats

    @property
    def players(self) -> list[str]:
        return self.seating.players

    def seat_of(self, player: str) -> str:
        return self.seating.seat_of(player)

    def dealt_to(self, player: str) -> list[Card]:
        return rooms.dealt_to(self.dealt, self.players, player)
