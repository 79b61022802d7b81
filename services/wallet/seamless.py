"""A table whose players' money the operator keeps (``wallet: operator``): the studio's side of each movement.

The operator's wallet is the book of record; the studio's ledger mirrors each movement it makes there, so the round
code is the same on both kinds of table and a seamless player's studio wallet is zero between transactions:

- **a stake** (a bet slip, insurance): the operator is asked to ``debit`` it first, under a transaction id made from
  the request's idempotency key (a retried request never debits twice). Only once it accepts is the stake placed, in
  one transaction with its mirror (``cash → wallet``, kind ``operator_debit``); the hold then takes it from the wallet
  as on any table. A stake that cannot be placed after its debit is rolled back.
- **a payout** (settlement; a void or a correction that gives back): in the transaction of the ledger's own
  movements, what the round left in the player's studio wallet goes back (``wallet → cash``, ``operator_credit``) and
  a ``credit`` is recorded in the outbox; the sender (``services.wallet.sender``) sends it after the commit. A
  settlement credits every player of the round once, a loser with 0 (it closes the round at the operator).
- **a void before settlement**: each debit of the round is rolled back (``rollback`` naming it), its mirror reversed.
- **a take-back** (a correction or a void that takes winnings back): the ledger records the debt as on any table,
  and a ``debit`` is recorded; once the operator accepts it, its mirror pays the debt (refused: the debt stays).

Every mirror transfer carries the call's transaction id as its memo: ``services.wallet.reconcile`` pairs them.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.ledger.ledger import Ledger, Locked, Movement
from services.ledger.models import AccountKind, utcnow
from services.wallet.errors import WalletError
from services.wallet.models import COLLECT, PAYOUT, ROLLBACK, STAKE, WalletCallRecord
from services.wallet.protocol import WalletCall

INTERNAL: Final = "internal"
OPERATOR: Final = "operator"
WALLETS: Final = (INTERNAL, OPERATOR)
MIRROR_IN: Final = "operator_debit"  # cash → wallet: the operator took it from the player's account there
MIRROR_OUT: Final = "operator_credit"  # wallet → cash: the studio handed it back to the operator
MIRRORS: Final = (MIRROR_IN, MIRROR_OUT)
MAX_ID: Final = 128


def transaction_id(*parts: str) -> str:
    """``a:b:c``, or, when that would be longer than the protocol allows, its head and a digest of the whole."""
    whole = ":".join(parts)
    if len(whole) <= MAX_ID:
        return whole
    return f"{whole[: MAX_ID - 33]}~{hashlib.sha256(whole.encode()).hexdigest()[:32]}"


def stake_transaction(round_id: str, player: str, key: str) -> str:
    """The debit of a staking request: one per player and idempotency key, so a retry never debits twice."""
    return transaction_id(STAKE, round_id, hashlib.sha256(f"{player}\0{key}".encode()).hexdigest()[:24])


def new_call(
    kind: Literal["debit", "credit", "rollback"],
    player: str,
    amount: int,
    currency: str,
    round_id: str,
    transaction: str,
    reason: str,
    original: str | None = None,
) -> WalletCall:
    return WalletCall(
        request_id=uuid.uuid4().hex, transaction_id=transaction, kind=kind, player=player, amount=amount,
        currency=currency, round_id=round_id, original_transaction_id=original, reason=reason[:200],
        sent_at=datetime.now(UTC).isoformat(),
    )  # fmt: skip


def record_of(call: WalletCall, purpose: str, mirrored: bool = False) -> WalletCallRecord:
    """The outbox row of a call not yet sent (the caller adds it to its transaction)."""
    return WalletCallRecord(**row_of(call, purpose, mirrored))


def row_of(call: WalletCall, purpose: str, mirrored: bool = False) -> dict[str, Any]:
    """``record_of``'s columns (for an insert of many rows at once)."""
    now = utcnow()
    return {
        "request_id": call.request_id, "transaction_id": call.transaction_id, "kind": call.kind,
        "player": call.player, "amount": call.amount, "currency": call.currency, "round_id": call.round_id,
        "original_transaction_id": call.original_transaction_id, "body": call.body().decode(), "status": "pending",
        "attempts": 0, "last_error": "", "created_at": now, "purpose": purpose,
        "mirrored_at": now if mirrored else None, "answer": None, "answered_at": None,
    }  # fmt: skip


# ---- stakes --------------------------------------------------------------------------------------


