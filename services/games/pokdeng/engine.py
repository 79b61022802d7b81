"""The Pok Deng round: a pure, synchronous state machine.

Every input is an explicit call (a wager, a card, a decision, a timeout); each returns the events it caused and
appends them to ``events``, and the command itself to ``commands``. ``expecting`` says at every moment what the round
waits for; anything else is refused with an error that names the input and the round's state. The round never reads a
clock: the caller runs the windows and reports their end (``close_betting``, ``close_insurance``, ``decision_timeout``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from services.cards import Card
from services.games.pokdeng import events as ev
from services.games.pokdeng.errors import (
    DecisionError,
    IllegalActionError,
    InsuranceError,
    WagerError,
)
from services.games.pokdeng.hands import classify, points
from services.games.pokdeng.model import INITIAL_DEAL, SEATS, TURN_ORDER, Position, Side, Wager
from services.games.pokdeng.settings import THRESHOLDS, TableSettings
from services.games.pokdeng.settlement import RoundResult, settle_round

INSURANCE_UP_CARDS = frozenset("89")
BANKER_DRAWS_AT_MOST = 5


class Phase(StrEnum):
    BETTING = "betting"
    DEALING = "dealing"
    INSURANCE = "insurance"
    DRAWING = "drawing"
    SETTLED = "settled"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class AwaitingBets:
    """Betting is open: wagers, then ``close_betting``."""


@dataclass(frozen=True, slots=True)
class AwaitingCard:
    position: Position
    index: int
    face_up: bool

    def describe(self) -> str:
        ordinal = ("first", "second", "third")[self.index]
        side = "" if self.face_up else ", face down"
        owner = "the banker" if self.position is Position.BANKER else f"seat {self.position}"
        return f"{owner}'s {ordinal} card{side}"


@dataclass(frozen=True, slots=True)
class AwaitingInsurance:
    """The insurance window is open: purchases, then ``close_insurance``."""

    eligible: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AwaitingDecision:
    seat: Position
    decider: str
    points: int
    threshold: int


Expectation = AwaitingBets | AwaitingCard | AwaitingInsurance | AwaitingDecision


def describe(expecting: Expectation | None) -> str:
    match expecting:
        case None:
            return "nothing (the round is over)"
        case AwaitingBets():
            return "bets or the close of betting"
        case AwaitingCard():
            return expecting.describe()
        case AwaitingInsurance():
            return "insurance purchases or the close of the insurance window"
        case AwaitingDecision(seat=seat, decider=decider):
            return f"a draw/stand decision on seat {seat} by {decider}"


class PokDengRound:
    """One round at one table."""

    def __init__(self, settings: TableSettings | None = None) -> None:
        self.settings = settings or TableSettings()
        self.phase = Phase.BETTING
        self.commands: list[ev.Command] = []
        self.events: list[ev.Event] = []
        self.hands: dict[Position, list[Card]] = {position: [] for position in TURN_ORDER}
        self.result: RoundResult | None = None
        self._wagers: dict[tuple[str, Side, Position], Wager] = {}
        self._by_player: dict[str, list[Wager]] = {}  # indexes that keep wager checks O(1) in big rounds
        self._ids: dict[str, tuple[str, Side, Position]] = {}
        self._thresholds: dict[str, int] = {}
        self._seat_thresholds: dict[Position, int] = {}
        self._insurance: dict[str, int] = {}
        self._insurance_offered = False
        self._insurance_closed = False
        self._draws: dict[Position, bool] = {}
        self.expecting: Expectation | None = AwaitingBets()

    # ---- reading the round ------------------------------------------------------------

    @property
    def wagers(self) -> list[Wager]:
        return sorted(self._wagers.values(), key=lambda wager: wager.order)

    @property
    def insurance(self) -> Mapping[str, int]:
        return dict(self._insurance)

    @property
    def cards(self) -> list[Card]:
        return [event.card for event in self.events if isinstance(event, ev.CardDealt)]

    def backer(self, seat: Position) -> Wager | None:
        """The largest wager on the seat's player side; ties go to the earlier bet."""
        backers = [w for w in self._wagers.values() if w.side is Side.PLAYER and w.seat is seat]
        return min(backers, key=lambda wager: (-wager.stake, wager.order)) if backers else None

    def decider(self, seat: Position) -> str | None:
        """Who chooses Draw or Stand for the seat: its largest player-side bettor, while their own stake is at least
        everything staked on the banker side against the seat; otherwise the table's default threshold decides, so
        no one steers a seat for a larger interest on the other side (``services.games.pokdeng.collusion``)."""
        backer = self.backer(seat)
        against = sum(w.stake for w in self._wagers.values() if w.side is Side.BANKER and w.seat is seat)
        return backer.player if backer is not None and backer.stake >= against else None

    def seen(self) -> list[tuple[ev.CardDealt, bool]]:
        """Every card dealt, in deal order, with whether the table may see it now: a face-down card stays hidden
        until its reveal. The one place this rule is written; the views, the hidden set and messages read it."""
        revealed = {(e.position, e.index) for e in self.events if isinstance(e, ev.CardRevealed)}
        return [
            (event, event.face_up or (event.position, event.index) in revealed)
            for event in self.events
            if isinstance(event, ev.CardDealt)
        ]

    def state(self) -> str:
        """The round for error messages, which reach players: a face-down card shows as ``??``."""
        shown: dict[Position, list[str]] = {position: [] for position in TURN_ORDER}
        for card, visible in self.seen():
            shown[card.position].append(str(card.card) if visible else "??")
        dealt = " ".join(f"{position}:{''.join(cards)}" for position, cards in shown.items() if cards)
        return f"phase {self.phase}, waiting for {describe(self.expecting)}" + (f", dealt {dealt}" if dealt else "")

    # ---- the command entry point ------------------------------------------------------

    def apply(self, command: ev.Command) -> list[ev.Event]:
        """Verify and apply one command; nothing changes when it is refused."""
        self.verify(command)
        start = len(self.events)
        match command:
            case ev.PlaceWager():
                self._place_wager(command)
            case ev.CloseBetting():
                self._thresholds = dict(command.thresholds)
                self._seat_thresholds = dict(command.seat_thresholds)
                self.phase = Phase.DEALING
                self._emit(ev.BettingClosed(len(self._wagers)))
            case ev.DealCard():
                self._deal(command.card)
            case ev.BuyInsurance():
                self._insurance[command.player] = command.amount
                self._emit(ev.InsuranceBought(command.player, command.amount))
            case ev.CloseInsurance():
                self._insurance_closed = True
                self._emit(ev.InsuranceClosed(len(self._insurance)))
            case ev.Decide():
                self._decide(command.seat, command.draw, ev.DrawReason.PLAYER)
            case ev.DecisionTimeout():
                assert isinstance(self.expecting, AwaitingDecision)
                self._decide(command.seat, self.points(command.seat) <= self.expecting.threshold, ev.DrawReason.TIMEOUT)
            case ev.VoidRound():
                was_settled = self.phase is Phase.SETTLED
                self.result = None  # a void round has no result; the settled one is in the events
                self.phase = Phase.VOID
                self.expecting = None
                self._emit(ev.RoundVoided(command.reason, was_settled))
        self.commands.append(command)
        if self.phase not in (Phase.SETTLED, Phase.VOID):
            self._advance()
        return self.events[start:]

    def can(self, command: ev.Command) -> bool:
        try:
            self.verify(command)
        except ValueError:
            return False
        return True

    def verify(self, command: ev.Command) -> None:
        """Raise a ``PokDengError`` naming the input and the state when ``command`` is not acceptable now."""
        match command:
            case ev.PlaceWager():
                self._verify_wager(command)
            case ev.CloseBetting():
                self._require(AwaitingBets, "close of betting")
                for player, threshold in command.thresholds.items():
                    if type(threshold) is not int or threshold not in THRESHOLDS:
                        raise WagerError(f"threshold of {player}: {threshold!r} is not within 1–5")
                for seat, threshold in command.seat_thresholds.items():
                    if seat not in SEATS or type(threshold) is not int or threshold not in THRESHOLDS:
                        raise WagerError(f"threshold of seat {seat!r}: {threshold!r} is not within 1–5")
            case ev.DealCard():
                if not isinstance(command.card, Card):
                    raise IllegalActionError(f"deal refused: {command.card!r} is not a Card")
                self._verify_deal(command.card)
            case ev.BuyInsurance():
                self._verify_insurance(command.player, command.amount)
            case ev.CloseInsurance():
                self._require(AwaitingInsurance, "close of the insurance window")
            case ev.Decide() | ev.DecisionTimeout():
                self._verify_decision(command)
            case ev.VoidRound():
                if self.phase is Phase.VOID:
                    raise IllegalActionError("void refused: the round is already void")
                if not command.reason.strip():
                    raise IllegalActionError("void refused: a reason is required")
            case _:
                raise IllegalActionError(f"unknown command: {command!r}")

    # ---- convenience wrappers (the names read better at call sites) -------------------

    def place_wager(self, wager_id: str, player: str, side: Side, seat: Position, stake: int) -> list[ev.Event]:
        return self.apply(ev.PlaceWager(wager_id, player, side, seat, stake))

    def close_betting(self, thresholds: Mapping[str, int] | None = None) -> list[ev.Event]:
        return self.apply(ev.CloseBetting(dict(thresholds or {})))

    def deal(self, card: Card) -> list[ev.Event]:
        return self.apply(ev.DealCard(card))

    def buy_insurance(self, player: str, amount: int) -> list[ev.Event]:
        return self.apply(ev.BuyInsurance(player, amount))

    def close_insurance(self) -> list[ev.Event]:
        return self.apply(ev.CloseInsurance())

    def decide(self, seat: Position, draw: bool, player: str | None = None) -> list[ev.Event]:
        return self.apply(ev.Decide(seat, draw, player))

    def decision_timeout(self, seat: Position) -> list[ev.Event]:
        return self.apply(ev.DecisionTimeout(seat))

    def void(self, reason: str) -> list[ev.Event]:
        return self.apply(ev.VoidRound(reason))

    @classmethod
    def replay(cls, commands: Iterable[ev.Command], settings: TableSettings | None = None) -> PokDengRound:
        round_ = cls(settings)
        for command in commands:
            round_.apply(command)
        return round_

    def points(self, position: Position) -> int:
        return points(self.hands[position])

    def insurance_amounts(self, player: str) -> tuple[int, ...]:
        """The amounts ``player`` may insure for: T, or also T/2 or T/3 with 2 or 3 player-side wagers."""
        own = self._by_player.get(player, [])
        total = sum(w.stake for w in own)
        if not own:
            return ()
        if own[0].side is Side.BANKER or len(own) == 1:
            return (total,)
        return (total, total // len(own))

    # ---- verification -----------------------------------------------------------------

    def _require(self, kind: type, action: str) -> None:
        if not isinstance(self.expecting, kind):
            raise IllegalActionError(f"{action} refused: {self.state()}")

    def _verify_wager(self, command: ev.PlaceWager) -> None:
        label = f"wager {command.wager_id!r} ({command.player}, {command.side} side, seat {command.seat})"
        self._require(AwaitingBets, label)
        if not isinstance(command.side, Side):
            raise WagerError(f"{label} refused: side must be a Side, got {command.side!r}")
        if not isinstance(command.player, str) or not command.player or not isinstance(command.wager_id, str):
            raise WagerError(f"{label} refused: player and wager id must be non-empty strings")
        if not isinstance(command.seat, Position) or command.seat not in SEATS:
            raise WagerError(f"{label} refused: seat must be A, B or C")
        if type(command.stake) is not int or command.stake <= 0:
            raise WagerError(f"{label} refused: stake must be a positive whole number, got {command.stake!r}")
        for wager in self._by_player.get(command.player, ()):
            if wager.side is not command.side:
                message = f"{label} refused: {command.player} already bets on the {wager.side} side this round"
                raise WagerError(message, reason="other_side", params={"side": str(wager.side)})
        owner = self._ids.get(command.wager_id)
        if owner is not None and owner != (command.player, command.side, command.seat):
            raise WagerError(f"{label} refused: id {command.wager_id!r} belongs to another wager")
        existing = self._wagers.get((command.player, command.side, command.seat))
        if existing is not None and existing.wager_id != command.wager_id:
            raise WagerError(f"{label} refused: raise wager {existing.wager_id!r}, the player's wager on this seat")
        total = command.stake + (existing.stake if existing else 0)
        minimum = self.settings.min_stake
        if command.stake < minimum and existing is None:
            message = f"{label} refused: stake {command.stake} is below the table minimum {minimum}"
            raise WagerError(message, reason="below_minimum", params={"minimum": minimum})
        if total > self.settings.max_stake:
            message = f"{label} refused: stake {total} exceeds the table maximum {self.settings.max_stake}"
            raise WagerError(message, reason="above_maximum", params={"maximum": self.settings.max_stake})

    def _verify_deal(self, card: Card) -> None:
        if not isinstance(self.expecting, AwaitingCard):
            raise IllegalActionError(f"card {card} refused: {self.state()}")
        for position, cards in self.hands.items():
            if card in cards:
                raise IllegalActionError(f"card {card} refused: already dealt to {position} this round")

    def _verify_insurance(self, player: str, amount: int) -> None:
        label = f"insurance of {player} for {amount!r}"
        self._require(AwaitingInsurance, label)
        allowed = self.insurance_amounts(player)
        if not allowed:
            raise InsuranceError(f"{label} refused: {player} has no wager this round", reason="no_wager")
        if player in self._insurance:
            message = f"{label} refused: {player} already bought insurance for {self._insurance[player]}"
            raise InsuranceError(message, reason="already_insured")
        if type(amount) is not int or amount not in allowed:
            raise InsuranceError(f"{label} refused: the amount must be {' or '.join(map(str, allowed))}")

    def _verify_decision(self, command: ev.Decide | ev.DecisionTimeout) -> None:
        what = "decision on" if isinstance(command, ev.Decide) else "timeout of"
        label = f"{what} seat {command.seat}"
        expecting = self.expecting
        if not isinstance(expecting, AwaitingDecision) or expecting.seat is not command.seat:
            raise IllegalActionError(f"{label} refused: {self.state()}")
        if isinstance(command, ev.Decide) and type(command.draw) is not bool:
            raise DecisionError(
                f"{label} refused: the choice must be draw (True) or stand (False), got {command.draw!r}"
            )
        if isinstance(command, ev.Decide) and command.player not in (None, expecting.decider):
            raise DecisionError(f"{label} refused: {command.player} is not the seat's decider ({expecting.decider})")

    # ---- the flow ---------------------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        self.events.append(event)

    def _place_wager(self, command: ev.PlaceWager) -> None:
        key = (command.player, command.side, command.seat)
        existing = self._wagers.get(key)
        order = existing.order if existing else len(self._wagers)
        stake = command.stake + (existing.stake if existing else 0)
        wager = Wager(command.wager_id, command.player, command.side, command.seat, stake, order)
        self._wagers[key] = wager
        self._ids[wager.wager_id] = key
        own = self._by_player.setdefault(wager.player, [])
        own[:] = [w for w in own if w.key != key] + [wager]
        self._emit(ev.WagerAccepted(wager, command.stake if existing else 0))

    def _deal(self, card: Card) -> None:
        assert isinstance(self.expecting, AwaitingCard)
        position, index, face_up = self.expecting.position, self.expecting.index, self.expecting.face_up
        self.hands[position].append(card)
        self._emit(ev.CardDealt(position, index, card, face_up))

    def _decide(self, seat: Position, draw: bool, reason: ev.DrawReason) -> None:
        self._draws[seat] = draw
        self._emit(ev.DrawDecided(seat, draw, reason, self.points(seat)))

    def _advance(self) -> None:
        """Run every automatic step until the round waits for outside input or ends."""
        self.expecting = self._next()
        while self.expecting is None and self.phase not in (Phase.SETTLED, Phase.VOID):
            self.expecting = self._next()

    def _next(self) -> Expectation | None:
        """One step: either what the round now waits for, or None after an automatic step."""
        if self.phase is Phase.BETTING:
            return AwaitingBets()
        banker = self.hands[Position.BANKER]
        camera_table = self.settings.banker_second_card_after_insurance
        for step, position in enumerate(INITIAL_DEAL):
            if len(self.hands[position]) <= step // 4:
                late_banker_card = camera_table and step == len(INITIAL_DEAL) - 1
                if not late_banker_card:
                    return AwaitingCard(position, step // 4, position is not Position.BANKER or step < 4)
                if self._insurance_settled():
                    return AwaitingCard(position, 1, True)
                break
        if not self._insurance_settled():
            return self._open_insurance(banker[0])
        if self.phase is not Phase.DRAWING and self._settles_early():
            self._settle(early=True)
            return None
        self.phase = Phase.DRAWING
        for position in TURN_ORDER:
            if position not in self._draws:
                return self._draw_turn(position)
            if self._draws[position] and len(self.hands[position]) < 3:
                return AwaitingCard(position, 2, True)
        self._settle(early=False)
        return None

    def _insurance_settled(self) -> bool:
        banker_up = self.hands[Position.BANKER][0]
        return banker_up.rank not in INSURANCE_UP_CARDS or self._insurance_closed

    def _open_insurance(self, banker_up: Card) -> Expectation:
        if not self._insurance_offered:
            self._insurance_offered = True
            self.phase = Phase.INSURANCE
            self._emit(ev.InsuranceOffered(banker_up))
        eligible = tuple(dict.fromkeys(w.player for w in self.wagers if w.player not in self._insurance))
        return AwaitingInsurance(eligible)

    def _settles_early(self) -> bool:
        banker_pok = classify(self.hands[Position.BANKER]).is_pok
        return banker_pok or all(classify(self.hands[seat]).is_pok for seat in SEATS)

    def _draw_turn(self, position: Position) -> Expectation | None:
        """Decide automatically when the rules allow; otherwise open the seat's decision window."""
        hand_points = self.points(position)
        if position is Position.BANKER:
            self._decide(position, hand_points <= BANKER_DRAWS_AT_MOST, ev.DrawReason.BANKER_RULE)
        elif classify(self.hands[position]).is_pok:
            self._decide(position, False, ev.DrawReason.POK)
        elif hand_points == 0:
            self._decide(position, True, ev.DrawReason.FORCED)
        elif (decider := self.decider(position)) is None:
            reason = ev.DrawReason.NO_DECIDER if self.backer(position) is None else ev.DrawReason.OUTWEIGHED
            self._decide(position, hand_points <= self.settings.default_threshold, reason)
        else:
            default = self._thresholds.get(decider, self.settings.default_threshold)
            threshold = self._seat_thresholds.get(position, default)
            self._emit(ev.DecisionWindowOpened(position, decider, hand_points, threshold))
            return AwaitingDecision(position, decider, hand_points, threshold)
        return None

    def _settle(self, early: bool) -> None:
        banker = self.hands[Position.BANKER]
        if not self.settings.banker_second_card_after_insurance:
            self._emit(ev.CardRevealed(Position.BANKER, 1, banker[1]))
        hands = {position: classify(cards) for position, cards in self.hands.items()}
        self.result = settle_round(hands, self.wagers, self._insurance, self.settings.commission_bps, early)
        self.phase = Phase.SETTLED
        self._emit(ev.RoundSettled(self.result))
