"""The outbox's background work, run by the API process of a studio with an operator's wallet (``studio api``):

- every call still ``pending`` is sent again (one attempt each per pass, oldest first): a payout or rollback that
  the round's transaction recorded, or a call whose answer was lost;
- an accepted take-back (``collect``) is mirrored: its money enters the player's studio wallet and pays the debt the
  correction recorded;
- an accepted stake debit whose stake was never placed (the request failed after the debit, the process died, or
  the client gave up on an unknown outcome) is rolled back once its round has ended: no stake can be placed then.
"""

from __future__ import annotations

import functools
import logging
import threading

from sqlalchemy import column, exists, select, table
from sqlalchemy.orm import Session, aliased

from services.db.unit_of_work import run_transaction
from services.games.base import FINISHED
from services.ledger.ledger import Ledger, Movement
from services.ledger.models import AccountKind, utcnow
from services.wallet.errors import WalletError
from services.wallet.models import COLLECT, OK, ROLLBACK, STAKE, WalletCallRecord
from services.wallet.outbox import SeamlessWallet
from services.wallet.seamless import MIRROR_IN

# the rounds as the sender reads them (their model is the round service's, a package above this one)
ROUNDS = table("rounds", column("id"), column("phase"))

log = logging.getLogger("studio.wallet")


class WalletSender:
    def __init__(self, wallet: SeamlessWallet, interval_s: float = 0.5) -> None:
        self.wallet = wallet
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> dict[str, int]:
        """One pass; what it did."""
        left = self.wallet.drain()
        return {"pending": left, "collected": self.mirror_collections(), "rolled_back": self.roll_back_orphans()}

    def mirror_collections(self) -> int:
        with self.wallet.sessions() as session:
            accepted = session.scalars(
                select(WalletCallRecord.transaction_id).where(
                    WalletCallRecord.purpose == COLLECT,
                    WalletCallRecord.status == OK,
                    WalletCallRecord.mirrored_at.is_(None),
                )
            ).all()
        for transaction in accepted:
            run_transaction(self.wallet.sessions, functools.partial(_collected, transaction=transaction))
        return len(accepted)

    def roll_back_orphans(self) -> int:
        rollback = aliased(WalletCallRecord)
        with self.wallet.sessions() as session:
            orphans = session.scalars(
                select(WalletCallRecord.transaction_id)
                .join(ROUNDS, ROUNDS.c.id == WalletCallRecord.round_id)
                .where(
                    WalletCallRecord.purpose == STAKE,
                    WalletCallRecord.status == OK,
                    WalletCallRecord.mirrored_at.is_(None),
                    ROUNDS.c.phase.in_(FINISHED),
                    ~exists().where(
                        rollback.purpose == ROLLBACK,
                        rollback.original_transaction_id == WalletCallRecord.transaction_id,
                    ),
                )
            ).all()
        for transaction in orphans:
            try:
                self.wallet.rollback(transaction, "the stake was never placed")
            except WalletError as error:  # still unknown: the next pass sends it again
                log.warning("rollback of %s: %s", transaction, error)
        return len(orphans)

    # ---- in the background ----------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="wallet-sender", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.step()
            except Exception:  # the sender must outlive a failed pass (a database outage): the next pass retries
                log.exception("wallet sender pass failed")


def _collected(session: Session, transaction: str) -> None:
    row = session.scalar(
        select(WalletCallRecord).where(WalletCallRecord.transaction_id == transaction).with_for_update()
    )
    if row is None or row.mirrored_at is not None:
        return
    ledger = Ledger(session, row.currency)
    cash, wallet = ledger.account(AccountKind.CASH), ledger.account(AccountKind.WALLET, row.player)
    ledger.post(Movement(cash, wallet, row.amount, MIRROR_IN, row.round_id, memo=transaction))
    ledger.recover_debt(row.player)
    row.mirrored_at = utcnow()
