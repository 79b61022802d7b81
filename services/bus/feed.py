"""Reading a shoe's card topic exactly once and in order.

``ShoeFeed`` is the pure part: it takes messages as they arrive (duplicates, reorderings and
gaps included) and hands back, in ``seq`` order, each message exactly once. A gap — seen from a
later ``seq`` or from the ``last_seq`` in the shoe's status — becomes a ``ResendRequest`` (at
most one per ``retry_after`` seconds while it stays open). ``ShoeFeedClient`` wires it to MQTT.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import paho.mqtt.client as mqtt

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import (
    MessageError,
    ResendRequest,
    ShoeCard,
    ShoeNewDeck,
    ShoeStatus,
    decode,
    decode_shoe_event,
    encode,
)

log = logging.getLogger("studio.bus.feed")
ShoeEvent = ShoeCard | ShoeNewDeck


def _stamp(ts: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class ShoeFeed:
    def __init__(
        self,
        shoe_id: str,
        next_seq: int | None = None,
        retry_after: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``next_seq``: the first ``seq`` wanted (None: whatever arrives first)."""
        self.shoe_id = shoe_id
        self.next_seq = next_seq
        self.retry_after = retry_after
        self.clock = clock
        self.duplicates = 0
        self._waiting: dict[int, ShoeEvent] = {}
        self._boots: set[str] = set()
        self._asked_at: float | None = None
        self._newest: datetime | None = None  # the latest stamp taken: a new boot must come after it
        self.replays = 0

    def receive(self, message: ShoeEvent) -> list[ShoeEvent]:
        """The messages now deliverable, in order (none when ``message`` is a duplicate or early)."""
        if message.shoe_id != self.shoe_id:
            return []
        if self.next_seq is None:
            self.next_seq = message.seq
        stamped = _stamp(message.ts)
        if message.boot_id not in self._boots:
            if self._boots and (stamped is None or (self._newest is not None and stamped <= self._newest)):
                # a run of the daemon that ended before what was already taken: an old message sent again
                # (it is signed, so only its stamp can tell), not a restart — it must not reset the sequence
                self.replays += 1
                log.warning("shoe %s: a message of an earlier run (boot %s, %s) refused as a replay",
                            self.shoe_id, message.boot_id, message.ts)  # fmt: skip
                return []
            # a daemon that lost its outbox starts counting again at 1 under a new boot id
            if message.seq == 1 and self._boots and self.next_seq > 1:
                log.warning("shoe %s restarted without its outbox: sequence starts over", self.shoe_id)
                self.next_seq, self._waiting = 1, {}
            self._boots.add(message.boot_id)
        if message.seq < self.next_seq or message.seq in self._waiting:
            self.duplicates += 1
            return []
        self._waiting[message.seq] = message
        ready: list[ShoeEvent] = []
        while self.next_seq in self._waiting:
            taken = self._waiting.pop(self.next_seq)
            ready.append(taken)
            self.next_seq += 1
            when = _stamp(taken.ts)
            if when is not None and (self._newest is None or when > self._newest):
                self._newest = when
        if ready:
            self._asked_at = None
        return ready

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
        refuse: Callable[[ShoeEvent, str], None] | None = None,
    ) -> None:
        """``untrusted(payload)`` says why a message of the table's shoe is not to be trusted (None: it is);
        such a message goes to ``refuse`` and takes no place in the sequence."""
        self.table, self.deliver = table, deliver
        self.untrusted, self.refuse = untrusted, refuse
        self.feed = ShoeFeed(shoe_id, next_seq)
        self.malformed = 0
        self.subscribed = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.client = make_client(f"feed-{table}-{shoe_id}-{id(self):x}")
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *_args: self.subscribed.set()
        self.client.on_message = self._on_message
        self._cards, self._status = topics.shoe_cards(table), topics.shoe_status(table)
        self._last_seq = 0
        connect(self.client, url)
        self._ticker = threading.Thread(target=self._tick, name="feed-gaps", daemon=True)
        self._ticker.start()

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, _reason: object, _p: object) -> None:
        client.subscribe([(self._cards, 1), (self._status, 1)])

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        try:
            if message.topic == self._status:
                status = decode(ShoeStatus, bytes(message.payload))
                if status.shoe_id == self.feed.shoe_id:
                    self._last_seq = max(self._last_seq, status.last_seq)
                return
            if message.topic != self._cards:
                return  # not ours (a broker may hand over retained messages of other topics)
            event = decode_shoe_event(bytes(message.payload))
        except MessageError as error:
            self.malformed += 1
            log.warning("ignored a malformed message on %s: %s", message.topic, error)
            return
        if event.shoe_id != self.feed.shoe_id:
            # another shoe on this table's topic (miswired): not part of the sequence, but the consumer
            # must see it to refuse, record and raise it — dropping it here would hide the fault
            self.deliver(event)
            return
        reason = self.untrusted(bytes(message.payload)) if self.untrusted else None
        if reason is not None:  # it must not take the place of the shoe's real message with the same seq
            if self.refuse is not None:
                self.refuse(event, reason)
            return
        with self._lock:
            ready = self.feed.receive(event)
        for item in ready:
            self.deliver(item)
        self._ask()

    def _ask(self) -> None:
        with self._lock:
            request = self.feed.gap(self._last_seq)
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
