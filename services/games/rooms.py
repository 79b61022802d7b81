"""What every room game (players in seats, a dealt hand) shares: taking a seat, the end of seating, a card
dealt, a void — as commands, with their stored form. Each game adds its own moves."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, TypeVar

from services.cards import Card
from services.games.base import (
    CardWanted,
    Game,
    GameError,
    GameSettingsError,
    NotExpectedError,
    NotYourMoveError,
    Window,
)


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


@dataclass(frozen=True)
class Ready:
    player: str


@dataclass(frozen=True)
class Remove:
    """The ready check ran out: ``seat``'s player, the one the others wait for, leaves the room."""

    seat: str


@dataclass(frozen=True)
class Leave:
    player: str


@dataclass(frozen=True)
class Short:
    """``seat``'s player cannot cover the hold of a hand with the players now seated (one more sat down): they
    are out before the deal, and their hold comes back."""

    seat: str


RoomCommand = Sit | CloseSeating | Deal | Void | Ready | Remove | Leave | Short
SEAT_STAKE = "seat:"  # a seat's stake id (its hold and payout), followed by the seat


# ---- events: what a command did (the API names each by its class) ------------------------


@dataclass(frozen=True, slots=True)
class Seated:
    seat: str


@dataclass(frozen=True, slots=True)
class Readied:
    seat: str


@dataclass(frozen=True, slots=True)
class Removed:
    """The ready check ran out on ``seat``: its player is out of the room."""

    seat: str


@dataclass(frozen=True, slots=True)
class Left:
    seat: str


@dataclass(frozen=True, slots=True)
class Unfunded:
    """``seat``'s player could not cover a hand with ``players`` seated (them included): out before the deal."""

    seat: str
    players: int


@dataclass(frozen=True, slots=True)
class Freed:
    """``seat``'s player is out before the deal: their seat's hold comes back at once."""

    seat: str


@dataclass(frozen=True, slots=True)
class Dealt:
    """A card was dealt: ``count`` cards are out in this round."""

    count: int


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    phase: str


SeatEvent = Seated | Readied | Removed | Left | Unfunded | Freed


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
        case Ready(player=player):
            return {"type": "ready", "player": player}
        case Remove(seat=seat):
            return {"type": "remove", "seat": seat}
        case Leave(player=player):
            return {"type": "leave", "player": player}
        case Short(seat=seat):
            return {"type": "short", "seat": seat}
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
        case "ready":
            return Ready(str(data["player"]))
        case "remove":
            return Remove(str(data["seat"]))
        case "leave":
            return Leave(str(data["player"]))
        case "short":
            return Short(str(data["seat"]))
    return None


def check_seating(command: Sit | CloseSeating, phase: str, seats: Mapping[str, str], names: Sequence[str]) -> None:
    """Refuse a seat (or the end of seating) the round cannot take now, naming why."""
    if phase != "seating":
        what = "seating is closed" if isinstance(command, Sit) else "seating is already closed"
        raise NotExpectedError(f"{what} (phase {phase})", reason="seating_closed" if isinstance(command, Sit) else "")
    if isinstance(command, Sit):
        if command.seat not in names:
            raise GameError(f"no seat {command.seat!r} (seats: {', '.join(names)})", reason="no_such_seat")
        if command.seat in seats:
            raise NotYourMoveError(f"seat {command.seat} is taken", reason="seat_taken", params={"seat": command.seat})
        if command.player in seats.values():
            raise NotYourMoveError(f"{command.player} already has a seat", reason="already_seated")


@dataclass
class Seating:
    """The seats of a room's round before its deal, and the ready check: the deal starts when every seated player
    (two at least) is ready; when all but one are, that one has ``ready_ms`` (the game's setting) before
    ``Remove`` takes their seat. Leaving before the deal frees the seat. ``serial`` changes whenever the check
    starts over (a seat taken or freed, a player ready), so its window restarts."""

    names: tuple[str, ...]  # the room's seats, in deal order
    seats: dict[str, str] = field(default_factory=dict)  # seat -> player
    ready: set[str] = field(default_factory=set)  # players
    out: dict[str, str] = field(default_factory=dict)  # seat -> the player who left it before the deal, or was removed
    serial: int = 0

    @property
    def players(self) -> list[str]:
        return [self.seats[seat] for seat in self.names if seat in self.seats]

    def seat_of(self, player: str) -> str:
        return next(seat for seat, holder in self.seats.items() if holder == player)

    def waited_for(self) -> str | None:
        """The one seat whose player is not ready while the others are (the ready check's window is open)."""
        unready = [seat for seat in self.names if seat in self.seats and self.seats[seat] not in self.ready]
        return unready[0] if self.ready and len(unready) == 1 else None

    def all_ready(self) -> bool:
        return len(self.seats) >= 2 and self.ready >= set(self.seats.values())

    def verify(self, command: Sit | Ready | Remove | Leave | Short, phase: str) -> None:
        """Refuse what the seats cannot take now (``phase`` is the round's), naming why."""
        match command:
            case Sit():
                check_seating(command, phase, self.seats, self.names)
            case Ready(player=player) | Leave(player=player) if player not in self.seats.values():
                raise NotYourMoveError(f"{player} has no seat in this round", reason="not_seated")
            case Ready(player=player):
                if phase != "seating":
                    raise NotExpectedError(f"not now (phase {phase})")
                if player in self.ready:
                    raise NotExpectedError(f"{player} is ready already", reason="already_ready")
            case Remove(seat=seat):
                if phase != "seating" or self.waited_for() != seat:
                    raise NotExpectedError(f"seat {seat} is not the one player the others wait for")
            case Short(seat=seat):
                if phase != "seating" or seat not in self.seats:
                    raise NotExpectedError(f"seat {seat} has no player waiting for a deal (phase {phase})")

    def apply(self, command: Sit | Ready | Remove | Leave | Short) -> list[SeatEvent]:
        """Change the seats; ``Leave`` here is a leave before the deal. Returns the events."""
        self.serial += 1
        match command:
            case Sit(player=player, seat=seat):
                self.seats[seat] = player
                return [Seated(seat)]
            case Ready(player=player):
                self.ready.add(player)
                return [Readied(self.seat_of(player))]
            case Remove(seat=seat):
                self.ready.discard(self.seats[seat])
                self.out[seat] = self.seats.pop(seat)
                return [Removed(seat), Freed(seat)]
            case Leave(player=player):
                seat = self.seat_of(player)
                self.ready.discard(player)
                self.out[seat] = self.seats.pop(seat)
                return [Left(seat), Freed(seat)]
            case Short(seat=seat):
                players = len(self.seats)
                self.ready.discard(self.seats[seat])
                self.out[seat] = self.seats.pop(seat)
                return [Unfunded(seat, players), Freed(seat)]
        raise NotExpectedError(f"not a seating command: {command!r}")

    def window(self, ready_ms: int) -> Window | None:
        seat = self.waited_for()
        if seat is None:
            return None
        return Window("ready", ready_ms, seat, f"seat {seat} to be ready (the others are)", serial=self.serial)


