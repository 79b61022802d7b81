"""The time source of every service, injectable so window tests never sleep."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


def aware(moment: datetime) -> datetime:
    """A stored moment as UTC: SQLite hands back naive datetimes, and every moment we store is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
