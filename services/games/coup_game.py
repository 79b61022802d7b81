"""A coup game on the port: the house's table games dealt face up from a shoe (baccarat, Dragon Tiger).

A round is one coup. It opens with the shoe's earlier coups carried in (their marks, for the roads), takes bets on
the game's spots while betting is open, then wants cards face up in the order the game's rules say, and settles the
moment the coup is complete. Every bet is the house's: a wager's net is the game's ``outcome`` of the finished coup.
A game says only its own parts: where the next card goes, the finished coup, what a bet on it wins, how it is shown
and which results its roads mark.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from services.cards import Card
from services.games.base import (
    PUBLIC,
    Audience,
    CardWanted,
    Expecting,
    Game,
    GameError,
    NotExpectedError,
    Payout,
    Window,
)
from services.games.coups import Outcome
from services.games.roads import roads
from services.games.rooms import Deal, Void, from_dict, to_dict


class CoupSettings(Protocol):
    @property
    def decks(self) -> int: ...
    @property
    def min_stake(self) -> int: ...
    @property
    def max_stake(self) -> int: ...
    @property
    def betting_ms(self) -> int: ...
    def as_dict(self) -> dict[str, Any]: ...


S = TypeVar("S", bound=CoupSettings)
K = TypeVar("K")  # the game's finished coup


class Phase(StrEnum):
    BETTING = "betting"
    DEALING = "dealing"
    SETTLED = "settled"
    VOID = "void"


# ---- commands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shoe:
    """The shoe's coups before this one, as their road marks (the first command of a round; none at a new shoe)."""

    marks: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Wager:
    wager_id: str
    player: str
    spot: str
    stake: int


@dataclass(frozen=True)
class CloseBetting:
    pass


Command = Shoe | Wager | CloseBetting | Deal | Void


# ---- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShoeCarried:
    coups: int


@dataclass(frozen=True)
class WagerPlaced:
    wager_id: str
    spot: str
    stake: int  # the wager's stake after this bet


@dataclass(frozen=True)
class BettingClosed:
    wagers: int


@dataclass(frozen=True)
class CardDealt:
    position: str
    card: Card


@dataclass(frozen=True)
class CoupSettled:
    winner: str


@dataclass(frozen=True)
class Voided:
    reason: str


def burn_count(first: Card) -> int:
    """How many cards a new shoe burns after its first, turned face up: its value, tens and faces 10."""
    return "A23456789".find(first.rank) + 1 or 10


@dataclass
class CoupRound(Generic[S, K]):
    settings: S
    phase: Phase = Phase.BETTING
    marks: tuple[Mapping[str, Any], ...] = ()  # the shoe's coups before this one
    wagers: dict[str, Wager] = field(default_factory=dict)  # wager id -> the wager, raised in place
    dealt: list[tuple[str, Card]] = field(default_factory=list)  # (position, card) in shoe order
    coup: K | None = None  # once complete
    commands: list[Command] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    earlier_roads: dict[str, Any] | None = None  # the roads of ``marks``, built once


