"""The shoe + camera cross-check: every face-up card the shoe read is seen by the overhead camera as the same card.

A table's ``verify`` setting (copied into each round as it opens) says what a card the camera did not confirm does:

- ``off``: nothing is checked;
- ``warn``: the dealer console is alerted (a mismatch, or no sighting within the window); settlement goes on;
- ``hold``: the alert, and the round's settlement waits (phase ``verifying``) until an operator confirms which read is
  right — recorded in the round's log with who and why; the camera's read replaces the shoe's by a correction.

A check opens in the transaction that shows a card to the public: dealt face up, or revealed (the banker's face-down
card is checked when it is turned over), and is due ``verify_window_ms`` later. The controller matches the camera's
sightings against the open checks (``services.controller.table``); the service records each outcome. What is stored
and what the rules are lives here; the round service calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.games.base import PUBLIC, Game
from services.rounds.clock import aware
from services.rounds.errors import NotFoundError, RoundError
from services.rounds.models import CardCheck, Round, locked_table

OFF, WARN, HOLD = "off", "warn", "hold"
MODES: Final = (OFF, WARN, HOLD)
PENDING, AGREED, MISMATCH, UNSEEN, CONFIRMED = "pending", "agreed", "mismatch", "unseen", "confirmed"
SETTLED_BY_CHECKS: Final = (AGREED, CONFIRMED)  # outcomes that let a held round settle
READS: Final = ("shoe", "camera")
VERIFYING: Final = "verifying"  # a held round's phase: dealt, its settlement waiting for the checks
VERIFIED: Final = "verified"  # the round log entry of an operator's word on a card (``engines.NOTES``)
WINDOW_MS: Final = (500, 30_000)  # how long the camera may take to see a card: bounds


class CheckError(RoundError):
    code = "check_refused"


class VerifySettingError(RoundError):
    code = "invalid_verify"


@dataclass(frozen=True, slots=True)
class OpenCheck:
    """A check the controller still has to decide (pending) or an operator has to (mismatch, unseen)."""

    position: int
    card: str
    status: str
    opened_at: datetime
    due_at: datetime
    camera_card: str | None = None

    def out(self, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
        """As the dealer console shows it: a camera's read naming a card still face down is left out (a misread
        cannot have seen it, but its code is not said before the reveal)."""
        camera = None if self.camera_card in hidden else self.camera_card
        return {
            "position": self.position, "card": self.card, "status": self.status, "camera_card": camera,
            "due_at": self.due_at.isoformat(),
        }  # fmt: skip


def checked_setting(verify: str | None, window_ms: int | None) -> None:
    if verify is not None and verify not in MODES:
        raise VerifySettingError(f"verify must be one of {', '.join(MODES)}, got {verify!r}")
    low, high = WINDOW_MS
    if window_ms is not None and not low <= window_ms <= high:
        raise VerifySettingError(f"verify_window_ms must be {low}–{high}, got {window_ms}")


def change_setting(session: Session, table_id: str, verify: str | None, window_ms: int | None) -> None:
    """The table's cross-check from its next round on."""
    checked_setting(verify, window_ms)
    table = locked_table(session, table_id)
    if verify is not None:
        table.verify = verify
    if window_ms is not None:
        table.verify_window_ms = window_ms


def shown(port: Game[Any, Any], engine: Any) -> frozenset[int]:
    """The positions (shoe order) of the dealt cards the public sees."""
    hidden = port.hidden(engine, PUBLIC)
    return frozenset(index for index, card in enumerate(port.cards(engine)) if card not in hidden)


def open_checks(
    session: Session, round_: Round, port: Game[Any, Any], engine: Any, before: frozenset[int], now: datetime
) -> None:
    """A pending check for every card shown since ``before`` (the positions shown before the command)."""
    cards = port.cards(engine)
    due = now + timedelta(milliseconds=round_.verify_window_ms)
    for position in sorted(shown(port, engine) - before):
        session.add(
            CardCheck(
                round_id=round_.id, position=position, card=str(cards[position]), status=PENDING, opened_at=now,
                due_at=due,
            )
        )  # fmt: skip
    session.flush()


def unresolved(session: Session, round_id: str) -> int:
    """How many of the round's checks do not yet let it settle."""
    return (
        session.scalar(
            select(func.count()).where(CardCheck.round_id == round_id, CardCheck.status.not_in(SETTLED_BY_CHECKS))
        )
        or 0
    )


def open_of(session: Session, round_id: str) -> tuple[OpenCheck, ...]:
    """The round's checks that are not settled, in shoe order."""
    rows = session.execute(
        select(
            CardCheck.position, CardCheck.card, CardCheck.status, CardCheck.opened_at, CardCheck.due_at,
            CardCheck.camera_card,
        )
        .where(CardCheck.round_id == round_id, CardCheck.status.not_in(SETTLED_BY_CHECKS))
        .order_by(CardCheck.position)
    ).all()  # fmt: skip
    return tuple(
        OpenCheck(row.position, row.card, row.status, aware(row.opened_at), aware(row.due_at), row.camera_card)
        for row in rows
    )


def locked(session: Session, round_id: str, position: int) -> CardCheck:
    check = session.scalar(
        select(CardCheck).where(CardCheck.round_id == round_id, CardCheck.position == position).with_for_update()
    )
    if check is None:
        raise NotFoundError(f"round {round_id} has no card check at position {position}")
    return check


def every(session: Session, round_id: str) -> list[dict[str, Any]]:
    """Every check of the round, for the operator's tools (the crop is fetched apart: ``has_crop`` says if there is
    one)."""
    has_crop = CardCheck.camera_crop.is_not(None).label("has_crop")
    found = session.execute(
        select(CardCheck, has_crop).where(CardCheck.round_id == round_id).order_by(CardCheck.position)
    )
    return [
        {
            "position": row.position, "card": row.card, "status": row.status,
            "opened_at": aware(row.opened_at).isoformat(), "due_at": aware(row.due_at).isoformat(),
            "checked_at": aware(row.checked_at).isoformat() if row.checked_at else None,
            "camera_card": row.camera_card, "camera_confidence": row.camera_confidence,
            "confirmed_read": row.confirmed_read, "confirmed_by": row.confirmed_by,
            "confirmed_why": row.confirmed_why,
            "confirmed_at": aware(row.confirmed_at).isoformat() if row.confirmed_at else None, "has_crop": crop,
        }
        for row, crop in found
    ]  # fmt: skip


def crop(session: Session, round_id: str, position: int) -> bytes:
    found = session.scalar(
        select(CardCheck.camera_crop).where(CardCheck.round_id == round_id, CardCheck.position == position)
    )
    if not found:
        raise NotFoundError(f"round {round_id}: no camera crop for the card at position {position}")
    return found
