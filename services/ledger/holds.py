"""Holds resolved exactly once: each by its own ``hold_resolutions`` row, the money moved summed per player."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from services.db.sql import PerDialect, insert_ignoring_conflicts_in
from services.ledger.errors import HoldStateError
from services.ledger.ledger import Ledger, Movement
from services.ledger.models import AccountKind, Hold, HoldResolution, HoldStatus, utcnow

# Each resolved hold with its line (filter and order on ``Hold``'s columns): what a stake's net is summed from.
RESOLVED = select(
    Hold.id.label("hold_id"), Hold.round_id, Hold.wager_id, Hold.player, Hold.amount,
    HoldResolution.status, HoldResolution.loss, HoldResolution.win, HoldResolution.commission,
).join(HoldResolution, HoldResolution.hold_id == Hold.id)  # fmt: skip

INSERT_RESOLUTIONS = PerDialect(
    lambda dialect: insert_ignoring_conflicts_in(dialect, HoldResolution).returning(HoldResolution.hold_id)
)


@dataclass(frozen=True, slots=True)
class PendingHold:
    """A hold no resolution names yet."""

    id: int
    player: str
    wager_id: str
    amount: int


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one pending hold ends: ``loss`` of it goes to the house and the rest back to the wallet; ``win`` (gross)
    is paid by the house and ``commission`` taken from it (a stake's win goes under its first hold)."""

    hold: PendingHold
    status: HoldStatus = HoldStatus.POSTED
    loss: int = 0
    win: int = 0
    commission: int = 0


def pending_holds(ledger: Ledger, round_id: str, wager_id: str | None = None) -> list[PendingHold]:
    """The round's holds (or only ``wager_id``'s) that no resolution names yet, in the order they were placed."""
    resolved = select(HoldResolution.hold_id).where(HoldResolution.hold_id == Hold.id).exists()
    which = [Hold.round_id == round_id, Hold.currency == ledger.currency, ~resolved]
    if wager_id is not None:
        which.append(Hold.wager_id == wager_id)
    rows = ledger.session.execute(
        select(Hold.id, Hold.player, Hold.wager_id, Hold.amount).where(*which).order_by(Hold.id)
    )
    return [PendingHold(int(hold_id), player, wager, int(amount)) for hold_id, player, wager, amount in rows]


def resolve(ledger: Ledger, round_id: str, lines: Sequence[Resolution], wager_id: str | None = None) -> None:
    """Resolve each hold as its line says, all or none: one ``hold_resolutions`` row per hold, and the money
    they move summed per player and kind (release, loss, win, commission), transfers stamped with
    ``wager_id`` when they are one stake's.

    A hold is resolved exactly once: a line for a hold some other transaction resolved first is refused
    (``HoldStateError``; the caller's transaction rolls back).
    """
    if not lines:
        return
    beyond = [line.hold.id for line in lines if not 0 <= line.loss <= line.hold.amount]
    if beyond:
        raise HoldStateError(f"round {round_id}: hold(s) {', '.join(map(str, beyond))} lose more than they hold")
    now = utcnow()
    rows = [
        {"hold_id": line.hold.id, "status": str(line.status), "loss": line.loss, "win": line.win,
         "commission": line.commission, "created_at": now}
        for line in lines
    ]  # fmt: skip
    connection = ledger.session.connection()
    resolved = {int(hold_id) for hold_id in connection.scalars(INSERT_RESOLUTIONS(connection), rows)}
    if len(resolved) != len(lines):
        twice = sorted(line.hold.id for line in lines if line.hold.id not in resolved)
        raise HoldStateError(f"round {round_id}: hold(s) {', '.join(map(str, twice))} already resolved")
    ledger.post_many(_summed(ledger, round_id, lines, wager_id))


def _summed(ledger: Ledger, round_id: str, lines: Sequence[Resolution], wager_id: str | None) -> list[Movement]:
    """The movements of the lines, one per player and kind."""
    sums: dict[str, list[int]] = {}  # player -> [released, lost, won, commission]
    for line in lines:
        total = sums.setdefault(line.hold.player, [0, 0, 0, 0])
        total[0] += line.hold.amount - line.loss
        total[1] += line.loss
        total[2] += line.win
        total[3] += line.commission
    players = sorted(sums)
    wallets, escrows = ledger.accounts(AccountKind.WALLET, players), ledger.accounts(AccountKind.HOLD, players)
    house = ledger.account(AccountKind.HOUSE)
    commission_account = ledger.account(AccountKind.COMMISSION) if any(s[3] for s in sums.values()) else house
    movements: list[Movement] = []
    for player in players:
        released, lost, won, commission = sums[player]
        wallet, escrow = wallets[player], escrows[player]
        for debit, credit, amount, kind in (
            (escrow, wallet, released, "release"),
            (escrow, house, lost, "loss"),
            (house, wallet, won, "win"),
            (wallet, commission_account, commission, "commission"),
        ):
            if amount:
                movements.append(Movement(debit, credit, amount, kind, round_id, wager_id))
    return movements


def void_holds(ledger: Ledger, round_id: str, wager_id: str | None = None) -> int:
    """Return every pending hold of the round (or only ``wager_id``'s: a seat given up before the deal) to
    its wallet; returns how many were voided."""
    pending = pending_holds(ledger, round_id, wager_id)
    resolve(ledger, round_id, [Resolution(hold, HoldStatus.VOIDED) for hold in pending], wager_id)
    return len(pending)
