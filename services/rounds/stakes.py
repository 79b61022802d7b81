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
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.db.unit_of_work import run_transaction
from services.games.base import GameError
from services.ledger import idempotency
from services.ledger.errors import LedgerError
from services.ledger.ledger import Ledger, Locked
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.records import table_of_round
from services.wallet.errors import WalletError
from services.wallet.models import PENDING, STAKE, WalletCallRecord
from services.wallet.outbox import OutcomeUnknownError
from services.wallet.protocol import WalletAnswer
from services.wallet.seamless import OPERATOR, mirror_stake, new_call, rollback_of, stake_transaction

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


@dataclass(frozen=True)
class Debited:
    """The operator's accepted debit of a stake, with what its outbox row still needs: the answer (and the attempts
    it took: 0 when recorded before), then the mirror, in the transaction that places the stake."""

    debit: Debit
    request_id: str
    answer: WalletAnswer
    tries: int


# Where a debited stake is placed instead of a transaction of its own: the API's slip writer, with the stake's own
# transaction to fall back on (``alone``). Either way: the stake's answer, or the refusal raised.
Together = Callable[[Debited, Callable[[], dict[str, Any]]], dict[str, Any]]


def staked(
    service: RoundCore,
    player: str,
    round_id: str,
    key: str,
    request: dict[str, Any],
    amount: Callable[[Session], int],
    place: Place,
    reason: str,
    together: Together | None = None,
) -> dict[str, Any]:
    """``place(session, None)`` in one transaction on an internal table; on an operator's-wallet table, ``amount``
    priced and its debit recorded, sent to the operator, then ``place(session, debit)`` with the answer recorded —
    in a transaction of its own, or handed to ``together`` (placed with other slips)."""
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

    def price(session: Session) -> tuple[dict[str, Any] | None, WalletCallRecord | None]:
        """The first step: a finished request's answer; or the slip priced and its debit recorded, to be sent."""
        stored = idempotency.stored(session, key, player, request)
        if stored is not None:
            return stored, None
        if session.scalar(select(WalletCallRecord.request_id).where(
            WalletCallRecord.transaction_id == rollback_of(transaction)
        )) is not None:  # fmt: skip
            raise StakeChangedError(
                f"the debit of this request ({transaction}) was rolled back; send it again with a new idempotency key"
            )
        call = new_call("debit", player, amount(session), table.currency, round_id, transaction, reason)
        return None, wallet.recorded(session, call, STAKE)

    try:
        stored, record = service.run(price)
    except IntegrityError:  # the same request recorded meanwhile (a retry racing itself): its row is found now
        stored, record = service.run(price)
    if stored is not None or record is None:
        assert stored is not None
        return stored
    tries = 0
    answer: WalletAnswer

    def kept() -> WalletCallRecord:
        """The operator's answer recorded in a transaction of its own (when it is not kept with the placing)."""
        return run_transaction(service.sessions, lambda s: wallet.answered(s, record.request_id, answer, tries))

    if record.status == PENDING:
        sent, tries, error = wallet.call(record)
        if sent is None:
            wallet.attempted(record.request_id, tries, error)
            raise OutcomeUnknownError(
                f"the operator's wallet has not answered the debit {transaction} ({error}); it is asked again "
                "until it does"
            )
        answer = sent
        if answer.status != "ok":  # refused: recorded, and said
            wallet.final(kept())
    else:
        answer = wallet.final(record)  # a debit answered before (a retry): its answer, or its refusal
    debit = Debit(transaction, record.amount, answer.balance)

    def placed(session: Session) -> dict[str, Any]:
        """The second step: the operator's answer recorded and the stake placed with its mirror, together."""
        if tries:
            wallet.answered(session, record.request_id, answer, tries)
        return place(session, debit)

    try:
        if together is not None:
            return together(Debited(debit, record.request_id, answer, tries), lambda: service.run(placed))
        return service.run(placed)
    except REFUSALS as refusal:  # refused inside the transaction: nothing was placed, the debit goes back
        if tries:  # the answer was not kept (only a placed stake's is): kept now, so the rollback needs not ask again
            kept()
        try:  # (not if another request with the same key placed the stake with this debit meanwhile)
            wallet.rollback(transaction, f"the stake was not placed: {refusal}")
        except WalletError as error:
            log.warning("rollback of %s: %s (the sender sends it again)", transaction, error)
        raise
    except Exception:  # not placed for another reason (the database): the answer kept if it can be, the debit left
        if tries:  # to the sender, which rolls it back when the round ends if it was never placed
            try:
                kept()
            except Exception as error:  # the database still away: the sender asks the operator again
                log.warning("the answer to %s not kept: %s", transaction, " ".join(str(error).split())[:200])
        raise
