"""The controller's own record: which controller writes each table (its lease)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from services.db.base import Base


class TableLease(Base):
    """Which controller writes a table: its ``owner`` until ``expires_at``, renewed every second.

    ``epoch`` grows at every change of owner; every write the controller makes checks that it still
    holds the lease at its epoch (``services.controller.leases``), so a controller that lost its
    table — paused, cut off, or a duplicate — can write nothing more to it.
    """

    __tablename__ = "table_leases"

    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128))
    epoch: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
