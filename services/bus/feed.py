"""Reading a shoe's card topic exactly once and in order.

``ShoeFeed`` is the pure part: it takes messages as they arrive (duplicates, reorderings and
gaps included) and hands back, in ``seq`` order, each message exactly once. A gap — seen from a
later ``seq`` or from the ``last_seq`` in the shoe's status — becomes a ``ResendRequest`` (at
most one per ``retry_after`` seconds while it stays open). ``ShoeFeedClient`` wires it to MQTT.

The sequence is the shoe's outbox's: a daemon restarted with its outbox goes on counting under a
new boot id, and the messages of its earlier runs still fill gaps. A daemon that lost its outbox
counts again from 1 (its messages say where their run began, ``boot_seq``; a message that does not
say so and is numbered below where the feed is shows the same): a new sequence starts there, gaps
asked for as usual. A run is taken as new only if stamped after the newest message taken (so the
feed resumes with the last run and that stamp, from the consumer's journal): an old signed message
sent again is not a restart. Whatever the feed will not place in the sequence — that replay, a
message of a run before the restart, one below where the feed resumed — it hands back with why
(``Taken.refused``), never drops: the consumer journals it, unless its journal shows it was taken
before (a redelivery). Only a message this feed itself delivered, seen again, is just counted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import paho.mqtt.client as mqtt

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import (
    MessageError,
    ResendRequest,
    ShoeMessage,
    ShoeStatus,
    decode,
    decode_shoe_event,
    encode,
)
from services.observability import metrics

log = logging.getLogger("studio.bus.feed")
ShoeEvent = ShoeMessage


def stamp_time(ts: str) -> datetime | None:
    """A message's stamp as a time (UTC when it names no zone); None when it is not ISO time."""
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class FeedStart:
    """Where a consumer's feed of a shoe resumes, from its journal: the next ``seq`` wanted (None: nothing taken yet),
    the run (boot) of the shoe it took last, and the newest stamp it took (a new run must come after it)."""

    next_seq: int | None = None
    boot: str | None = None
    newest: datetime | None = None


@dataclass(frozen=True)
class OutOfSequence:
    """Why a signed message of the table's shoe takes no place in its sequence (the consumer journals it apart,
    unless it took that very message before)."""

    why: str


@dataclass(frozen=True)
class Taken:
    """What one message made of the feed: the messages now due, in order, and those it refuses, with why."""

    ready: tuple[ShoeEvent, ...] = ()
    refused: tuple[tuple[ShoeEvent, str], ...] = ()


