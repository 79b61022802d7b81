"""Over/under: a toy house-banked game that proves the house games' shared bet path with no Pok Deng code.

Players bet while betting is open on ``over`` (the card will be 8 or higher, aces low) or ``under`` (6 or lower),
each at 1:1; a 7 loses both. After betting one card is dealt face up and the round settles. Built only on
``services.games.base`` and ``services.rounds.house``: its adapter declares the wager command, the close of betting
and what its bets return, and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Annotated, Any, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.games.base import (
    Audience,
    CardWanted,
    Expecting,
    Game,
    GameError,
    NotExpectedError,
    Payout,
    Window,
)
from services.games.rooms import Deal, Void, from_dict, to_dict
from services.rounds.adapters import Strict
from services.rounds.house import HouseAdapter, SpotBet
from services.rounds.models import Round as RoundRow
from tests.toy.toys import settings_of, whole_numbers

RANKS = "A23456789TJQK"
SPOTS = ("over", "under")


@dataclass(frozen=True)
class Settings:
    min_stake: int = 10
    max_stake: int = 10_000
    betting_ms: int = 15_000

    def __post_init__(self) -> None:
        whole_numbers(self)


@dataclass(frozen=True)
class Wager:
    wager_id: str
    player: str
    spot: str
    stake: int


@dataclass(frozen=True)
class CloseBetting:
    pass


Command = Wager | CloseBetting | Deal | Void


@dataclass
class Round:
    settings: Settings
    phase: str = "betting"
    wagers: dict[str, Wager] = field(default_factory=dict)  # wager id -> the wager, its stake raised in place
    card: Card | None = None
    commands: list[Command] = field(default_factory=list)
    events: list[str] = field(default_factory=list)


class OverUnder(Game[Round, Command]):
    name = "overunder"
    house_banked = True

    def settings(self, raw: Mapping[str, Any]) -> Settings:
        return settings_of(Settings, raw)

    def settings_dict(self, settings: Settings) -> dict[str, Any]:
        return asdict(settings)

    def most_cards(self, settings: Settings) -> int:
        return 1

    def new_round(self, settings: Settings) -> Round:
        return Round(settings)

    def verify(self, round_: Round, command: Command) -> None:
        match command:
            case Wager(wager_id=wager_id, player=player, spot=spot, stake=stake):
                if round_.phase != "betting":
                    raise NotExpectedError(f"betting is closed (phase {round_.phase})")
                if spot not in SPOTS:
                    raise GameError(f"no spot {spot!r} (over or under)")
                before = round_.wagers.get(wager_id)
                total = stake + (before.stake if before else 0)
                if not round_.settings.min_stake <= total <= round_.settings.max_stake:
                    raise GameError(f"a wager of {total} is outside the table's limits")
                if any(w.player == player and w.spot != spot for w in round_.wagers.values()):
                    raise GameError("one side only: over or under, not both")
            case CloseBetting():
                if round_.phase != "betting":
                    raise NotExpectedError(f"betting is not open (phase {round_.phase})")
            case Deal():
                if round_.phase != "dealing":
                    raise NotExpectedError(f"no card is expected (phase {round_.phase})")
            case Void(reason=reason):
                if round_.phase in ("void", "settled") or not reason.strip():
                    raise NotExpectedError("void refused")

    def apply(self, round_: Round, command: Command) -> list[Any]:
        self.verify(round_, command)
        start = len(round_.events)
        match command:
            case Wager(wager_id=wager_id, stake=stake):
                before = round_.wagers.get(wager_id)
                round_.wagers[wager_id] = replace(command, stake=stake + (before.stake if before else 0))
                round_.events.append("wager")
            case CloseBetting():
                round_.phase = "dealing"
                round_.events.append("betting closed")
            case Deal(card=card):
                round_.card, round_.phase = card, "settled"
                round_.events.append("settled")
            case Void():
                round_.phase = "void"
                round_.events.append("voided")
        round_.commands.append(command)
        return round_.events[start:]

    def commands(self, round_: Round) -> Sequence[Command]:
        return tuple(round_.commands)

    def events(self, round_: Round) -> Sequence[Any]:
        return tuple(round_.events)

    def command_to_dict(self, command: Command) -> dict[str, Any]:
        """A wager and the close of betting are this game's; a deal and a void are stored as the rooms store theirs."""
        if isinstance(command, Wager):
            return {"type": "wager", **asdict(command)}
        if isinstance(command, CloseBetting):
            return {"type": "close_betting"}
        stored = to_dict(command)
        assert stored is not None
        return stored

    def command_from_dict(self, data: Mapping[str, Any]) -> Command:
        if data.get("type") == "wager":
            return Wager(data["wager_id"], data["player"], data["spot"], data["stake"])
        if data.get("type") == "close_betting":
            return CloseBetting()
        command = from_dict(data)
        if not isinstance(command, Deal | Void):
            raise NotExpectedError(f"unknown command type {data.get('type')!r}")
        return command

    def deal(self, card: Card) -> Command:
        return Deal(card)

    def dealt(self, command: Command) -> Card | None:
        return command.card if isinstance(command, Deal) else None

    def timeout(self, round_: Round) -> Command:
        if round_.phase != "betting":
            raise NotExpectedError(f"no window is open (phase {round_.phase})")
        return CloseBetting()

    def void(self, reason: str) -> Command:
        return Void(reason)

    def expecting(self, round_: Round) -> Expecting:
        if round_.phase == "betting":
            return Window("betting", round_.settings.betting_ms, text="place your bets")
        if round_.phase == "dealing":
            return CardWanted("card", 0, True, "the card, face up")
        return None

    def phase(self, round_: Round) -> str:
        return round_.phase

    def cards(self, round_: Round) -> list[Card]:
        return [round_.card] if round_.card else []

    def hidden(self, round_: Round, audience: Audience) -> frozenset[Card]:
        return frozenset()

    def view(self, round_: Round, audience: Audience) -> dict[str, Any]:
        view: dict[str, Any] = {"phase": round_.phase, "hands": {}}
        if round_.card is not None:
            view["hands"] = {"card": {"cards": [str(round_.card)]}}
            view["result"] = self._winner(round_)
        return view

    def payouts(self, round_: Round) -> list[Payout] | None:
        if round_.phase != "settled":
            return None
        winner = self._winner(round_)
        return [Payout(w.player, w.wager_id, w.stake if w.spot == winner else -w.stake) for w in round_.wagers.values()]

    def result(self, round_: Round) -> dict[str, Any] | None:
        if round_.phase != "settled":
            return None
        return {"card": str(round_.card), "winner": self._winner(round_)}

    @staticmethod
    def _winner(round_: Round) -> str:
        assert round_.card is not None
        rank = RANKS.index(round_.card.rank) + 1
        return "over" if rank >= 8 else "under" if rank <= 6 else "seven"


class BetIn(Strict):
    side: Literal["over", "under"]
    stake: Annotated[int, Field(gt=0, le=10**15)]


class SlipIn(Strict):
    bets: Annotated[list[BetIn], Field(min_length=1, max_length=2)]


class OverUnderAdapter(HouseAdapter):
    def __init__(self, game: OverUnder) -> None:
        super().__init__(game)
        self.actions = (self.bets_action(SlipIn, "Bet over or under while betting is open."),)

    def wager_command(self, wager_id: str, player: str, bet: SpotBet) -> Wager:
        return Wager(wager_id, player, bet.side, bet.stake)

    def betting_closed(self, session: Session, round_: RoundRow, players: set[str]) -> CloseBetting:
        return CloseBetting()

    def returns(self, settings: Settings) -> dict[str, Any]:
        """Over and under each win on 24 cards of 52 at 1:1: 48/52 returned per unit staked."""
        rtp = 48 / 52
        each = {"rtp": rtp, "ci95": [rtp, rtp]}
        return {"bets": {"over": each, "under": each}, "fix": ""}


GAME = OverUnder()
GAMES = STUDIO_GAMES.adding(OverUnderAdapter(GAME))  # the studio's games and this one
