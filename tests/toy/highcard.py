"""High card: a toy second game that proves the game port without any Pok Deng code.

Players take seats P1/P2 while seating is open (each seat holds the table's stake). Then each
seated player gets one card face down (only its owner sees it), then the house one card face up,
and every hand is revealed: a seat whose rank beats the house's (A high, suits equal) wins the
stake, a lower one loses it, the same rank is a push. Built only on ``services.games.base`` and
``services.rounds.adapters``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.games import rooms
from services.games.base import (
    DEALER,
    Audience,
    CardWanted,
    Expecting,
    GameSettingsError,
    NotExpectedError,
    Payout,
    Window,
)
from services.games.rooms import CloseSeating, Deal, RoomGame, Sit, Void
from services.rounds import adapters
from tests.toy.toys import settings_of, whole_numbers

ORDER = "23456789TJQKA"
SEATS = ("P1", "P2")
HOUSE = "house"


@dataclass(frozen=True)
class Settings:
    stake: int = 100
    seating_ms: int = 1_000
    decks: int = 1  # the shoe's decks: a game of several shows the core counting copies per code

    def __post_init__(self) -> None:
        whole_numbers(self)
        if self.decks > 8:
            raise GameSettingsError(f"setting decks: a shoe of 1–8 decks, got {self.decks}")


Command = Sit | CloseSeating | Deal | Void


@dataclass
class Round:
    settings: Settings
    phase: str = "seating"
    seats: dict[str, str] = field(default_factory=dict)  # seat -> player
    hands: dict[str, Card] = field(default_factory=dict)  # seat or HOUSE -> card, in deal order
    commands: list[Command] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def order(self) -> list[str]:
        return [seat for seat in SEATS if seat in self.seats] + [HOUSE]


class HighCard(RoomGame[Round]):
    name = "highcard"

    def settings(self, raw: Mapping[str, Any]) -> Settings:
        return settings_of(Settings, raw)

    def settings_dict(self, settings: Settings) -> dict[str, Any]:
        return asdict(settings)

    def most_cards(self, settings: Settings) -> int:
        return len(SEATS) + 1

    def decks(self, settings: Settings) -> int:
        return settings.decks

    def new_round(self, settings: Settings) -> Round:
        return Round(settings)

    def verify(self, round_: Round, command: Command) -> None:
        match command:
            case Sit() | CloseSeating():
                rooms.check_seating(command, round_.phase, round_.seats, SEATS)
            case Deal():
                if round_.phase != "dealing":
                    raise NotExpectedError(f"no card is expected (phase {round_.phase})")
            case Void(reason=reason):
                if round_.phase == "void" or not reason.strip():
                    raise NotExpectedError("void refused: already void, or no reason")

    def apply(self, round_: Round, command: Command) -> list[Any]:
        self.verify(round_, command)
        start = len(round_.events)
        match command:
            case Sit(player=player, seat=seat):
                round_.seats[seat] = player
                round_.events.append(f"seated {seat}")
            case CloseSeating():
                round_.phase = "dealing"
                round_.events.append("seating closed")
            case Deal(card=card):
                position = round_.order()[len(round_.hands)]
                round_.hands[position] = card
                round_.events.append(f"dealt {position}")
                if len(round_.hands) == len(round_.order()):
                    round_.phase = "settled"
                    round_.events.append("settled")
            case Void():
                round_.phase = "void"
                round_.events.append("voided")
        round_.commands.append(command)
        return round_.events[start:]

    def commands(self, round_: Round) -> Sequence[Command]:
        return round_.commands

    def events(self, round_: Round) -> Sequence[Any]:
        return round_.events

    def timeout(self, round_: Round) -> Command:
        if round_.phase != "seating":
            raise NotExpectedError(f"no window is open (phase {round_.phase})")
        return CloseSeating()

    def expecting(self, round_: Round) -> Expecting:
        if round_.phase == "seating":
            return Window("seating", round_.settings.seating_ms, text="players taking seats")
        if round_.phase == "dealing":
            position = round_.order()[len(round_.hands)]
            face_up = position == HOUSE
            return CardWanted(position, 0, face_up, f"{position}'s card" + ("" if face_up else ", face down"))
        return None

    def phase(self, round_: Round) -> str:
        return round_.phase

    def cards(self, round_: Round) -> list[Card]:
        return list(round_.hands.values())

    def seats(self, round_: Round) -> dict[str, str]:
        return dict(round_.seats)

    def seat_hold(self, round_: Round) -> int:
        return round_.settings.stake

    def hidden(self, round_: Round, audience: Audience) -> frozenset[Card]:
        if round_.phase == "settled":
            return frozenset()
        own = {seat for seat, player in round_.seats.items() if audience.kind == "player" and player == audience.player}
        return frozenset(card for seat, card in round_.hands.items() if seat != HOUSE and seat not in own)

    def view(self, round_: Round, audience: Audience) -> dict[str, Any]:
        hidden = self.hidden(round_, audience)
        unseen = "received" if audience == DEALER else None
        hands = {p: {"cards": [unseen if card in hidden else str(card)]} for p, card in round_.hands.items()}
        view: dict[str, Any] = {"phase": round_.phase, "seats": sorted(round_.seats), "hands": hands}
        if round_.phase == "settled":
            view["result"] = {seat: net for seat, net in self._nets_by_seat(round_).items()}
        return view

    def payouts(self, round_: Round) -> list[Payout] | None:
        if round_.phase != "settled":
            return None
        nets = self._nets_by_seat(round_)
        return [Payout(player, f"seat:{seat}", nets[seat]) for seat, player in sorted(round_.seats.items())]

    def result(self, round_: Round) -> dict[str, Any] | None:
        if round_.phase != "settled":
            return None
        return {"cards": {p: str(c) for p, c in round_.hands.items()}, "nets": self._nets_by_seat(round_)}

    def _nets_by_seat(self, round_: Round) -> dict[str, int]:
        house = ORDER.index(round_.hands[HOUSE].rank)
        stake = round_.settings.stake
        nets = {}
        for seat in round_.seats:
            mine = ORDER.index(round_.hands[seat].rank)
            nets[seat] = stake if mine > house else -stake if mine < house else 0
        return nets


class HighCardAdapter(adapters.Adapter):
    actions = (adapters.seat_action("Take a seat; the table's stake is held."),)


GAME = HighCard()
GAMES = STUDIO_GAMES.adding(HighCardAdapter(GAME))  # the studio's games and this one
