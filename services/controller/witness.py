"""The overhead camera as a witness of the shoe: its recent sightings, and which check each one settles.

Pure and clocked by its caller (``TableController``): sightings go in with the time they arrived; the open checks of
the round (``services.rounds.checks``) are matched against them:

- a sighting of the check's own card, arrived no earlier than one window before the check opened: ``agreed``;
- once the check's window ends: a sighting within it of a card the shoe never reported from this deck is what the
  camera saw instead (``mismatch``); with none, the camera did not see the card (``unseen``);
- a sighting of a card the shoe never reported that no check can take is reported once, a window after it came.

A mismatch waits for the end of the window on purpose: the camera may see a card before the shoe's message for it
arrives, and that sighting must not be taken for a misread of the card before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from services.bus.messages import ShoeCard, jpeg_bytes
from services.rounds.checks import PENDING, OpenCheck

KEEP = timedelta(seconds=30)  # sightings older than this are forgotten
STALE = timedelta(seconds=30)  # a sighting stamped longer ago than this is an old message sent again
Dealt = Callable[[str], bool]  # whether the shoe reported this card (code) from the current deck


@dataclass(frozen=True, slots=True)
class Sighting:
    card: str
    at: datetime  # when the controller took it
    confidence: float
    crop: bytes
    key: tuple[str, int]  # (boot, seq) of the camera's message


@dataclass
class Witness:
    recent: list[Sighting] = field(default_factory=list)
    used: set[tuple[str, int]] = field(default_factory=set)  # sightings that settled a check or were reported
    last: tuple[str, int] = ("", 0)  # (boot, seq) of the newest sighting taken
    newest: datetime | None = None  # its stamp

    def take(self, message: ShoeCard, now: datetime) -> str:
        """Keep a sighting; or why not ("" when kept): a stamp that is no time, old, or an earlier message."""
        try:
            stamp = datetime.fromisoformat(message.ts)
        except ValueError:
            return f"its stamp {message.ts!r} is not an ISO time"
        stamp = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
        if now - stamp > STALE:
            return f"stamped {(now - stamp).total_seconds():.0f} s ago: an old message sent again"
        boot, seq = message.boot_id, message.seq
        if boot == self.last[0] and seq <= self.last[1]:
            return f"seq {seq} was taken already"
        if boot != self.last[0] and self.newest is not None and stamp <= self.newest:
            return f"boot {boot} stamped before the newest sighting: an earlier run's message"
        self.last, self.newest = (boot, seq), stamp
        crop = jpeg_bytes(message.crop) if message.crop else b""
        self.recent = [s for s in self.recent if now - s.at <= KEEP]
        self.used &= {s.key for s in self.recent}
        self.recent.append(Sighting(message.card, now, message.confidence, crop, (boot, seq)))
        return ""

    def next_outcome(
        self, checks: Sequence[OpenCheck], window: timedelta, now: datetime, dealt: Dealt
    ) -> tuple[OpenCheck, Sighting | None] | None:
        """The next check the sightings settle, with the sighting (None: unseen); None when none is settled yet.
        The sighting is spent."""
        pending = [check for check in checks if check.status == PENDING]
        free = self._free()
        for check in pending:
            same = next((s for s in free if s.card == check.card and s.at >= check.opened_at - window), None)
            if same is not None:
                self.used.add(same.key)
                return check, same
        for check in pending:
            if now < check.due_at:
                continue
            other = next((s for s in free if not dealt(s.card) and _within(s, check, window)), None)
            if other is not None:
                self.used.add(other.key)
            return check, other
        return None

    def unexplained(
        self, checks: Sequence[OpenCheck], window: timedelta, now: datetime, dealt: Dealt
    ) -> list[Sighting]:
        """Sightings of cards the shoe never reported that no check can take any more (each returned once)."""
        found = [s for s in self._free() if now >= s.at + window and self._orphan(s, checks, window, dealt)]
        self.used.update(s.key for s in found)
        return found

    def deadline(self, checks: Sequence[OpenCheck], window: timedelta, dealt: Dealt) -> datetime | None:
        """When a check's window ends or an orphan sighting is due to be reported."""
        due = [check.due_at for check in checks if check.status == PENDING]
        due += [s.at + window for s in self._free() if self._orphan(s, checks, window, dealt)]
        return min(due, default=None)

    def _free(self) -> list[Sighting]:
        return [s for s in self.recent if s.key not in self.used]

    @staticmethod
    def _orphan(sighting: Sighting, checks: Sequence[OpenCheck], window: timedelta, dealt: Dealt) -> bool:
        pending = (check for check in checks if check.status == PENDING)
        return not dealt(sighting.card) and not any(_within(sighting, check, window) for check in pending)


def _within(sighting: Sighting, check: OpenCheck, window: timedelta) -> bool:
    return check.opened_at - window <= sighting.at <= check.due_at
