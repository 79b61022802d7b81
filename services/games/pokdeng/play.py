"""A Pok Deng round played out to its end without a table: benchmarks and simulations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from services.cards import Card
from services.games.pokdeng.engine import (
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    PokDengRound,
    describe,
)
from services.games.pokdeng.errors import IllegalActionError
from services.games.pokdeng.settlement import RoundResult


def play_out(
    round_: PokDengRound, cards: Iterable[Card], decide: Callable[[AwaitingDecision], bool | None]
) -> RoundResult:
    """Deal ``cards`` in order until the round settles (benchmarks, simulations): insurance closes with what was
    bought, and each decision is ``decide(window)`` — None lets the window time out (the threshold decides)."""
    shoe = iter(cards)
    while round_.result is None:
        match round_.expecting:
            case AwaitingCard():
                round_.deal(next(shoe))
            case AwaitingInsurance():
                round_.close_insurance()
            case AwaitingDecision() as window:
                choice = decide(window)
                if choice is None:
                    round_.decision_timeout(window.seat)
                else:
                    round_.decide(window.seat, choice)
            case other:
                raise IllegalActionError(f"the round cannot be played out: it waits for {describe(other)}")
    return round_.result