def mirror_stake(
    session: Session, ledger: Ledger, player: str, round_id: str, transaction: str, amount: int,
    wallet: int, locked: Mapping[int, Locked],
) -> dict[int, Locked]:  # fmt: skip
    """The accepted debit into the player's studio wallet (locked by the caller), its outbox row marked mirrored;
    returns ``locked`` with the wallet's new balance, for the holds that follow."""
    row = session.scalar(
        select(WalletCallRecord).where(WalletCallRecord.transaction_id == transaction).with_for_update()
    )
    if row is None or row.status != "ok" or row.amount != amount or row.player != player:
        raise AssertionError(f"the stake {transaction} has no accepted debit of {amount} for {player}")
    refuse_if_rolled_back(session, transaction)
    cash = ledger.account(AccountKind.CASH)
    balances = ledger.post_many([Movement(cash, wallet, amount, MIRROR_IN, round_id, memo=transaction)], locked)
    row.mirrored_at = utcnow()
    before = locked[wallet]
    return {**locked, wallet: Locked(before.kind, before.owner, balances[wallet])}


class DebitRolledBackError(WalletError):
    """The stake's debit was rolled back (its request refused meanwhile): it can no longer be placed with it."""

    code = "stake_changed"


def refuse_if_rolled_back(session: Session, transaction: str) -> None:
    """Under the debit's lock (the caller's): refused if a rollback of it was recorded — a mirror and a rollback of
    one debit never both happen."""
    if is_rolled_back(session, transaction):
        raise DebitRolledBackError(rolled_back_words(transaction))


def is_rolled_back(session: Session, transaction: str) -> bool:
    """Whether a rollback of the debit ``transaction`` was recorded."""
    found = session.scalar(select(WalletCallRecord.request_id).where(
        WalletCallRecord.transaction_id == rollback_of(transaction)))  # fmt: skip
    return found is not None


def rolled_back_words(transaction: str) -> str:
    """What a request whose debit was rolled back is told (a stake can no longer be placed with it)."""
    return f"the debit of this request ({transaction}) was rolled back; send it again with a new idempotency key"


# ---- payouts, rollbacks, take-backs ------------------------------------------------------------


def pay_out(session: Session, ledger: Ledger, round_id: str, players: Iterable[str], cause: str, reason: str) -> None:
    """What each player's studio wallet holds goes back to the operator as one ``credit`` (0 included)."""
    for player in sorted(set(players)):
        amount = ledger.wallet(player)
        transaction = transaction_id(cause, round_id, player)
        if amount:
            wallet, cash = ledger.account(AccountKind.WALLET, player), ledger.account(AccountKind.CASH)
            ledger.post(Movement(wallet, cash, amount, MIRROR_OUT, round_id, memo=transaction))
        call = new_call("credit", player, amount, ledger.currency, round_id, transaction, reason)
        session.add(record_of(call, PAYOUT, mirrored=True))


def take_back(
    session: Session, ledger: Ledger, round_id: str, owed: Mapping[str, int], cause: str, reason: str
) -> None:
    """A ``debit`` of what each player now owes (the ledger recorded it as their debt); mirrored once accepted."""
    for player, amount in sorted(owed.items()):
        if amount > 0:
            call = new_call("debit", player, amount, ledger.currency, round_id, transaction_id(cause, round_id, player),
                            reason)  # fmt: skip
            session.add(record_of(call, COLLECT))


def roll_back_stakes(session: Session, ledger: Ledger, round_id: str, reason: str) -> None:
    """Each placed stake of the round (its hold already back in the studio wallet) rolled back at the operator."""
    placed = session.scalars(
        select(WalletCallRecord)
        .where(WalletCallRecord.round_id == round_id, WalletCallRecord.purpose == STAKE)
        .where(WalletCallRecord.mirrored_at.is_not(None))
        .order_by(WalletCallRecord.created_at, WalletCallRecord.transaction_id)
    ).all()
    cash = ledger.account(AccountKind.CASH)
    for debit in placed:
        transaction = rollback_of(debit.transaction_id)
        wallet = ledger.account(AccountKind.WALLET, debit.player)
        ledger.post(Movement(wallet, cash, debit.amount, MIRROR_OUT, round_id, memo=transaction))
        call = new_call("rollback", debit.player, debit.amount, ledger.currency, round_id, transaction, reason,
                        original=debit.transaction_id)  # fmt: skip
        session.add(record_of(call, ROLLBACK, mirrored=True))


def rollback_of(debit_transaction: str) -> str:
    return transaction_id(ROLLBACK, debit_transaction)