class ShoeFeed:
    def __init__(
        self,
        shoe_id: str,
        next_seq: int | None = None,
        retry_after: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        boot: str | None = None,
        newest: datetime | None = None,
    ) -> None:
        """``next_seq``: the first ``seq`` wanted (None: whatever arrives first); ``boot`` and ``newest``: the run of
        the shoe that was taken last and the newest stamp taken (see ``FeedStart``)."""
        self.shoe_id = shoe_id
        self.next_seq = next_seq
        self.retry_after = retry_after
        self.clock = clock
        self.duplicates = 0
        self.replays = 0
        self.restarts = 0  # runs that started the sequence again (a daemon without its outbox)
        self._waiting: dict[int, ShoeEvent] = {}
        self._boots: set[str] = {boot} if boot else set()  # the runs of the daemon in the current sequence
        self._retired: set[str] = set()  # runs of a sequence the shoe restarted from
        self._asked_at: float | None = None
        self._newest = newest  # the latest stamp taken: a new run must come after it
        self._delivered_from: int | None = None  # the first seq this feed delivered in the current sequence

    def receive(self, message: ShoeEvent) -> list[ShoeEvent]:
        """The messages now deliverable, in order (what the feed refuses is in ``take``)."""
        return list(self.take(message).ready)

    def take(self, message: ShoeEvent) -> Taken:
        """The messages now deliverable, in order, and those the feed refuses (``message`` itself, or what a restart
        of the shoe left waiting) with why; nothing at all for a message this feed delivered already."""
        if message.shoe_id != self.shoe_id:
            return Taken()
        if self.next_seq is None:
            self.next_seq = message.seq
        left: tuple[tuple[ShoeEvent, str], ...] = ()
        if message.boot_id not in self._boots:
            why = self._not_a_new_run(message)
            if why is not None:
                return Taken(refused=((message, why),))
            left = self._new_run(message)
        if message.seq < self.next_seq:
            if self._delivered_from is not None and message.seq >= self._delivered_from:
                self.duplicates += 1  # delivered by this feed: the same message again (QoS 1, a resend)
                return Taken(refused=left)
            # below where this feed started: only the consumer's journal knows whether it was taken
            why = f"seq {message.seq} of boot {message.boot_id} comes after the feed moved past it (to {self.next_seq})"
            return Taken(refused=(*left, (message, why)))
        if message.seq in self._waiting:
            self.duplicates += 1
            return Taken(refused=left)
        self._waiting[message.seq] = message
        return Taken(tuple(self._drain()), left)

    def _not_a_new_run(self, message: ShoeEvent) -> str | None:
        """Why a message of a run not in the current sequence cannot start one (None: it is a new run)."""
        where = f"boot {message.boot_id}, seq {message.seq}"
        if message.boot_id in self._retired:
            return f"a message of the shoe's run before it restarted ({where})"
        stamped = stamp_time(message.ts)
        if self._boots and stamped is None:
            return f"a message of another run of the shoe ({where}) whose stamp {message.ts[:40]!r} is not a time"
        if stamped is not None and self._newest is not None and stamped <= self._newest:
            # an old run's message sent again (it is signed, so only its stamp can tell), not a restart: it must not
            # reset the sequence
            self.replays += 1
            log.warning("shoe %s: a message of an earlier run (boot %s, %s) refused as a replay",
                        self.shoe_id, message.boot_id, message.ts)  # fmt: skip
            return (
                f"a message of another run of the shoe ({where}) stamped {message.ts}, not after the newest taken "
                f"({self._newest.isoformat()}): an old message sent again"
            )
        return None

    def _new_run(self, message: ShoeEvent) -> tuple[tuple[ShoeEvent, str], ...]:
        """A new run of the shoe's daemon: it goes on counting (its outbox kept), or starts the sequence again — then
        what waited in the old sequence is refused (its run is gone: the gap before it will not be filled)."""
        assert self.next_seq is not None
        began = message.boot_seq if message.boot_seq is not None else (1 if message.seq < self.next_seq else None)
        left: tuple[tuple[ShoeEvent, str], ...] = ()
        if self._boots and began is not None and began < self.next_seq:
            log.warning("shoe %s restarted without its outbox (boot %s): its sequence starts again at %d",
                        self.shoe_id, message.boot_id, began)  # fmt: skip
            self.restarts += 1
            left = tuple(
                (waiting, f"a message of the shoe's run before it restarted (boot {waiting.boot_id}, seq {seq}), "
                          "held for a gap that run can no longer fill")
                for seq, waiting in sorted(self._waiting.items())
            )  # fmt: skip
            self._retired |= self._boots
            self._boots, self._waiting, self._asked_at, self._delivered_from = set(), {}, None, None
            self.next_seq = began
        self._boots.add(message.boot_id)
        return left

    def _drain(self) -> list[ShoeEvent]:
        """The waiting messages now in order from ``next_seq``, taken."""
        assert self.next_seq is not None
        ready: list[ShoeEvent] = []
        while self.next_seq in self._waiting:
            taken = self._waiting.pop(self.next_seq)
            ready.append(taken)
            if self._delivered_from is None:
                self._delivered_from = self.next_seq
            self.next_seq += 1
            when = stamp_time(taken.ts)
            if when is not None and (self._newest is None or when > self._newest):
                self._newest = when
        if ready:
            self._asked_at = None
        return ready

    def start_at(self, seq: int) -> list[ShoeEvent]:
        """Nothing taken yet: start at ``seq`` (never earlier than now) — what waited from there is now deliverable."""
        self.next_seq = max(self.next_seq or seq, seq)
        self._waiting = {s: m for s, m in self._waiting.items() if s >= self.next_seq}
        return self._drain()

    def gap(self, last_seq: int = 0) -> ResendRequest | None:
        """A request for what is missing (given the shoe's latest ``seq``); at most one per ``retry_after``."""
        if self.next_seq is None:
            return None
        newest = max([last_seq, *self._waiting])
        if newest < self.next_seq:
            return None
        now = self.clock()
        if self._asked_at is not None and now - self._asked_at < self.retry_after:
            return None
        self._asked_at = now
        missing_to = min(self._waiting, default=newest + 1) - 1
        return ResendRequest(shoe_id=self.shoe_id, from_seq=self.next_seq, to_seq=max(self.next_seq, missing_to))


Verdict = str | OutOfSequence | None  # what the inlet says of a message: see ``ShoeInlet``


