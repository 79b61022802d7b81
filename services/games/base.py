"""The game port: what every game's engine offers the table core.

The round service, the controller and the API know a game only through this contract: what the
round expects next (a card for a position, a window with its length, or nothing), commands
verified and applied one way and stored as JSON, the command a window's end produces, views per
audience (the engine decides which cards each audience may see), and money outcomes per held
stake. A new game is one engine module, one ``Game`` and one adapter on the rounds side, named in the
composition root (``services.catalog``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from services.cards import Card
from services.errors import Refusal

R = TypeVar("R")  # the game's round (its engine object)
C = TypeVar("C")  # the game's command type


# ---- errors: every game's refusals share these bases, each with a stable ``code`` ----------


class GameError(Refusal):
    """A game refused an input: a rule broken (the base), or one of the kinds below (``reason`` and ``params``
    name it finer, for the pages: ``services.errors``)."""

    code: ClassVar[str] = "rule_violation"


class NotExpectedError(GameError):
    """The round is not waiting for this input now."""

    code = "not_expected_now"


class NotAllowedError(GameError):
    """The input is not this player's to give: someone else's move, a room above their tier."""

    code = "not_allowed"


class NotYourMoveError(NotAllowedError):
    """The input is someone else's to give."""

    code = "not_your_decision"


class GameSettingsError(GameError):
    """A table setting is unknown or out of range."""

    code = "invalid_settings"


class UnknownGameError(GameError):
    code = "unknown_game"


# ---- what a round expects next ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardWanted:
    """The next card from the shoe goes to ``position`` (its ``index``-th card), face up or down."""

    position: str
    index: int
    face_up: bool
    text: str  # "seat A's first card" — what the dealer console shows


@dataclass(frozen=True, slots=True)
class Window:
    """Inputs from people until ``ms`` after the window opened; then the game's ``timeout`` command.

    Two expectations are the same window when ``kind``, ``seat`` and ``serial`` agree: its deadline is
    set when it opens and kept while inputs arrive inside it. ``serial`` tells apart two windows of
    the same seat in a row (a player's turn, then their next turn).
    """

    kind: str  # betting | insurance | decision | turn | ...
    ms: int
    seat: str = ""  # whose window, when it is one seat's
    text: str = ""
    serial: int = 0

    @property
    def key(self) -> tuple[str, str, int]:
        return self.kind, self.seat, self.serial


Expecting = CardWanted | Window | None  # None: the round is over (settled or void)

SETTLED, VOID = "settled", "void"  # every game names its two finished phases so
FINISHED = (SETTLED, VOID)


@dataclass(frozen=True, slots=True)
class Audience:
    """Who a view is for: anyone (``public``), the table's dealer, or one player (their own seat's cards)."""

    kind: str  # public | dealer | player
    player: str = ""


PUBLIC = Audience("public")
DEALER = Audience("dealer")


def viewer(player_id: str) -> Audience:
    """One player: they see their own hidden cards."""
    return Audience("player", player_id)


@dataclass(frozen=True, slots=True)
class Payout:
    """The money outcome of one held stake, for the ledger: ``net`` excludes the stake, after commission."""

    player: str
    stake_id: str
    net: int
    commission: int = 0
    beyond_hold: bool = False  # the game lets a loss pass the hold: the wallet pays the rest, then a debt


# ---- the port ---------------------------------------------------------------------------


