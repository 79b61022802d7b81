"""Locking a player's wallet and escrow, with their account ids kept across transactions.

Ids never change, so a process keeps them; an id enters the cache only once the transaction that
found it committed (``pending`` is handed to ``remember`` after the commit), so a rolled-back
account creation is never remembered.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from services.ledger.ledger import SYSTEM, Ledger, Locked
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
        ids, locked = self.lock_players(session, ledger, [player])
        return ids[player][0], locked

    def lock_players(
        self, session: Session, ledger: Ledger, players: Iterable[str]
    ) -> tuple[dict[str, tuple[int, int]], dict[int, Locked]]:
        """``lock_player`` for many players at once (a batch of slips): each one's wallet and escrow ids, and every
        such row as read under one lock taken in id order."""
        players = sorted(set(players))
        kinds = (AccountKind.WALLET, AccountKind.HOLD)
        unknown: list[Key] = []
        for kind in kinds:
            for player in players:
                key = (ledger.currency, str(kind), player)
                account_id = self._ids.get(key)
                if account_id is None:
                    unknown.append(key)
                else:
                    ledger.know(kind, player, account_id)
        ids = {kind: ledger.accounts(kind, players) for kind in kinds}
        if unknown:
            session.info.setdefault(PENDING, {}).update({key: ids[AccountKind(key[1])][key[2]] for key in unknown})
        pairs = {player: (ids[AccountKind.WALLET][player], ids[AccountKind.HOLD][player]) for player in players}
        return pairs, ledger.lock([account for pair in pairs.values() for account in pair])

    def account(self, session: Session, ledger: Ledger, kind: AccountKind, owner: str = SYSTEM) -> int:
        """``ledger.account``, from this cache when the id is known (the studio's own accounts: every batch asks)."""
        key = (ledger.currency, str(kind), owner)
        account_id = self._ids.get(key)
        if account_id is not None:
            ledger.know(kind, owner, account_id)
            return account_id
        account_id = ledger.account(kind, owner)
        session.info.setdefault(PENDING, {})[key] = account_id
        return account_id

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
