"""The simulation's stand-ins for time, the broker and the shoe: a clock that jumps, a seeded network, a shoe.

Everything here is driven by the ``Scheduler``: an event runs at its simulated moment and nothing
ever sleeps. The ``Network`` carries payloads the way the broker can fail to — late, twice, out of
order, never, or not at all while the broker is away — and the ``SimShoe`` stamps, signs and keeps
each message in its outbox as the shoe daemon does, so the resend path refills what the network lost.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from services.bus.messages import ResendRequest, ShoeAlarm, ShoeCard, ShoeCutCard, ShoeNewDeck, ShoeStatus, encode
from services.cards import Card
from services.shoe.signing import ShoeKey, sign

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class SimClock:
    """Simulated time: it moves only when the scheduler jumps to the next event."""

    def __init__(self, start: datetime = EPOCH) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def seconds(self) -> float:
        """A monotonic reading (what ``time.monotonic`` is to a real process)."""
        return (self._now - EPOCH).total_seconds()

    def jump(self, moment: datetime) -> None:
        self._now = max(self._now, moment)


@dataclass(order=True)
class Event:
    when: datetime
    order: int
    what: str = field(compare=False)
    table: str = field(compare=False)
    run: Callable[[], None] = field(compare=False)


class Scheduler:
    """Events in order of their moment (ties in the order they were scheduled): a run is fully determined."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self._queue: list[Event] = []
        self._order = 0

    def at(self, when: datetime, what: str, run: Callable[[], None], table: str = "") -> None:
        self._order += 1
        heapq.heappush(self._queue, Event(max(when, self.clock.now()), self._order, what, table, run))

    def after(self, ms: float, what: str, run: Callable[[], None], table: str = "") -> None:
        self.at(self.clock.now() + timedelta(milliseconds=ms), what, run, table)

    def next(self) -> Event | None:
        if not self._queue:
            return None
        event = heapq.heappop(self._queue)
        self.clock.jump(event.when)
        return event

    def __len__(self) -> int:
        return len(self._queue)


@dataclass
class NetworkFaults:
    """How often the broker mistreats a message (each a probability per message)."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0  # held back long enough for later messages to overtake it
    delay: float = 0.0  # held back a long while (seconds)


class Network:
    """Payloads from one process to another through a broker that may lose, repeat, reorder and delay them."""

    def __init__(self, scheduler: Scheduler, rng: random.Random, faults: NetworkFaults) -> None:
        self.scheduler, self.rng, self.faults = scheduler, rng, faults
        self.down_until: datetime | None = None  # the broker is away until then: every message is lost
        self.lost = 0  # messages the network or a broker outage lost
        self._retained: dict[str, Callable[[], None]] = {}  # topic -> its latest message sent while away
        self._last: dict[str, datetime] = {}  # topic -> when its latest message arrives

    @property
    def up(self) -> bool:
        return self.down_until is None or self.scheduler.clock.now() >= self.down_until

    def send(self, what: str, deliver: Callable[[], None], table: str, retained: str = "") -> None:
        """``retained``: the topic of a retained message (QoS 1): in order, never lost or repeated, and what is sent
        while the broker is away reaches the subscribers when it is back (the client queues it, the broker keeps
        the latest). Other messages meet the network's faults."""
        if retained and not self.up:
            self._retained[retained] = deliver
            return
        if retained:  # one publisher's messages on one topic arrive in the order sent (MQTT's ordering)
            when = max(self.scheduler.clock.now() + timedelta(milliseconds=self.rng.uniform(1, 15)),
                       self._last.get(retained, EPOCH) + timedelta(microseconds=1))  # fmt: skip
            self._last[retained] = when
            self.scheduler.at(when, what, lambda: self._arrive(deliver, retained), table)
            return
        if not self.up or self.rng.random() < self.faults.loss:
            self.lost += 1
            return
        copies = 2 if self.rng.random() < self.faults.duplicate else 1
        for _ in range(copies):
            ms = self.rng.uniform(1, 15)
            if self.rng.random() < self.faults.reorder:
                ms += self.rng.uniform(20, 400)
            if self.rng.random() < self.faults.delay:
                ms += self.rng.uniform(1_000, 4_000)
            self.scheduler.after(ms, what, lambda: self._arrive(deliver), table)

    def _arrive(self, deliver: Callable[[], None], retained: str = "") -> None:
        if self.up:
            deliver()
        elif retained:  # the broker went away meanwhile: it hands the topic's latest over when it is back
            self._retained.setdefault(retained, deliver)
        else:  # a broker that went away meanwhile lost what it held
            self.lost += 1

    def outage(self, ms: float) -> None:
        self.down_until = max(self.down_until or EPOCH, self.scheduler.clock.now() + timedelta(milliseconds=ms))
        self.scheduler.at(self.down_until, "the broker is back", self._back)

    def _back(self) -> None:
        if not self.up:
            return  # a later outage is still on
        retained, self._retained = self._retained, {}
        for topic, deliver in sorted(retained.items()):  # ahead of what is published from now on
            when = max(self.scheduler.clock.now() + timedelta(milliseconds=self.rng.uniform(5, 50)),
                       self._last.get(topic, EPOCH) + timedelta(microseconds=1))  # fmt: skip
            self._last[topic] = when
            self.scheduler.at(when, f"retained {topic}", partial(self._arrive, deliver, topic))