class CoupGame(Game[CoupRound[S, K], Command], Generic[S, K]):
    house_banked = True
    spots: ClassVar[tuple[str, ...]]
    sides: ClassVar[tuple[str, str]]  # the two sides a coup is won by (the roads' colours)
    opposite: ClassVar[frozenset[str]]  # a player bets on one of these at most (never both sides)
    has_derived_roads: ClassVar[bool] = True  # Big Eye Boy, Small Road, Cockroach Pig and the ask road
    most: ClassVar[int]  # the most cards a coup takes

    # ---- what each game says ----------------------------------------------------------

    @abstractmethod
    def next_card(self, dealt: Sequence[tuple[str, Card]]) -> CardWanted | None:
        """Where the next card goes, or None: the coup is complete."""

    @abstractmethod
    def finished(self, dealt: Sequence[tuple[str, Card]]) -> K: ...

    @abstractmethod
    def outcome(self, spot: str, stake: int, coup: K, settings: S) -> Outcome: ...

    @abstractmethod
    def winner(self, coup: K) -> str: ...

    @abstractmethod
    def coup_dict(self, coup: K) -> dict[str, Any]:
        """The finished coup as its replay shows it: each hand by its name, the winner, the flags."""

    @abstractmethod
    def hands(self, dealt: Sequence[tuple[str, Card]]) -> dict[str, dict[str, Any]]:
        """Each hand so far, ``{"cards": [...], "total": n}``."""

    mark_keys: ClassVar[tuple[str, ...]] = ("winner",)  # what of a result its road marks keep (its winner first)

    def mark(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """A settled coup's road mark, from its result: its winner, and its flags (false where a result has none)."""
        return {key: result.get(key) if key == "winner" else bool(result.get(key)) for key in self.mark_keys}

    # ---- the port ---------------------------------------------------------------------

    def settings_dict(self, settings: S) -> dict[str, Any]:
        return settings.as_dict()

    def most_cards(self, settings: S) -> int:
        return self.most

    def decks(self, settings: S) -> int:
        return settings.decks

    def burn(self, settings: S) -> Callable[[Card], int]:
        """A new shoe opens with its first card turned face up and that many burned: an ace 1, 2–9 their face value,
        tens and faces 10."""
        return burn_count

    def new_round(self, settings: S) -> CoupRound[S, K]:
        return CoupRound(settings)

    def verify(self, round_: CoupRound[S, K], command: Command) -> None:
        match command:
            case Shoe(marks=marks):
                if round_.commands:
                    raise NotExpectedError("the shoe's earlier coups come first in a round")
                for mark in marks:
                    if not isinstance(mark, Mapping) or mark.get("winner") not in (*self.sides, "tie"):
                        raise GameError(f"a road mark needs a winner ({', '.join(self.sides)} or tie), got {mark!r}")
            case Wager():
                self._check_wager(round_, command)
            case CloseBetting():
                if round_.phase != Phase.BETTING:
                    raise NotExpectedError(f"betting is not open (phase {round_.phase})")
            case Deal():
                if round_.phase != Phase.DEALING:
                    raise NotExpectedError(f"no card is expected now (phase {round_.phase})")
            case Void(reason=reason):
                if round_.phase == Phase.VOID:  # a settled coup may be voided (on two operators' word)
                    raise NotExpectedError("the coup is void already")
                if not reason.strip():
                    raise GameError("a void needs a reason")
            case _:
                raise GameError(f"not a command of {self.name}: {command!r}")

    def _check_wager(self, round_: CoupRound[S, K], wager: Wager) -> None:
        settings = round_.settings
        if round_.phase != Phase.BETTING:
            raise NotExpectedError(f"betting is closed (phase {round_.phase})")
        if wager.spot not in self.spots:
            raise GameError(f"no bet {wager.spot!r} at {self.name} (bets: {', '.join(self.spots)})")
        if type(wager.stake) is not int or wager.stake <= 0:
            raise GameError(f"a stake is a whole number of minor units above 0, got {wager.stake!r}")
        before = round_.wagers.get(wager.wager_id)
        if before is not None and (before.player, before.spot) != (wager.player, wager.spot):
            raise GameError(f"wager {wager.wager_id} is {before.player}'s on {before.spot}: it is raised only so")
        total = wager.stake + (before.stake if before else 0)
        if not settings.min_stake <= total <= settings.max_stake:
            raise GameError(
                f"a bet of {total:,} on {wager.spot} is outside the table's limits "
                f"({settings.min_stake:,}–{settings.max_stake:,})"
            )
        if wager.spot in self.opposite:
            for other in round_.wagers.values():
                if other.player == wager.player and other.spot in self.opposite and other.spot != wager.spot:
                    raise GameError(f"one side only: you bet on {other.spot} in this coup, so not on {wager.spot} too")

    def apply(self, round_: CoupRound[S, K], command: Command) -> list[Any]:
        self.verify(round_, command)
        events: list[Any]
        match command:
            case Shoe(marks=marks):
                round_.marks, round_.earlier_roads = tuple(dict(mark) for mark in marks), None
                events = [ShoeCarried(len(marks))]
            case Wager(wager_id=wager_id, stake=stake):
                before = round_.wagers.get(wager_id)
                placed = replace(command, stake=stake + (before.stake if before else 0))
                round_.wagers[wager_id] = placed
                events = [WagerPlaced(wager_id, placed.spot, placed.stake)]
            case CloseBetting():
                round_.phase = Phase.DEALING
                events = [BettingClosed(len(round_.wagers))]
            case Deal(card=card):
                wanted = self.next_card(round_.dealt)
                assert wanted is not None  # dealing: the coup is not complete
                round_.dealt.append((wanted.position, card))
                events = [CardDealt(wanted.position, card)]
                if self.next_card(round_.dealt) is None:
                    round_.coup = self.finished(round_.dealt)
                    round_.phase = Phase.SETTLED
                    events.append(CoupSettled(self.winner(round_.coup)))
            case Void(reason=reason):
                round_.phase = Phase.VOID
                events = [Voided(reason)]
        round_.commands.append(command)
        round_.events.extend(events)
        return events

    def commands(self, round_: CoupRound[S, K]) -> Sequence[Command]:
        return tuple(round_.commands)

    def events(self, round_: CoupRound[S, K]) -> Sequence[Any]:
        return tuple(round_.events)

    def command_to_dict(self, command: Command) -> dict[str, Any]:
        match command:
            case Shoe(marks=marks):
                return {"type": "shoe", "marks": [dict(mark) for mark in marks]}
            case Wager(wager_id=wager_id, player=player, spot=spot, stake=stake):
                return {"type": "wager", "wager_id": wager_id, "player": player, "spot": spot, "stake": stake}
            case CloseBetting():
                return {"type": "close_betting"}
        stored = to_dict(command)
        assert stored is not None  # a deal or a void
        return stored

    def command_from_dict(self, data: Mapping[str, Any]) -> Command:
        """A stored command; one that is not whole (a field missing or of another kind) is refused naming its type."""
        try:
            match data.get("type"):
                case "shoe":
                    return Shoe(tuple(data["marks"]))
                case "wager":
                    return Wager(str(data["wager_id"]), str(data["player"]), str(data["spot"]), data["stake"])
                case "close_betting":
                    return CloseBetting()
            command = from_dict(data)
        except (KeyError, TypeError, ValueError) as error:
            raise GameError(f"a stored {data.get('type')!r} command of {self.name} is not whole: {error!r}") from None
        if not isinstance(command, Deal | Void):
            raise GameError(f"not a command of {self.name}: type {data.get('type')!r}")
        return command

    def deal(self, card: Card) -> Command:
        return Deal(card)

    def dealt(self, command: Command) -> Card | None:
        return command.card if isinstance(command, Deal) else None

    def timeout(self, round_: CoupRound[S, K]) -> Command:
        if round_.phase != Phase.BETTING:
            raise NotExpectedError(f"no window is open (phase {round_.phase})")
        return CloseBetting()

    def void(self, reason: str) -> Command:
        return Void(reason)

    # ---- reading a round --------------------------------------------------------------

    def expecting(self, round_: CoupRound[S, K]) -> Expecting:
        if round_.phase == Phase.BETTING:
            return Window("betting", round_.settings.betting_ms, text="place your bets")
        if round_.phase == Phase.DEALING:
            return self.next_card(round_.dealt)
        return None

    def phase(self, round_: CoupRound[S, K]) -> str:
        return str(round_.phase)

    def cards(self, round_: CoupRound[S, K]) -> list[Card]:
        return [card for _, card in round_.dealt]

    def positions(self, round_: CoupRound[S, K]) -> list[str | None]:
        return [position for position, _ in round_.dealt]

    def hidden(self, round_: CoupRound[S, K], audience: Audience) -> frozenset[Card]:
        return frozenset()  # every card is dealt face up

    def view(self, round_: CoupRound[S, K], audience: Audience = PUBLIC) -> dict[str, Any]:
        """The same for everyone: the coup's cards are face up, and no player's bet is anyone else's business."""
        view: dict[str, Any] = {"phase": str(round_.phase), "hands": self.hands(round_.dealt)}
        wanted = self.expecting(round_)
        view["next"] = wanted.text if isinstance(wanted, CardWanted) else None
        result = self.result(round_)
        if result is not None:
            view["result"] = result
        view["roads"] = self.roads(round_)
        return view

    def roads(self, round_: CoupRound[S, K]) -> dict[str, Any]:
        """The shoe's roads: its earlier coups and, once settled (and not voided), this one."""
        result = self.result(round_)
        if result is None:  # not settled (or voided): the shoe's earlier coups only
            if round_.earlier_roads is None:
                round_.earlier_roads = roads(round_.marks, self.sides, self.has_derived_roads)
            return round_.earlier_roads
        return roads((*round_.marks, self.mark(result)), self.sides, self.has_derived_roads)

    def payouts(self, round_: CoupRound[S, K]) -> list[Payout] | None:
        if round_.phase != Phase.SETTLED or round_.coup is None:
            return None
        coup, settings = round_.coup, round_.settings
        payouts = []
        for wager in round_.wagers.values():
            outcome = self.outcome(wager.spot, wager.stake, coup, settings)
            payouts.append(Payout(wager.player, wager.wager_id, outcome.net, outcome.commission))
        return payouts

    def result(self, round_: CoupRound[S, K]) -> dict[str, Any] | None:
        """The coup as history keeps it: its ``hands`` (as every game's result names them), winner and flags."""
        if round_.phase != Phase.SETTLED or round_.coup is None:
            return None
        hands = self.hands(round_.dealt)
        return {"hands": hands} | {key: value for key, value in self.coup_dict(round_.coup).items() if key not in hands}
