"""The shoe + camera cross-check, as the table's controller runs it (``services.rounds.checks`` says what is stored).

The overhead camera's sightings (``Witness``) settle the round's open checks one at a time; each outcome is recorded
through the round service, a disputed card raised on the console, and a camera going off line said once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from services.bus.messages import ShoeCard, ShoeStatus
from services.cards import Card
from services.controller.parts import Parts
from services.controller.witness import Witness
from services.observability import metrics
from services.rounds import checks

log = logging.getLogger("studio.controller")


class CrossCheck(Parts):
    """The camera's part of a table's controller; the controller supplies the round, the deck and the console."""

    camera: Witness
    camera_state: str  # online | offline | unknown, as the camera's daemon last said

    def _camera_id(self) -> str:
        raise NotImplementedError

    def on_sighting(self, message: ShoeCard) -> None:
        """A card the overhead camera saw (its signature already checked): matched against the open checks."""
        now = self.service.clock.now()
        if not self._camera_id() or message.shoe_id != self._camera_id():
            self._alert("device", f"a sighting from camera {message.shoe_id}, not this table's camera: ignored")
            self._publish()
            return
        why = self.camera.take(message, now)
        if why:
            log.info("table %s: sighting %s ignored: %s", self.table_id, message.seq, why)
            self._count("sightings_ignored")
            return
        self._count("sightings")
        self._check_cards(now)

    def on_camera_status(self, status: ShoeStatus) -> None:
        """The overhead camera's daemon went on or off line (its last will says offline): the dealer is told."""
        if status.shoe_id != self._camera_id():
            return
        state = "online" if status.online else "offline"
        metrics.DEVICE_ONLINE.labels(self.table_id, "camera").set(status.online)
        if state == self.camera_state:
            return
        if state == "offline":
            held = "settlement waits for an operator's word on each" if self._holds() else "alerts follow"
            self._alert("verify_camera", f"the overhead camera {status.shoe_id} is offline: it checks no card ({held})")
        elif self.camera_state == "offline":
            self._alert("verify_camera", f"the overhead camera {status.shoe_id} is back: it checks the cards again")
        self.camera_state = state
        self._publish()

    def _check_cards(self, now: datetime) -> None:
        """Decide every check the camera's sightings (or the end of their window) now settle, one at a time."""
        while self.current is not None and self.current.verify != checks.OFF:
            step = self.camera.next_outcome(self.current.checks, self._window(), now, self._dealt)
            if step is None:
                break
            check, sighting = step
            seen = Card.from_code(sighting.card) if sighting else None
            crop = sighting.crop if sighting else b""
            confidence = sighting.confidence if sighting else None
            applied = self.service.camera_saw(self.current.round_id, check.position, seen, confidence, crop)
            if sighting is None:
                self._verify_alert("verify_unseen", check, f"the camera did not see the shoe's {check.card}")
            elif sighting.card != check.card:
                camera = sighting.card if Card.from_code(sighting.card) not in self._hidden() else "another card"
                self._verify_alert("verify_mismatch", check, f"the shoe read {check.card}, the camera saw {camera}")
            self._count(f"checks_{'agreed' if sighting and sighting.card == check.card else 'disputed'}")
            self._follow(applied)
        for sighting in self.camera.unexplained(self._checks(), self._window(), now, self._dealt):
            self._alert("verify_unexplained", f"the camera saw {sighting.card}; the shoe reported no such card")
            self._publish()

    def _camera_deadline(self) -> datetime | None:
        """When the camera's next check is decided by time (its window ends)."""
        return self.camera.deadline(self._checks(), self._window(), self._dealt)

    def _checks(self) -> tuple[checks.OpenCheck, ...]:
        return self.current.checks if self.current is not None and self.current.verify != checks.OFF else ()

    def _checking(self) -> bool:
        """A card of the round is still within its window for the camera."""
        return any(check.status == checks.PENDING for check in self._checks())

    def _holds(self) -> bool:
        return self.current is not None and self.current.verify == checks.HOLD

    def _verify_alert(self, kind: str, check: checks.OpenCheck, what: str) -> None:
        then = "settlement waits for an operator's word (ops page)" if self._holds() else "check the video"
        self._alert(kind, f"card {check.position + 1}: {what}; {then}", check.card)

    def _window(self) -> timedelta:
        return timedelta(milliseconds=self.current.verify_window_ms if self.current else 0)

    def _dealt(self, code: str) -> bool:
        return self.deck.has_seen(Card.from_code(code))