class SimShoe:
    """A table's scanning shoe as its daemon publishes it: stamped, signed, kept in the outbox for resends."""

    def __init__(self, table: str, shoe_id: str, key: ShoeKey | None, boot_id: str, clock: SimClock) -> None:
        self.table, self.shoe_id, self.key, self.boot_id, self.clock = table, shoe_id, key, boot_id, clock
        self.seq = 0
        self.deck = 0
        self.outbox: dict[int, bytes] = {}

    def card(self, card: Card, burn: bool = False) -> bytes:
        self.seq += 1
        message = ShoeCard(**self._stamp(), card=str(card), burn=burn, source="sim", confidence=1.0, raw=f"sim:{card}")
        return self._keep(encode(message))

    def new_deck(self) -> bytes:
        self.seq += 1
        self.deck += 1
        return self._keep(encode(ShoeNewDeck(**self._stamp(), raw="sim:new deck")))

    def cut_card(self) -> bytes:
        self.seq += 1
        return self._keep(encode(ShoeCutCard(**self._stamp(), raw="sim:cut card")))

    def misread(self) -> bytes:
        alarm = ShoeAlarm(
            shoe_id=self.shoe_id, boot_id=self.boot_id, kind="misread", after_seq=self.seq, text="unreadable",
            ts=self.clock.now().isoformat(), video_tc=self._timecode(),
        )  # fmt: skip
        return self._signed(encode(alarm))

    def status(self) -> bytes:
        status = ShoeStatus(
            shoe_id=self.shoe_id, boot_id=self.boot_id, state="online", device="connected", last_seq=self.seq,
            first_seq=min(self.outbox, default=self.seq + 1),
            ts=self.clock.now().isoformat(),
        )  # fmt: skip
        return encode(status)

    def resend(self, request: ResendRequest) -> list[bytes]:
        """What the outbox holds of the requested range (a request for another shoe: nothing)."""
        if request.shoe_id != self.shoe_id:
            return []
        return [self.outbox[seq] for seq in range(request.from_seq, request.to_seq + 1) if seq in self.outbox]

    def _stamp(self) -> dict[str, Any]:
        return {
            "shoe_id": self.shoe_id, "boot_id": self.boot_id, "seq": self.seq, "ts": self.clock.now().isoformat(),
            "video_tc": self._timecode(), "deck": self.deck,
        }  # fmt: skip

    def _timecode(self) -> str:
        total = int(self.clock.seconds() * 25)
        frames, seconds = total % 25, total // 25
        return f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}:{frames:02d}"

    def _keep(self, payload: bytes) -> bytes:
        signed = self._signed(payload)
        self.outbox[self.seq] = signed
        return signed

    def _signed(self, payload: bytes) -> bytes:
        return sign(payload, self.key) if self.key is not None else payload
