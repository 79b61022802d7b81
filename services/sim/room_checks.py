"""What the simulation checks of a room's hand once it has ended (``checks.Checker.final`` calls it): the money moved
between its players only, its payments sum to zero, and a Tiến Lên round's experience points went once to each player
who played it to the end."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from services.ledger.models import Account, AccountKind, Transfer
from services.rounds.models import ExperienceAward, Round
from services.sim.runs import Violation

TRANSFERS = cast(Table, Transfer.__table__)


def room_round(session: Session, round_: Round, port: Any, engine: Any, game: str) -> None:
    """A room's hand moves money between its players only: what they won and paid sums to nothing (less the
    room's commission), through the house as no more than a clearing account; a Tiến Lên round's experience
    points went to each player who played it to the end, once, and to no one else."""
    house = session.scalar(select(Account.id).where(Account.kind == AccountKind.HOUSE, Account.currency == "THB"))
    moved = session.execute(
        select(TRANSFERS.c.debit_account_id, TRANSFERS.c.credit_account_id, TRANSFERS.c.amount, TRANSFERS.c.kind)
        .where(TRANSFERS.c.round_id == round_.id)
    ).all()  # fmt: skip
    through_house = sum(amount * ((credit == house) - (debit == house)) for debit, credit, amount, _ in moved)
    if through_house:
        raise Violation(f"round {round_.id}: the room's hand left {through_house} with the house (players only)")
    if round_.phase == "settled":
        result = port.result(engine) or {}
        units = result.get("units") or result.get("players") or {}
        if sum(units.values()) != 0:
            raise Violation(f"round {round_.id}: the hand's payments {units} do not sum to zero")
    if game != "tienlen":
        return
    awarded = session.scalars(select(ExperienceAward.player).where(ExperienceAward.round_id == round_.id)).all()
    left = engine.engine.left if engine.engine is not None else set()
    expected = set(port.seats(engine).values()) - set(left) if round_.phase == "settled" else set()
    if round_.phase == "void" and round_.settled_at is not None:
        expected = set(awarded)  # voided after it settled: what it awarded stands, once
    if sorted(awarded) != sorted(expected):
        raise Violation(
            f"round {round_.id}: experience points went to {sorted(awarded)}, not to those who played it to the "
            f"end {sorted(expected)}"
        )
