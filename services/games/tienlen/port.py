"""Tiến Lên Miền Nam on the game port: one room round — seats, the deal, the turns, the payments.

Players take seats (2–4) while seating is open; each holds ``hold_units`` × ``unit``. The deal comes
from the shoe (or a committed server shuffle) one card at a time in seat order, face down: each
player sees only their own hand until the round ends. Then the engine (``TienLenRound``) runs the
turns; a turn that runs out plays the engine's ``timeout_command`` (a pass, or the leader's lowest
single card). Payments in units × ``unit`` go to the ledger; a loss past the hold is taken from the
wallet and then recorded as a debt (``Payout.beyond_hold``).

Who leads follows the room's series (``series.Series``): the round's first command, ``Continue``,
carries what the table remembers from its earlier rounds (the previous winner, cóng streaks), and
the deal's end asks it whether this is a starting round (3♠ leads) or who leads. A room's ``tier``
(``experience.DEFAULT_TIERS``) sets the experience points a player needs to sit and earns per round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from services.cards import Card
from services.games import rooms
from services.games.base import (
    DEALER,
    Audience,
    Expecting,
    GameSettingsError,
    NotExpectedError,
    NotYourMoveError,
    Payout,
    Window,
)
from services.games.rooms import CloseSeating, Deal, Dealt, PhaseChanged, RoomGame, Seated, Sit, Void
from services.games.tienlen import cards as tl
from services.games.tienlen.engine import HAND_SIZE, TienLenRound
from services.games.tienlen.errors import IllegalPlayError
from services.games.tienlen.events import Event, Leave, Pass, Play
from services.games.tienlen.experience import DEFAULT_TIERS
from services.games.tienlen.series import Series
from services.games.tienlen.settings import TienLenSettings

SEATS = ("1", "2", "3", "4")
LARGEST = 10**12


@dataclass(frozen=True)
class RoomSettings:
    unit: int = 100  # minor units per unit of payment
    hold_units: int = 80  # held from each seated player for the round
    seating_ms: int = 20_000
    # After each sit, while a seat is free, the seats stay open this long from that sit (the seating window starts
    # again), so a newcomer can still join after quick players; 0: seating ends ``seating_ms`` after the round opens.
    seated_ms: int = 0
    turn_ms: int = 20_000
    tier: int = 1  # of experience.DEFAULT_TIERS: the ĐKN needed to sit, and the award per round played
    # A player whose turn runs out this many times in a row is taken out of the round as a leaver (``Drop``).
    missed_turns: int = 3
    deal: str = "shoe"  # or "online": a committed server shuffle deals (rooms.DEALS)
    rules: TienLenSettings = field(default_factory=TienLenSettings)

    def __post_init__(self) -> None:
        rooms.check_room_settings(self, LARGEST // 1000, optional=("seated_ms",))
        if self.tier > len(DEFAULT_TIERS):
            raise GameSettingsError(f"setting tier: expected 1–{len(DEFAULT_TIERS)}, got {self.tier}")
        if self.unit * self.hold_units > LARGEST:
            raise GameSettingsError(f"settings unit × hold_units: {self.unit * self.hold_units:,} is above {LARGEST:,}")


@dataclass(frozen=True)
class Continue:
    """The round goes on from the table's earlier rounds: who won the last, whether by an instant win, and each
    player's cóng streak (rounds in a row without playing a card). Only as the round's first command."""

    previous_winner: str | None
    after_instant_win: bool
    cong_streak: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, series: Series) -> Continue:
        return cls(series.previous_winner, series.after_instant_win, tuple(sorted(series.cong_streak.items())))

    def series(self) -> Series:
        return Series(self.previous_winner, self.after_instant_win, dict(self.cong_streak))


@dataclass(frozen=True)
class Drop:
    """``player``'s turn ran out ``missed_turns`` times in a row: the room takes them out of the round, as a leaver."""

    player: str


Command = Sit | CloseSeating | Deal | Play | Pass | Void | Continue | rooms.Leave | Drop


class Phase(StrEnum):
    SEATING = "seating"
    DEALING = "dealing"
    PLAYING = "playing"
    SETTLED = "settled"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class SeriesCarried:
    """The round goes on from the table's earlier ones; ``previous_winner`` won the last."""

    previous_winner: str | None


