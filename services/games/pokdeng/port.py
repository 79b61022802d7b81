"""Pok Deng on the game port: the live banker game as the table core drives it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.cards import Card
from services.games.base import DEALER, Audience, CardWanted, Expecting, Game, Payout, Window
from services.games.pokdeng import events as ev
from services.games.pokdeng.engine import (
    AwaitingBets,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    PokDengRound,
)
from services.games.pokdeng.errors import IllegalActionError
from services.games.pokdeng.settings import TableSettings
from services.games.pokdeng.transcript import result_to_dict
from services.games.pokdeng.views import dealer_view, public_view

INSURANCE = "insurance:"  # stake id prefix of a player's insurance in a round
MOST_CARDS = 12  # four hands of three


class PokDeng(Game[PokDengRound, ev.Command]):
    name = "pokdeng"
    house_banked = True

    def settings(self, raw: Mapping[str, Any]) -> TableSettings:
        return TableSettings.from_mapping(raw)

    def settings_dict(self, settings: TableSettings) -> dict[str, Any]:
        return settings.to_dict()

    def most_cards(self, settings: TableSettings) -> int:
        return MOST_CARDS

    def new_round(self, settings: TableSettings) -> PokDengRound:
        return PokDengRound(settings)

    def replay(self, commands: Any, settings: TableSettings) -> PokDengRound:
        return PokDengRound.replay(commands, settings)

    def apply(self, round_: PokDengRound, command: ev.Command) -> list[Any]:
        return list(round_.apply(command))

    def verify(self, round_: PokDengRound, command: ev.Command) -> None:
        round_.verify(command)

    def commands(self, round_: PokDengRound) -> Sequence[ev.Command]:
        return round_.commands

    def events(self, round_: PokDengRound) -> Sequence[Any]:
        return round_.events

    def command_to_dict(self, command: ev.Command) -> dict[str, Any]:
        return ev.command_to_dict(command)

    def command_from_dict(self, data: Mapping[str, Any]) -> ev.Command:
        return ev.command_from_dict(data)

    def deal(self, card: Card) -> ev.Command:
        return ev.DealCard(card)

    def dealt(self, command: ev.Command) -> Card | None:
        return command.card if isinstance(command, ev.DealCard) else None

    def timeout(self, round_: PokDengRound) -> ev.Command:
        expecting = round_.expecting
        if isinstance(expecting, AwaitingInsurance):
            return ev.CloseInsurance()
        if isinstance(expecting, AwaitingDecision):
            return ev.DecisionTimeout(expecting.seat)
        if isinstance(expecting, AwaitingBets):
            return ev.CloseBetting({})
        raise IllegalActionError(f"no window is open: {round_.state()}")

    def void(self, reason: str) -> ev.Command:
        return ev.VoidRound(reason)

    def expecting(self, round_: PokDengRound) -> Expecting:
        settings = round_.settings
        match round_.expecting:
            case AwaitingBets():
                return Window("betting", settings.betting_window_ms, text="bets")
            case AwaitingCard() as card:
                return CardWanted(str(card.position), card.index, card.face_up, card.describe())
            case AwaitingInsurance():
                return Window("insurance", settings.insurance_window_ms, text="insurance purchases")
            case AwaitingDecision(seat=seat):
                text = f"a draw/stand decision on seat {seat}"
                return Window("decision", settings.decision_window_ms, str(seat), text)
        return None

    def phase(self, round_: PokDengRound) -> str:
        return str(round_.phase)

    def cards(self, round_: PokDengRound) -> list[Card]:
        return round_.cards

    def positions(self, round_: PokDengRound) -> list[str | None]:
        return [e.position for e in round_.events if isinstance(e, ev.CardDealt)]

    def hidden(self, round_: PokDengRound, audience: Audience) -> frozenset[Card]:
        """The banker's face-down card until its reveal, from everyone (the dealer only knows it was received)."""
        return frozenset(dealt.card for dealt, visible in round_.seen() if not visible)

    def view(self, round_: PokDengRound, audience: Audience) -> dict[str, Any]:
        view = public_view(round_)
        return dealer_view(view) if audience == DEALER else view

    def views(self, round_: PokDengRound) -> dict[str, dict[str, Any]]:
        public = public_view(round_)
        return {"public": public, "dealer": dealer_view(public)}

    def payouts(self, round_: PokDengRound) -> list[Payout] | None:
        result = round_.result
        if result is None:
            return None
        payouts = [Payout(i.wager.player, i.wager.wager_id, i.net, i.commission) for i in result.wagers]
        return payouts + [Payout(i.player, INSURANCE + i.player, i.net) for i in result.insurance]

    def nets(self, round_: PokDengRound) -> dict[str, int]:
        return round_.result.player_nets() if round_.result is not None else {}

    def result(self, round_: PokDengRound) -> dict[str, Any] | None:
        result = round_.result
        return None if result is None else result_to_dict(result) | {"early": result.early}

    def flow(self, round_: PokDengRound) -> list[Any]:
        """Insurance, who drew and why, early settlement: what a recalculation may not change."""
        steps: list[Any] = []
        for event in round_.events:
            if isinstance(event, ev.InsuranceOffered):
                steps.append(("insurance", ""))
            elif isinstance(event, ev.DrawDecided):
                steps.append((str(event.position), f"{event.draw}:{event.reason}"))
            elif isinstance(event, ev.RoundSettled):
                steps.append(("settled", str(event.result.early)))
        return steps


POKDENG = PokDeng()
