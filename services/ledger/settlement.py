"""Posting a round's results against its holds, in one batch."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from services.ledger.errors import HoldStateError
from services.ledger.ledger import Ledger, Movement
from services.ledger.models import AccountKind, HoldStatus


@dataclass(frozen=True, slots=True)
class StakeResult:
    """The outcome of one held stake (a wager, or a player's insurance) as money."""

    player: str
    wager_id: str
    net: int  # change to the player's money, stake excluded; commission already deducted
    commission: int = 0
    beyond_hold: bool = False  # a loss past the hold is taken from the wallet, the rest recorded as debt


def settle_round(ledger: Ledger, round_id: str, results: Iterable[StakeResult]) -> int:
    """Claim every pending hold of the round and pay each stake's result; returns the hold count.

    A loss goes to the house straight from the hold and the rest of the hold back to the wallet;
    a win releases the hold and the house pays the winnings, less commission. One batch, so the
    round settles in the caller's one transaction or not at all.
    """
    claimed = ledger.claim_holds(round_id, HoldStatus.POSTED)
    held: dict[str, list[tuple[int, int]]] = defaultdict(list)  # stake -> (hold id, amount) of each of its holds
    for hold_id, _player, wager_id, amount in claimed:
        held[wager_id].append((hold_id, amount))
    results = list(results)
    players = [result.player for result in results]
    accounts = _Accounts(
        ledger.accounts(AccountKind.WALLET, players),
        ledger.accounts(AccountKind.HOLD, players),
        ledger.account(AccountKind.HOUSE),
        ledger.account(AccountKind.COMMISSION),
    )
    movements: list[Movement] = []
    beyond: list[tuple[StakeResult, int]] = []  # (result, what its loss takes past its hold)
    for result in results:
        if result.wager_id not in held:
            raise HoldStateError(f"round {round_id}: stake {result.wager_id} has no pending hold to settle")
        holds = held.pop(result.wager_id)
        total = sum(amount for _hold_id, amount in holds)
        if result.beyond_hold and -result.net > total:
            beyond.append((result, -result.net - total))
            result = replace(result, net=-total)
        movements += _stake_movements(accounts, round_id, result, holds)
    if held:
        raise HoldStateError(f"round {round_id}: no result for held stake(s) {', '.join(sorted(held))}")
    ledger.post_many(movements)
    for result, excess in beyond:  # after the batch: what the round paid or released is in the wallet first
        ledger.take(result.player, excess, "loss", round_id, result.wager_id, memo="loss beyond the hold")
    for player in ledger.debtors(result.player for result in results if result.net > 0):
        ledger.recover_debt(player)
    return len(claimed)


@dataclass(frozen=True, slots=True)
class _Accounts:
    wallets: dict[str, int]
    escrows: dict[str, int]
    house: int
    commission: int


def _stake_movements(
    accounts: _Accounts, round_id: str, result: StakeResult, holds: list[tuple[int, int]]
) -> list[Movement]:
    """A stake's result against its holds (one per slip that placed or raised it), each hold resolved by
    movements that name it: a loss is taken from the holds in order, the rest of each released; a win
    releases every hold and is paid (less commission) under the first."""
    wallet, escrow, house = accounts.wallets[result.player], accounts.escrows[result.player], accounts.house

    def move(debit: int, credit: int, amount: int, kind: str, hold_id: int) -> list[Movement]:
        return [Movement(debit, credit, amount, kind, round_id, result.wager_id, hold_id)] if amount else []

    movements: list[Movement] = []
    if result.net < 0:
        loss = -result.net
        total = sum(amount for _hold_id, amount in holds)
        if loss > total:
            raise HoldStateError(f"round {round_id}: stake {result.wager_id} loses {loss}, more than its hold {total}")
        for hold_id, amount in holds:
            taken = min(loss, amount)
            loss -= taken
            movements += move(escrow, house, taken, "loss", hold_id) + move(
                escrow, wallet, amount - taken, "release", hold_id
            )
        return movements
    for hold_id, amount in holds:
        movements += move(escrow, wallet, amount, "release", hold_id)
    first = holds[0][0]
    return (
        movements
        + move(house, wallet, result.net + result.commission, "win", first)
        + move(wallet, accounts.commission, result.commission, "commission", first)
    )