class Game(ABC, Generic[R, C]):
    """One game's engine as the table core sees it. Pure: no I/O, no clock."""

    name: ClassVar[str]
    # the house takes the players' bets (a banker game): its adapter must say what they return (the table guard)
    house_banked: ClassVar[bool] = False

    # settings
    @abstractmethod
    def settings(self, raw: Mapping[str, Any]) -> Any:
        """The table's settings, checked (``GameSettingsError`` names what is wrong)."""

    @abstractmethod
    def settings_dict(self, settings: Any) -> dict[str, Any]: ...

    @abstractmethod
    def most_cards(self, settings: Any) -> int:
        """The most cards a round can take from the shoe (a round opens only if the deck has them)."""

    def deals_online(self, settings: Any) -> bool:
        """The table deals from a committed server shuffle instead of a shoe (rooms played online)."""
        return False

    def decks(self, settings: Any) -> int:
        """How many 52-card decks the table's shoe holds, shuffled together (the controller counts each code up to
        it, and reconciles a shoe fill against it)."""
        return 1

    def burn(self, settings: Any) -> Callable[[Card], int] | None:
        """The burn at a new shoe, for a game that burns one: given the shoe's first card (turned face up), how many
        cards are burned after it before the first round takes a card. None: the game burns none."""
        return None

    # rounds and commands
    @abstractmethod
    def new_round(self, settings: Any) -> R: ...

    def replay(self, commands: Iterable[C], settings: Any) -> R:
        round_ = self.new_round(settings)
        for command in commands:
            self.apply(round_, command)
        return round_

    @abstractmethod
    def apply(self, round_: R, command: C) -> list[Any]:
        """Verify and apply; returns the events. Nothing changes when it is refused (a ``GameError``)."""

    @abstractmethod
    def verify(self, round_: R, command: C) -> None: ...

    @abstractmethod
    def commands(self, round_: R) -> Sequence[C]: ...

    @abstractmethod
    def command_to_dict(self, command: C) -> dict[str, Any]: ...

    @abstractmethod
    def command_from_dict(self, data: Mapping[str, Any]) -> C: ...

    @abstractmethod
    def deal(self, card: Card) -> C:
        """The command that deals ``card`` where the round expects it."""

    @abstractmethod
    def dealt(self, command: C) -> Card | None:
        """The card a command deals (None: not a deal)."""

    @abstractmethod
    def timeout(self, round_: R) -> C:
        """The command the end of the open window produces (``NotExpectedError`` without one)."""

    @abstractmethod
    def void(self, reason: str) -> C: ...

    # reading a round
    @abstractmethod
    def expecting(self, round_: R) -> Expecting: ...

    @abstractmethod
    def phase(self, round_: R) -> str: ...

    @abstractmethod
    def cards(self, round_: R) -> list[Card]:
        """Every card dealt in the round, in shoe order."""

    def positions(self, round_: R) -> list[str | None]:
        """The hand each dealt card went to, in shoe order (None where the public view does not show it)."""
        hand_of = {
            code: position
            for position, hand in (self.view(round_, PUBLIC).get("hands") or {}).items()
            for code in hand.get("cards", [])
            if isinstance(code, str)
        }
        return [hand_of.get(str(card)) for card in self.cards(round_)]

    def seats(self, round_: R) -> dict[str, str]:
        """Who holds each seat with private cards (seat -> player); only they may open its private stream."""
        return {}

    def seat_hold(self, round_: R) -> int:
        """What a player taking a seat has held from their wallet (games with seats)."""
        raise NotExpectedError(f"{self.name} has no seats to take")

    @abstractmethod
    def hidden(self, round_: R, audience: Audience) -> frozenset[Card]:
        """The dealt cards ``audience`` may not see yet."""

    @abstractmethod
    def view(self, round_: R, audience: Audience) -> dict[str, Any]:
        """The round as ``audience`` sees it: JSON, with no card from ``hidden(round_, audience)``."""

    def views(self, round_: R) -> dict[str, dict[str, Any]]:
        """The table's two views of one change, ``public`` and ``dealer``: a game that can build both in one pass
        overrides this (the round service calls it once per committed change)."""
        return {"public": self.view(round_, PUBLIC), "dealer": self.view(round_, DEALER)}

    @abstractmethod
    def payouts(self, round_: R) -> list[Payout] | None:
        """Each held stake's outcome once the round is settled (None before)."""

    @abstractmethod
    def result(self, round_: R) -> dict[str, Any] | None:
        """The settled result as JSON, for history (None before settlement)."""

    def nets(self, round_: R) -> dict[str, int]:
        """Each player's net over the round (what a void reverses, what a recalculation compares)."""
        nets: dict[str, int] = {}
        for payout in self.payouts(round_) or []:
            nets[payout.player] = nets.get(payout.player, 0) + payout.net
        return nets

    def flow(self, round_: R) -> list[Any]:
        """What happened in the round, card values aside: a recalculation must leave it unchanged."""
        return [type(event).__name__ for event in self.events(round_)]

    @abstractmethod
    def events(self, round_: R) -> Sequence[Any]: ...
