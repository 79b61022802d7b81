"""Money of a settled round, in integer minor units; every fraction is rounded down.

Rounding down favours the player on commission (the house takes the floor of its share) and
the house on insurance winnings (1.2 × an odd amount pays the floor). Both are stated in the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from services.games.pokdeng.hands import HandValue, Outcome, compare
from services.games.pokdeng.model import SEATS, Position, Side, Wager
from services.games.pokdeng.settings import LARGEST_LOSS_MULTIPLE

INSURANCE_PAYOUT: Final = (12, 10)  # 1.2 to 1


@dataclass(frozen=True, slots=True)
class WagerResult:
    wager: Wager
    outcome: Outcome
    net: int  # change to the bettor's money, stake excluded: a loss is negative
    commission: int  # taken from the winnings, already deducted from ``net``


@dataclass(frozen=True, slots=True)
class InsuranceResult:
    player: str
    amount: int
    net: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    hands: Mapping[Position, HandValue]
    outcomes: Mapping[Position, Outcome]
    wagers: tuple[WagerResult, ...]
    insurance: tuple[InsuranceResult, ...]
    early: bool  # settled right after the deal (banker Pok or all three seats Pok)

    def player_nets(self) -> dict[str, int]:
        nets: dict[str, int] = {}
        for wager_result in self.wagers:
            player = wager_result.wager.player
            nets[player] = nets.get(player, 0) + wager_result.net
        for insurance_result in self.insurance:
            nets[insurance_result.player] = nets.get(insurance_result.player, 0) + insurance_result.net
        return nets

    def house_net(self) -> int:
        """What the house wins (positive) or pays (negative): the mirror of every player's net."""
        return -sum(self.player_nets().values())


def settle_wager(wager: Wager, banker: HandValue, seat: HandValue, commission_bps: int) -> WagerResult:
    outcome = compare(banker, seat)
    if outcome is Outcome.TIE:
        return WagerResult(wager, outcome, 0, 0)
    winner = seat if outcome is Outcome.SEAT else banker
    bettor_wins = (outcome is Outcome.SEAT) == (wager.side is Side.PLAYER)
    if not bettor_wins:
        return WagerResult(wager, outcome, -min(winner.multiplier, LARGEST_LOSS_MULTIPLE) * wager.stake, 0)
    winnings = winner.multiplier * wager.stake
    commission = winnings * commission_bps // 10_000
    return WagerResult(wager, outcome, winnings - commission, commission)


def settle_insurance(player: str, amount: int, banker_pok: bool) -> InsuranceResult:
    numerator, denominator = INSURANCE_PAYOUT
    net = amount * numerator // denominator if banker_pok else -amount
    return InsuranceResult(player, amount, net)


def settle_round(
    hands: Mapping[Position, HandValue],
    wagers: list[Wager],
    insurance: Mapping[str, int],
    commission_bps: int,
    early: bool,
) -> RoundResult:
    banker = hands[Position.BANKER]
    outcomes = {seat: compare(banker, hands[seat]) for seat in SEATS}
    return RoundResult(
        hands=dict(hands),
        outcomes=outcomes,
        wagers=tuple(settle_wager(w, banker, hands[w.seat], commission_bps) for w in wagers),
        insurance=tuple(settle_insurance(p, a, banker.is_pok) for p, a in insurance.items()),
        early=early,
    )
