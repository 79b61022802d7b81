"""Taking a stake (a bet slip, insurance) on a table of either wallet.

On an ``internal`` table the stake is one transaction: claim the idempotency key, hold the money, write the wager.
On an ``operator`` table (``services.wallet.seamless``) the operator's wallet is asked to debit it first and the
stake is placed only once it has accepted, with the debit's mirror in the placing transaction; a stake refused after
its debit is rolled back at once, and one that may have failed for another reason (the database) is rolled back by
the wallet sender when its round ends, if it was never placed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.games.base import GameError
from services.ledger import idempotency
from services.ledger.errors import LedgerError
from services.ledger.ledger import Ledger, Locked
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.records import table_of_round
from services.wallet.errors import WalletError
from services.wallet.models import WalletCallRecord
from services.wallet.seamless import OPERATOR, mirror_stake, rollback_of, stake_transaction

log = logging.getLogger("studio.wallet")
REFUSALS = (RoundError, GameError, LedgerError, WalletError)  # raised before the commit: nothing was placed


class WalletNotConfiguredError(RoundError):
    """A round stakes through the operator's wallet and this process has none configured."""

    code = "wallet_unavailable"


class StakeChangedError(RoundError):
    """The stake changed, or its debit was rolled back, while the operator's wallet answered."""

    code = "stake_changed"


@dataclass(frozen=True)
class Debit:
    """The operator's accepted debit of a stake, to be mirrored where the stake is placed."""

    transaction: str
    amount: int
    balance: int | None  # the player's balance at the operator after it

    def mirror(
        self, session: Session, ledger: Ledger, player: str, round_id: str, wallet: int, locked: dict[int, Locked],
        holding: int,
    ) -> dict[int, Locked]:  # fmt: skip
        if holding != self.amount:
            raise StakeChangedError(
                f"the stake changed while the operator's wallet answered: {self.amount} was debited, it now holds "
                f"{holding}; the debit is rolled back, send the request again with a new idempotency key"
            )
        return mirror_stake(session, ledger, player, round_id, self.transaction, self.amount, wallet, locked)


Place = Callable[[Session, "Debit | None"], dict[str, Any]]


def staked(
    service: RoundCore,
    player: str,
    round_id: str,
    key: str,
    request: dict[str, Any],
    amount: Callable[[Session], int],
    place: Place,
    reason: str,
) -> dict[str, Any]:
    """``place(session, None)`` in one transaction on an internal table; on an operator's-wallet table, ``amount``
    (read without writing) debited at the operator first, then ``place(session, debit)``."""
    table = service.table_info(table_of_round(round_id))
    if table.wallet != OPERATOR:
        return service.run(lambda session: place(session, None))
    wallet = service.wallet
    if wallet is None:
        raise WalletNotConfiguredError(
            f"round {round_id} stakes through the operator's wallet, and this process has none configured "
            "(STUDIO_WALLET_URL, STUDIO_WALLET_SECRET)"
        )
    transaction = stake_transaction(round_id, player, key)
    with service.sessions() as session:
        stored = idempotency.stored(session, key, player, request)
        if stored is not None:
            return stored
        if session.scalar(select(WalletCallRecord.request_id).where(
            WalletCallRecord.transaction_id == rollback_of(transaction)
        )) is not None:  # fmt: skip
            raise StakeChangedError(
                f"the debit of this request ({transaction}) was rolled back; send it again with a new idempotency key"
            )
        total = amount(session)
    answer = wallet.debit(player, total, table.currency, round_id, transaction, reason)
    debit = Debit(transaction, total, answer.balance)
    try:
        return service.run(lambda session: place(session, debit))
    except REFUSALS as refusal:  # refused inside the transaction: nothing was placed, the debit goes back
        try:
            wallet.rollback(transaction, f"the stake was not placed: {refusal}")
        except WalletError as error:
            log.warning("rollback of %s: %s (the sender sends it again)", transaction, error)
        raise
