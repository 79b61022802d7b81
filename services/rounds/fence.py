"""A table's one writer and its fence: the writes of a controller that lost the table's lease are refused.

The controller's leases (``services.controller.leases``) are the implementation; the round service only needs this
much of them, so it can fold the check into the statement that locks the round (one statement, not two)."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import ScalarSelect
from sqlalchemy.orm import InstrumentedAttribute, Session


class Fence(Protocol):
    def __call__(self, session: Session, table: str) -> None:
        """Refuse the write (``FencedError``, inside its transaction) unless the writer still holds ``table``."""

    def epoch_in(self, table: InstrumentedAttribute[str]) -> ScalarSelect[Any]:
        """The epoch at which this writer holds the lease of ``table`` (NULL if it does not), read under a shared
        lock: a sub-select for the statement that locks what the write changes."""

    def holds(self, table: str, epoch: int | None) -> bool:
        """Whether ``epoch``, as ``epoch_in`` read it, is the one this writer took ``table`` at."""
