"""The studio's mirror against the operator's answers (``studio wallet reconcile``).

Each call to the operator's wallet is paired with the mirror transfers that carry its transaction id: what the
studio booked must be what the operator's answer says happened there. Per call, what the mirror should hold:

- a stake's debit: +amount once placed; nothing while it is not (it is then rolled back, or its round still runs);
- a payout (credit) and a rollback of a placed stake: −amount, booked with the call; the operator must accept it;
- a take-back's debit: +amount once the operator accepted it (it pays the recorded debt); nothing if refused.

Verdicts: ``matched``; ``pending`` (no final answer yet, or an accepted answer not yet mirrored); ``refused`` (a
refusal the studio booked nothing for: a stake not taken, a debt that stays); ``mismatch`` (anything else,
including a mirror transfer no call explains).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.ledger.models import Transfer
from services.wallet.models import COLLECT, OK, PAYOUT, PENDING, REFUSED, ROLLBACK, STAKE, WalletCallRecord
from services.wallet.seamless import MIRROR_IN, MIRRORS

MATCHED, WAITING, REFUSAL, MISMATCH = "matched", "pending", "refused", "mismatch"


@dataclass(frozen=True)
class Line:
    transaction_id: str
    purpose: str
    kind: str
    player: str
    round_id: str
    amount: int
    operator: str  # the operator's answer: ok, refused, pending
    expected: int  # what the mirror should hold (+ into the studio's books, − out of them)
    mirrored: int  # what it holds
    verdict: str
    note: str = ""


@dataclass(frozen=True)
class Report:
    lines: list[Line]

    @property
    def counts(self) -> dict[str, int]:
        found = {MATCHED: 0, WAITING: 0, REFUSAL: 0, MISMATCH: 0}
        for line in self.lines:
            found[line.verdict] += 1
        return found

    @property
    def clean(self) -> bool:
        return not any(line.verdict == MISMATCH for line in self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "clean": self.clean, "lines": [asdict(line) for line in self.lines]}


def reconcile(session: Session, round_id: str | None = None, since: datetime | None = None) -> Report:
    """Every call of ``round_id``, or made since ``since``, against its mirror."""
    calls = select(WalletCallRecord).order_by(WalletCallRecord.created_at, WalletCallRecord.transaction_id)
    transfers = select(Transfer.memo, Transfer.kind, Transfer.amount, Transfer.round_id).where(
        Transfer.kind.in_(MIRRORS)
    )
    if round_id is not None:
        calls = calls.where(WalletCallRecord.round_id == round_id)
        transfers = transfers.where(Transfer.round_id == round_id)
    if since is not None:
        calls = calls.where(WalletCallRecord.created_at >= since)
        transfers = transfers.where(Transfer.created_at >= since)
    records = session.scalars(calls).all()
    mirror: dict[str, int] = defaultdict(int)
    where: dict[str, str] = {}
    for memo, kind, amount, round_ in session.execute(transfers):
        mirror[memo] += amount if kind == MIRROR_IN else -amount
        where[memo] = round_ or ""
    placed = {r.transaction_id for r in records if r.purpose == STAKE and r.mirrored_at is not None}
    placed |= _placed_before(session, [r.original_transaction_id for r in records if r.purpose == ROLLBACK], placed)
    rolled_back = {r.original_transaction_id for r in records if r.purpose == ROLLBACK}
    lines = [_line(r, mirror.get(r.transaction_id, 0), placed, rolled_back) for r in records]
    explained = {r.transaction_id for r in records}
    for memo in sorted(set(mirror) - explained):
        if since is None or round_id is not None or _call_of(session, memo) is None:
            lines.append(
                Line(memo, "", "", "", where[memo], 0, "", 0, mirror[memo], MISMATCH, "a mirror transfer with no call")
            )
    return Report(lines)


def _line(record: WalletCallRecord, mirrored: int, placed: set[str], rolled_back: set[str | None]) -> Line:
    status, amount, note = record.status, record.amount, ""
    waiting = status == PENDING  # accepted, but what follows from the answer has not happened yet
    known = True
    if record.purpose == STAKE:
        expected = amount if record.transaction_id in placed else 0
        if status == OK and record.transaction_id not in placed:
            waiting = record.transaction_id not in rolled_back
            note = "debited, not placed: rolled back when its round ends" if waiting else "rolled back"
    elif record.purpose == PAYOUT:
        expected = -amount
    elif record.purpose == ROLLBACK:
        expected = -amount if record.original_transaction_id in placed else 0
    elif record.purpose == COLLECT:
        expected = amount if status == OK and record.mirrored_at is not None else 0
        if status == OK and record.mirrored_at is None:
            waiting, note = True, "accepted, not yet mirrored"
        if status == REFUSED:
            note = "the debt stays recorded"
    else:
        expected, note, known = 0, f"unknown purpose {record.purpose!r}", False
    if mirrored != expected or not known:
        verdict = MISMATCH
    elif status == REFUSED:
        # a refused stake or take-back books nothing; a refused credit or rollback leaves money nowhere
        verdict = REFUSAL if record.purpose in (STAKE, COLLECT) else MISMATCH
        note = note or "the operator refused money the studio handed back"
    else:
        verdict = WAITING if waiting else MATCHED
    return Line(
        record.transaction_id, record.purpose, record.kind, record.player, record.round_id, amount, status,
        expected, mirrored, verdict, note,
    )  # fmt: skip


def _placed_before(session: Session, originals: list[str | None], known: set[str]) -> set[str]:
    """Stakes rolled back in scope whose debit lies outside it (``--since``): placed if mirrored."""
    wanted = [t for t in originals if t is not None and t not in known]
    if not wanted:
        return set()
    return set(
        session.scalars(
            select(WalletCallRecord.transaction_id).where(
                WalletCallRecord.transaction_id.in_(wanted), WalletCallRecord.mirrored_at.is_not(None)
            )
        )
    )


def _call_of(session: Session, transaction: str) -> str | None:
    return session.scalar(select(WalletCallRecord.request_id).where(WalletCallRecord.transaction_id == transaction))