class ShoeInlet:
    """What a table's controller makes of the payloads on its shoe's topics, with no transport.

    Card and new-deck payloads come back as ``(event, why)`` pairs: ``why`` is None for a message of
    the table's shoe now due in order (or of another shoe, delivered at once for the consumer to
    refuse), says why a message in the shoe's name is not to be trusted (a string: it takes no place
    in the sequence), or why a message the shoe signed takes no place in it (``OutOfSequence``).
    Malformed payloads are counted and dropped. ``ShoeFeedClient`` puts it on MQTT; the studio
    simulation (``services.sim``) on its simulated network.
    """

    def __init__(
        self,
        shoe_id: str,
        next_seq: int | None = None,
        untrusted: Callable[[bytes], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        boot: str | None = None,
        newest: datetime | None = None,
    ) -> None:
        self.feed = ShoeFeed(shoe_id, next_seq, clock=clock, boot=boot, newest=newest)
        self._from_status, self._taken = next_seq is None, False  # where to start: the shoe's status says
        self.untrusted = untrusted
        self.malformed = 0
        self.last_seq = 0  # the shoe's latest seq, as its status says
        # whether its daemon says it can read a card (None: not heard yet)
        self.online: bool | None = None

    def status(self, payload: bytes) -> list[ShoeEvent]:
        """Take the shoe's status; what it makes deliverable (a start moved past a gap the shoe can no longer fill)."""
        try:
            status = decode(ShoeStatus, payload)
        except MessageError as error:
            self._malformed("status", error)
            return []
        if status.shoe_id != self.feed.shoe_id:
            return []
        self.online = status.online
        self.last_seq = max(self.last_seq, status.last_seq)
        if self._from_status and not self._taken and status.first_seq:
            # nothing taken yet, and the journal named no start: begin at the oldest message the shoe still holds
            # (a later status may say it holds less: a retained last will is as old as its daemon's connection)
            return self._ready(self.feed.start_at(status.first_seq))
        return []

    def card(self, payload: bytes) -> list[tuple[ShoeEvent, Verdict]]:
        try:
            event = decode_shoe_event(payload)
        except MessageError as error:
            self._malformed("card", error)
            return []
        if event.shoe_id != self.feed.shoe_id:
            # another shoe on this table's topic (miswired): not part of the sequence, but the consumer
            # must see it to refuse, record and raise it — dropping it here would hide the fault
            return [(event, None)]
        reason = self.untrusted(payload) if self.untrusted else None
        if reason is not None:  # it must not take the place of the shoe's real message with the same seq
            return [(event, reason)]
        taken = self.feed.take(event)
        refused: list[tuple[ShoeEvent, Verdict]] = [(message, OutOfSequence(why)) for message, why in taken.refused]
        return refused + [(ready, None) for ready in self._ready(list(taken.ready))]

    def _ready(self, events: list[ShoeEvent]) -> list[ShoeEvent]:
        self._taken = self._taken or bool(events)
        return events

    def gap(self) -> ResendRequest | None:
        """What to ask the shoe to send again (at most once per the feed's ``retry_after``)."""
        return self.feed.gap(self.last_seq)

    def _malformed(self, what: str, error: MessageError) -> None:
        self.malformed += 1
        log.warning("ignored a malformed %s message of shoe %s: %s", what, self.feed.shoe_id, error)


class ShoeFeedClient:
    """A table's shoe feed over MQTT: calls ``deliver`` with each card or new deck, once and in order.

    Messages of another shoe on the table's topic are delivered as they come (outside the order),
    for the consumer to refuse.
    """

    def __init__(
        self,
        url: str,
        table: str,
        shoe_id: str,
        deliver: Callable[[ShoeEvent], None],
        next_seq: int | None = None,
        untrusted: Callable[[bytes], str | None] | None = None,
        refuse: Callable[[ShoeEvent, str | OutOfSequence], None] | None = None,
        boot: str | None = None,
        newest: datetime | None = None,
    ) -> None:
        """``untrusted(payload)`` says why a message of the table's shoe is not to be trusted (None: it is);
        such a message, and a signed one out of the shoe's sequence, goes to ``refuse`` and takes no place in
        it. ``next_seq``, ``boot`` and ``newest``: where to resume (``FeedStart``)."""
        self.table, self.deliver, self.refuse = table, deliver, refuse
        self.inlet = ShoeInlet(shoe_id, next_seq, untrusted, boot=boot, newest=newest)
        self.subscribed = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.client = make_client(f"feed-{table}-{shoe_id}-{id(self):x}")
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *_args: self.subscribed.set()
        self.client.on_message = self._on_message
        self._cards, self._status = topics.shoe_cards(table), topics.shoe_status(table)
        connect(self.client, url)
        self._ticker = threading.Thread(target=self._tick, name="feed-gaps", daemon=True)
        self._ticker.start()

    @property
    def feed(self) -> ShoeFeed:
        return self.inlet.feed

    @property
    def malformed(self) -> int:
        return self.inlet.malformed

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, _reason: object, _p: object) -> None:
        client.subscribe([(self._cards, 1), (self._status, 1)])

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        if message.topic == self._status:
            with self._lock:
                started = self.inlet.status(bytes(message.payload))
                if self.inlet.online is not None:
                    metrics.DEVICE_ONLINE.labels(self.table, "shoe").set(self.inlet.online)
            self._hand_over([(event, None) for event in started])
            return
        if message.topic != self._cards:
            return  # not ours (a broker may hand over retained messages of other topics)
        with self._lock:
            taken = self.inlet.card(bytes(message.payload))
        self._hand_over(taken)
        self._ask()

    def _hand_over(self, taken: Sequence[tuple[ShoeEvent, Verdict]]) -> None:
        for event, why in taken:
            if why is None:
                self.deliver(event)
            elif self.refuse is not None:
                self.refuse(event, why)

    def _ask(self) -> None:
        with self._lock:
            request = self.inlet.gap()
        if request is not None:
            self.client.publish(topics.shoe_resend(self.table), encode(request), qos=1)

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._ask()

    def close(self) -> None:
        self._stop.set()
        self._ticker.join(timeout=2)
        self.client.disconnect()
        self.client.loop_stop()