def check_deal(phase: str, dealt: Sequence[Card], card: Card) -> None:
    if phase != "dealing":
        raise NotExpectedError(f"no card is expected (phase {phase})")
    if card in dealt:
        raise NotExpectedError("that card was already dealt in this round")


def check_void(phase: str, reason: str) -> None:
    if phase == "void" or not reason.strip():
        raise NotExpectedError("void refused: the round is already void, or no reason was given")


def dealt_to(dealt: Sequence[Card], order: Sequence[str], player: str) -> list[Card]:
    """The cards dealt to ``player`` so far: one each in turn, in ``order`` (the seated players, by seat)."""
    index = order.index(player)
    return [card for position, card in enumerate(dealt) if position % len(order) == index]


def next_card(seats: Mapping[str, str], order: Sequence[str], count: int) -> CardWanted:
    """The card the deal wants after ``count`` cards: the next player's in ``order``, face down."""
    player = order[count % len(order)]
    seat = next(seat for seat, holder in seats.items() if holder == player)
    index = count // len(order)
    return CardWanted(seat, index, False, f"seat {seat}'s card {index + 1}")


# ---- a room's settings: whole numbers of the room, and the game's own rules under "rules" ----

S = TypeVar("S")


def room_settings(cls: type[S], raw: Mapping[str, Any], rules: Callable[[Mapping[str, Any]], Any]) -> S:
    """``cls``'s defaults overridden by ``raw``; ``raw["rules"]`` goes to ``rules``; unknown names are refused."""
    known = {item.name for item in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - known)
    if unknown:
        raise GameSettingsError(f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})")
    given = raw.get("rules", {})
    if not isinstance(given, Mapping):
        raise GameSettingsError(f"setting rules: expected an object, got {given!r}")
    values = {key: value for key, value in raw.items() if key != "rules"}
    return replace(cls(), **values, rules=rules(given))  # type: ignore[type-var]


def room_settings_dict(settings: Any) -> dict[str, Any]:
    values = {key: value for key, value in asdict(settings).items() if key != "rules"}
    return values | {"rules": settings.rules.to_dict()}


DEALS = ("shoe", "online")  # a room's cards come from the studio's shoe, or from a committed server shuffle


def check_room_settings(settings: Any, high: int, optional: Collection[str] = ()) -> None:
    """``deal`` is one of ``DEALS``; every other setting but ``rules`` is a whole number 1–``high`` (0–``high`` for
    the ``optional`` ones, where 0 turns the setting off)."""
    if settings.deal not in DEALS:
        raise GameSettingsError(f"setting deal: expected one of {', '.join(DEALS)}, got {settings.deal!r}")
    for item in fields(settings):
        value, low = getattr(settings, item.name), 0 if item.name in optional else 1
        if item.name not in ("rules", "deal") and (type(value) is not int or not low <= value <= high):
            raise GameSettingsError(f"setting {item.name}: expected a whole number {low}–{high:,}, got {value!r}")


R = TypeVar("R")


class RoomGame(Game[R, Any]):
    """A game played in seats: the room commands are handled here; a game adds its own moves' stored form."""

    seat_names: ClassVar[tuple[str, ...]] = ("1", "2", "3", "4")
    hand_size: ClassVar[int] = 13

    def settings_dict(self, settings: Any) -> dict[str, Any]:
        return room_settings_dict(settings)

    def most_cards(self, settings: Any) -> int:
        return self.hand_size * len(self.seat_names)

    def deals_online(self, settings: Any) -> bool:
        return getattr(settings, "deal", "shoe") == "online"

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
