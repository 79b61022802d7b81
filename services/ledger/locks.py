"""Locking a player's wallet and escrow, with their account ids kept across transactions.

Ids never change, so a process keeps them; an id enters the cache only once the transaction that
found it committed (``pending`` is handed to ``remember`` after the commit), so a rolled-back
account creation is never remembered.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from services.ledger.ledger import Ledger, Locked
from services.ledger.models import AccountKind

ACCOUNT_CACHE = 200_000  # (currency, kind, owner) account ids kept; cleared when full
PENDING = "account_ids"  # session.info key: ids found in the transaction, remembered after it commits

Key = tuple[str, str, str]  # (currency, kind, owner)


class AccountIds:
    def __init__(self, size: int = ACCOUNT_CACHE) -> None:
        self._ids: dict[Key, int] = {}
        self._size = size

    def lock_player(self, session: Session, ledger: Ledger, player: str) -> tuple[int, dict[int, Locked]]:
        """Lock the player's wallet and escrow: the wallet id and both rows as read under the lock.

        Serializes one player's own requests; the balances read here are the ones holds are checked against.
        """
        kinds = (AccountKind.WALLET, AccountKind.HOLD)
        keys = [(ledger.currency, str(kind), player) for kind in kinds]
        known = [self._ids.get(key) for key in keys]
        for kind, account_id in zip(kinds, known, strict=True):
            if account_id is not None:
                ledger.know(kind, player, account_id)
        ids = [ledger.account(kind, player) for kind in kinds]
        if None in known:
            session.info.setdefault(PENDING, {}).update(zip(keys, ids, strict=True))
        return ids[0], ledger.lock(ids)

    @staticmethod
    def pending(session: Session) -> dict[Key, int]:
        """The ids this transaction found (call before the commit; pass them to ``remember`` after it)."""
        found: dict[Key, int] = session.info.pop(PENDING, {})
        return found

    def remember(self, found: dict[Key, int]) -> None:
        if not found:
            return
        if len(self._ids) + len(found) > self._size:
            self._ids.clear()
        self._ids.update(found)