RoomEvent = Seated | Dealt | SeriesCarried | PhaseChanged | rooms.Left | rooms.Freed | Event


@dataclass
class Room:
    """One round of a room."""

    settings: RoomSettings
    phase: Phase = Phase.SEATING
    seats: dict[str, str] = field(default_factory=dict)  # seat -> player
    series: Series = field(default_factory=Series)  # what the table remembers of its earlier rounds
    dealt: list[Card] = field(default_factory=list)
    engine: TienLenRound | None = None
    commands: list[Command] = field(default_factory=list)
    events: list[RoomEvent] = field(default_factory=list)

    @property
    def players(self) -> list[str]:
        return [self.seats[seat] for seat in SEATS if seat in self.seats]

    def hand_of(self, player: str) -> list[Card]:
        """The cards dealt to ``player`` so far (seat order, one card each in turn)."""
        return rooms.dealt_to(self.dealt, self.players, player)


class TienLen(RoomGame[Room]):
    name = "tienlen"

    def settings(self, raw: Mapping[str, Any]) -> RoomSettings:
        return rooms.room_settings(RoomSettings, raw, TienLenSettings.from_mapping)

    def new_round(self, settings: RoomSettings) -> Room:
        return Room(settings)

    # ---- commands ----------------------------------------------------------------------

    def verify(self, round_: Room, command: Command) -> None:
        match command:
            case Sit() | CloseSeating():
                rooms.check_seating(command, round_.phase, round_.seats, SEATS)
            case Continue():
                if round_.commands:
                    raise NotExpectedError("the series is carried only by a round's first command")
            case Deal(card=card):
                rooms.check_deal(round_.phase, round_.dealt, card)
            case Play(player=player, cards=cards):
                self._playing(round_).verify_play(player, cards)
            case Pass(player=player):
                self._playing(round_).verify_pass(player)
            case rooms.Leave(player=player) | Drop(player=player):
                self._check_leave(round_, player, isinstance(command, Drop))
            case Void(reason=reason):
                rooms.check_void(round_.phase, reason)
            case _:
                raise NotExpectedError(f"unknown command {command!r}")

    def _check_leave(self, round_: Room, player: str, dropped: bool) -> None:
        if player not in round_.seats.values():
            raise NotYourMoveError(f"{player} has no seat in this round", reason="not_seated")
        if dropped and round_.engine is not None and round_.engine.to_act != player:
            raise NotExpectedError(f"{player}'s turn is not the one running out")
        if round_.phase == Phase.SEATING and not dropped:
            return
        if round_.phase == Phase.DEALING:
            raise NotExpectedError("the cards are being dealt: leave once the round is played", reason="dealing")
        self._playing(round_).verify_leave(player)

    def apply(self, round_: Room, command: Command) -> list[Any]:
        self.verify(round_, command)
        before, events = round_.phase, list[RoomEvent]()
        match command:
            case Sit(player=player, seat=seat):
                round_.seats[seat] = player
                events.append(Seated(seat))
                if round_.settings.seated_ms and len(round_.seats) == len(SEATS):  # no seat left to hold open
                    round_.phase = Phase.DEALING
            case CloseSeating():
                round_.phase = Phase.DEALING if len(round_.seats) >= 2 else Phase.SETTLED  # one player: nothing to play
            case Continue():
                round_.series = command.series()
                events.append(SeriesCarried(command.previous_winner))
            case Deal(card=card):
                round_.dealt.append(card)
                events.append(Dealt(len(round_.dealt)))
                if len(round_.dealt) == HAND_SIZE * len(round_.seats):
                    hands = {p: [tl.strength(c) for c in round_.hand_of(p)] for p in round_.players}
                    start = round_.series.next_round(round_.players)
                    engine = TienLenRound(
                        round_.players, hands, starting_round=start.starting_round, leader=start.leader,
                        settings=round_.settings.rules,
                    )  # fmt: skip
                    round_.engine = engine
                    round_.phase = Phase.PLAYING if engine.result is None else Phase.SETTLED  # an instant win ends it
            case Play(player=player, cards=cards):
                events += self._playing(round_).play(player, cards)
            case Pass(player=player):
                events += self._playing(round_).pass_turn(player)
            case rooms.Leave(player=player) if round_.phase == Phase.SEATING:  # before the deal: the hold comes back
                seat = next(seat for seat, holder in round_.seats.items() if holder == player)
                del round_.seats[seat]
                events += [rooms.Left(seat), rooms.Freed(seat)]
            case rooms.Leave(player=player):
                events += self._playing(round_).leave(player)
            case Drop(player=player):
                events += self._playing(round_).leave(player, missed=True)
            case Void():
                round_.phase = Phase.VOID
        if round_.phase == Phase.PLAYING and round_.engine is not None and round_.engine.result is not None:
            round_.phase = Phase.SETTLED
        if round_.phase != before:
            events.append(PhaseChanged(round_.phase))
        round_.commands.append(command)
        round_.events += events
        return events

    def commands(self, round_: Room) -> Sequence[Command]:
        return round_.commands

    def events(self, round_: Room) -> Sequence[Any]:
        return round_.events

    def move_to_dict(self, command: object) -> dict[str, Any] | None:
        match command:
            case Play(player=player, cards=cards, timed_out=timed_out):
                return {"type": "play", "player": player, "cards": tl.codes(cards)} | _timed_out(timed_out)
            case Pass(player=player, timed_out=timed_out):
                return {"type": "pass", "player": player} | _timed_out(timed_out)
            case Continue(previous_winner=winner, after_instant_win=instant, cong_streak=streak):
                return {"type": "continue", "previous_winner": winner, "after_instant_win": instant,
                        "cong_streak": [list(item) for item in streak]}  # fmt: skip
            case Drop(player=player):
                return {"type": "drop", "player": player}
        return None

    def move_from_dict(self, data: Mapping[str, Any]) -> Command | None:
        match data.get("type"):
            case "play":
                return Play(str(data["player"]), tl.parse(data["cards"]), data.get("timed_out") is True)
            case "pass":
                return Pass(str(data["player"]), data.get("timed_out") is True)
            case "continue":
                winner = data["previous_winner"]
                streak = tuple((str(player), int(count)) for player, count in data["cong_streak"])
                return Continue(None if winner is None else str(winner), bool(data["after_instant_win"]), streak)
            case "drop":
                return Drop(str(data["player"]))
        return None

    def timeout(self, round_: Room) -> Command:
        if round_.phase == Phase.SEATING:
            return CloseSeating()
        if round_.phase == Phase.PLAYING and round_.engine is not None:
            command = round_.engine.timeout_command()
            if command is not None and self._missed(round_, command.player) + 1 >= round_.settings.missed_turns:
                return Drop(command.player)
            if command is not None:
                return command
        raise NotExpectedError(f"no window is open (phase {round_.phase})")

    @staticmethod
    def _missed(round_: Room, player: str) -> int:
        """How many of ``player``'s last turns in a row ran out."""
        missed = 0
        for command in reversed(round_.commands):
            if isinstance(command, Play | Pass) and command.player == player:
                if not command.timed_out:
                    break
                missed += 1
        return missed

    # ---- reading a round ---------------------------------------------------------------

    def expecting(self, round_: Room) -> Expecting:
        settings = round_.settings
        if round_.phase == Phase.SEATING:
            sat = len(round_.seats)
            if settings.seated_ms and sat:  # open again from each sit (a full room deals at once: ``apply``)
                return Window("seating", settings.seated_ms, text="players taking seats", serial=sat)
            return Window("seating", settings.seating_ms, text="players taking seats")
        if round_.phase == Phase.DEALING:
            return rooms.next_card(round_.seats, round_.players, len(round_.dealt))
        if round_.phase == Phase.PLAYING and round_.engine is not None and round_.engine.to_act is not None:
            player = round_.engine.to_act
            seat = next(s for s, p in round_.seats.items() if p == player)
            turn = len(round_.engine.history)
            return Window("turn", settings.turn_ms, seat, f"seat {seat} to play or pass", serial=turn)
        return None

    def phase(self, round_: Room) -> str:
        return round_.phase

    def cards(self, round_: Room) -> list[Card]:
        return list(round_.dealt)

    def seats(self, round_: Room) -> dict[str, str]:
        return dict(round_.seats)

    def seat_hold(self, round_: Room) -> int:
        return round_.settings.hold_units * round_.settings.unit

    def hidden(self, round_: Room, audience: Audience) -> frozenset[Card]:
        """Every card still in a hand, until the round is over; a player sees their own."""
        if round_.phase in (Phase.SETTLED, Phase.VOID):
            return frozenset()
        own = audience.player if audience.kind == "player" else None
        return frozenset(card for player in round_.players if player != own for card in self._held(round_, player))

    def view(self, round_: Room, audience: Audience) -> dict[str, Any]:
        hidden = self.hidden(round_, audience)
        unseen = "received" if audience == DEALER else None
        hands = {
            seat: {"cards": [unseen if card in hidden else str(card) for card in self._held(round_, player)]}
            for seat, player in sorted(round_.seats.items())
        }
        view: dict[str, Any] = {"phase": round_.phase, "seats": sorted(round_.seats), "hands": hands}
        engine = round_.engine
        if engine is not None:
            owner = next((s for s, p in round_.seats.items() if p == engine.top_owner), None)
            view["table"] = {"cards": tl.codes(sorted(engine.top.cards)) if engine.top else [], "seat": owner}
            view["passed"] = sorted(s for s, p in round_.seats.items() if p in engine.passed)
            view["left"] = sorted(s for s, p in round_.seats.items() if p in engine.left)
            dropped = {move.player for move in engine.history if isinstance(move, Leave) and move.missed}
            view["dropped"] = sorted(s for s, p in round_.seats.items() if p in dropped)  # their turns ran out
            seat_of = {player: seat for seat, player in round_.seats.items()}
            view["turn"] = seat_of.get(engine.to_act) if engine.to_act else None
            moved = round_.commands[-1]  # the last move, when it was made for a player whose turn ran out: said
            if isinstance(moved, Play | Pass) and moved.timed_out:
                cards = tl.codes(sorted(moved.cards)) if isinstance(moved, Play) else []
                view["timed_out"] = {"seat": seat_of[moved.player], "cards": cards}
            view["chops"] = [  # chains settled so far: the last chopped pays the chain's total to the last chopper
                {"by": seat_of[c.by], "chopped": seat_of[c.chopped], "cards": tl.codes(sorted(c.cards.cards)),
                 "units": c.units}
                for c in engine.chops
            ]  # fmt: skip
        if engine is not None and engine.result is not None:
            by_seat = {player: seat for seat, player in round_.seats.items()}
            view["result"] = {
                "winner": by_seat[engine.result.winner],
                "units": {by_seat[p]: units for p, units in engine.result.payments.items()},
            }
        return view

    def payouts(self, round_: Room) -> list[Payout] | None:
        if round_.phase != Phase.SETTLED:
            return None
        units = round_.engine.result.payments if round_.engine is not None and round_.engine.result else {}
        unit = round_.settings.unit
        return [
            Payout(player, rooms.SEAT_STAKE + seat, units.get(player, 0) * unit, beyond_hold=True)
            for seat, player in sorted(round_.seats.items())
        ]

    def result(self, round_: Room) -> dict[str, Any] | None:
        if round_.phase != Phase.SETTLED:
            return None
        engine = round_.engine
        if engine is None or engine.result is None:
            return {"winner": None, "units": {}}
        return {"winner": engine.result.winner, "units": dict(engine.result.payments)}

    def series_after(self, round_: Room) -> Series:
        """What the table remembers after this round: its series with the round's result recorded (a round
        that did not finish — void, or too few players — changes nothing)."""
        series = Series(round_.series.previous_winner, round_.series.after_instant_win, dict(round_.series.cong_streak))
        engine = round_.engine
        if round_.phase == Phase.SETTLED and engine is not None and engine.result is not None:
            series.record(round_.players, engine.result)
        return series

    # ---- internals ---------------------------------------------------------------------

    def _held(self, round_: Room, player: str) -> list[Card]:
        """The cards ``player`` holds now: as dealt so far, less what they played."""
        if round_.engine is None:
            return round_.hand_of(player)
        return sorted((card for card in round_.hand_of(player) if tl.strength(card) in round_.engine.hands[player]),
                      key=tl.strength)  # fmt: skip

    def _playing(self, round_: Room) -> TienLenRound:
        if round_.phase != Phase.PLAYING or round_.engine is None:
            raise IllegalPlayError(f"no one plays now (phase {round_.phase})")
        return round_.engine


TIENLEN = TienLen()


def _timed_out(timed_out: bool) -> dict[str, Any]:
    """A move made for a player whose turn ran out says so in the log (others carry nothing: older logs read alike)."""
    return {"timed_out": True} if timed_out else {}
