"""The shoe daemon: device events → validated, stamped, durable card messages on MQTT.

One daemon per shoe. Each card is stamped ``(shoe_id, boot_id, seq, ts, video_tc, source,
confidence, raw)`` — and ``boot_seq``, the first seq of this run (a run that lost its outbox counts
from 1 again) — written to the outbox, then published with QoS 1 to the table's card topic;
the broker's PUBACK marks it delivered. Unacknowledged messages are published again after a
restart; a consumer that saw a gap asks on the resend topic and gets them again from the
outbox. The status topic holds a retained ``online`` (with the latest ``seq``, refreshed every
heartbeat) and, as the last will, ``offline``. Misreads, device alarms and reader faults go to
the alarm topic. The daemon knows card codes, not games. A camera's cards carry its confidence and the time
of the frame that confirmed them.
"""

from __future__ import annotations

import base64
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

import paho.mqtt.client as mqtt

from hardware.camera.device import CardSeen
from hardware.serial_shoe import (
    Alarm,
    CardRead,
    Connected,
    CutCard,
    DeviceWarning,
    Disconnected,
    DriverEvent,
    Misread,
    NewDeck,
)
from services.bus import topics
from services.bus.client import Subscriber, connect, make_client
from services.bus.messages import (
    MessageError,
    NewDeckCommand,
    ResendRequest,
    ShoeAlarm,
    ShoeCard,
    ShoeCutCard,
    ShoeMessage,
    ShoeNewDeck,
    ShoeStatus,
    decode,
    encode,
)
from services.cards import Card, CardError
from services.observability import metrics
from services.shoe.errors import ShoeError
from services.shoe.outbox import Outbox
from services.shoe.signing import ShoeKey, sign
from services.shoe.timecode import VideoClock

log = logging.getLogger("studio.shoe")
Device = Callable[[threading.Event], Iterator[DriverEvent | CardSeen]]


RETAINED_WAIT_S = 0.2
TWIN_HEARTBEATS = 2.5  # a live daemon refreshes its status within this many heartbeats


class ShoeAlreadyOnlineError(ShoeError):
    """Another daemon of the same shoe is alive and publishing for the table."""

    code = "shoe_online"


@dataclass(frozen=True)
class ShoeConfig:
    table: str
    shoe_id: str
    outbox: Path
    broker_url: str
    source: str = "serial"  # serial | camera | sim
    heartbeat: float = 1.0  # seconds between status refreshes
    key: ShoeKey | None = None  # signs every card, new deck and alarm (see services.shoe.signing)
    # an overhead camera that witnesses the shoe: its cards go to the camera's topics, where the controller checks
    # the shoe's cards against them (``services.rounds.checks``); it deals nothing and takes no new deck
    witness: bool = False


class StampFields(TypedDict):
    shoe_id: str
    boot_id: str
    seq: int
    deck: int
    boot_seq: int
    ts: str
    video_tc: str


@dataclass
class Counters:
    cards: int = 0
    new_decks: int = 0
    alarms: int = 0
    republished: int = 0
    resend_requests: int = 0
    bad_requests: int = 0


class ShoeDaemon:
    def __init__(
        self,
        config: ShoeConfig,
        device: Device,
        video: VideoClock | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.device = device
        self.video = video or VideoClock()
        self.clock = clock
        self.boot_id = uuid.uuid4().hex[:16]
        self.outbox = Outbox(config.outbox)
        # where this run's count begins, on every message it stamps: past the last seq of a kept outbox, or 1 for a
        # new one — the controller starts the sequence again only for the latter
        self.boot_seq = self.outbox.last_seq + 1
        self.counters = Counters()
        self.device_state = "unknown"
        self._inflight: dict[int, int] = {}  # paho message id → seq
        self._lock = threading.Lock()
        self._acks: queue.SimpleQueue[int] = queue.SimpleQueue()
        witness, table = config.witness, config.table
        self._cards_topic = topics.camera_cards(table) if witness else topics.shoe_cards(table)
        self._status_topic = topics.camera_status(table) if witness else topics.shoe_status(table)
        self._alarms_topic = topics.camera_alarms(table) if witness else topics.shoe_alarms(table)
        self.client = make_client(f"shoe-{config.shoe_id}-{self.boot_id}")
        self.client.will_set(self._status_topic, self._status("offline"), qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_publish = lambda _c, _d, mid, _rc, _p: self._acks.put(mid)
        self.client.on_message = self._on_message

    # ---- running ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Publish until ``stop`` is set; then say ``offline`` and close.

        Raises ``ShoeAlreadyOnlineError`` before anything is published if a live daemon of the same shoe
        already feeds the table: two writers of one sequence would take over each other's cards.
        """
        try:
            self._refuse_a_twin()
        except ShoeAlreadyOnlineError:
            self.outbox.close()
            raise
        for seq, payload in self.outbox.pending():  # what a previous run stored but never saw acknowledged
            self._publish(seq, payload)
            self.counters.republished += 1
        connect(self.client, self.config.broker_url)
        helpers = [
            threading.Thread(target=self._ack_loop, args=(stop,), name="shoe-acks", daemon=True),
            threading.Thread(target=self._heartbeat_loop, args=(stop,), name="shoe-heartbeat", daemon=True),
        ]
        for helper in helpers:
            helper.start()
        try:
            for event in self.device(stop):
                self.handle(event)
        finally:
            stop.set()
            info = self.client.publish(self._status_topic, self._status("offline"), qos=1, retain=True)
            if self.client.is_connected():
                info.wait_for_publish(timeout=2)
            self.client.disconnect()
            self.client.loop_stop()
            for helper in helpers:
                helper.join(timeout=2)
            self.outbox.close()

    def handle(self, event: DriverEvent | CardSeen) -> None:
        if isinstance(event, CardRead):
            self._card(event.code, event.burn, _text(event.raw))
        elif isinstance(event, CardSeen):
            x, y, w, h = event.box
            raw = f"camera {event.code} at {x},{y} {w}x{h}"
            self._card(event.code, False, raw, event.confidence, event.frame_time, event.crop)
        elif isinstance(event, NewDeck):
            self.new_deck(event.raw)
        elif isinstance(event, CutCard):
            self.cut_card(event.raw)
        elif isinstance(event, Misread):
            self._alarm("misread", text=event.reason, raw=event.raw)
        elif isinstance(event, Alarm):
            self._alarm("device_alarm", event.code, event.text, event.raw)
        elif isinstance(event, DeviceWarning):
            self._alarm("device_warning", event.code, raw=event.raw)
        elif isinstance(event, Disconnected):
            self.device_state = "disconnected"
            self._alarm("reader_fault", text=f"{event.port}: {event.reason}; retrying in {event.retry_in:.1f} s")
            self._publish_status()
        elif isinstance(event, Connected):
            self.device_state = "connected"
            self._publish_status()

    def new_deck(self, raw: bytes = b"") -> int:
        """A freshly shuffled deck is loaded (from the device, the dealer console or an operator)."""

        def build(seq: int, deck: int) -> bytes:
            return self._sealed(ShoeNewDeck(raw=_text(raw), **self._stamp(seq, deck)))

        seq, payload = self.outbox.append(build, new_deck=True)
        self.counters.new_decks += 1
        self._publish(seq, payload)
        return seq

    def cut_card(self, raw: bytes = b"") -> int:
        """The cut card came out of the shoe: the coup being dealt is the shoe's last."""

        def build(seq: int, deck: int) -> bytes:
            return self._sealed(ShoeCutCard(raw=_text(raw), **self._stamp(seq, deck)))

        seq, payload = self.outbox.append(build)
        self._publish(seq, payload)
        return seq

    def _card(
        self,
        code: str,
        burn: bool,
        raw: str,
        confidence: float = 1.0,
        seen_at: float | None = None,
        crop: bytes = b"",
    ) -> None:
        try:
            card = Card.from_code(code)
        except CardError as error:
            self._alarm("invalid_card", text=str(error), raw=raw.encode())
            return

        def build(seq: int, deck: int) -> bytes:
            return self._sealed(
                ShoeCard(
                    card=str(card), burn=burn, source=self.config.source,  # type: ignore[arg-type]
                    confidence=round(confidence, 4), raw=raw, crop=base64.b64encode(crop).decode() if crop else None,
                    **self._stamp(seq, deck, seen_at),
                )
            )  # fmt: skip

        seq, payload = self.outbox.append(build)
        self.counters.cards += 1
        metrics.SHOE_CARDS.labels(self.config.shoe_id, self.config.source).inc()
        self._publish(seq, payload)

    # ---- MQTT ---------------------------------------------------------------------------

    def _publish(self, seq: int, payload: bytes) -> None:
        with self._lock:
            info = self.client.publish(self._cards_topic, payload, qos=1)
            self._inflight[info.mid] = seq

    def _ack_loop(self, stop: threading.Event) -> None:
        """PUBACKs → outbox. (paho calls back on its own thread; the lookup waits for ``_publish`` to finish.)"""
        while not stop.is_set() or not self._acks.empty():
            try:
                mid = self._acks.get(timeout=0.1)
            except queue.Empty:
                continue
            with self._lock:
                seq = self._inflight.pop(mid, None)
            if seq is not None:
                self.outbox.ack([seq])

    def _heartbeat_loop(self, stop: threading.Event) -> None:
        """Every ``heartbeat``: the outbox depth gauge, and the status (with the latest seq) when connected."""
        while not stop.wait(self.config.heartbeat):
            metrics.OUTBOX_DEPTH.labels(self.config.shoe_id).set(self.outbox.depth())
            if self.client.is_connected():
                self._publish_status()

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, reason: object, _p: object) -> None:
        log.info("shoe %s connected to the broker (%s)", self.config.shoe_id, reason)
        if not self.config.witness:  # a witness is never asked to resend (a lost sighting is a card unseen)
            client.subscribe([(topics.shoe_resend(self.config.table), 1), (topics.shoe_control(self.config.table), 1)])
        self._publish_status()

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        try:
            if message.topic == topics.shoe_control(self.config.table):
                command = decode(NewDeckCommand, bytes(message.payload))
                self.new_deck(f"new deck announced by {command.by}".encode())
                return
            if message.topic != topics.shoe_resend(self.config.table):
                return  # not ours (a broker may hand over retained messages of other topics)
            request = decode(ResendRequest, bytes(message.payload))
        except MessageError as error:
            self.counters.bad_requests += 1
            log.warning("ignored a message on %s: %s", message.topic, error)
            return
        if request.shoe_id != self.config.shoe_id:
            return
        self.counters.resend_requests += 1
        for seq, payload in self.outbox.between(request.from_seq, request.to_seq):
            self._publish(seq, payload)

    def _refuse_a_twin(self) -> None:
        """A live twin keeps refreshing its retained ``online`` status; a dead one's status stops changing."""
        probe = Subscriber(self.config.broker_url, [self._status_topic], client_id=f"probe-{self.boot_id}")
        try:
            probe.wait_subscribed()
            time.sleep(RETAINED_WAIT_S)  # the retained status follows the subscription
            if not self._twin_statuses(probe):
                return  # nobody, or a daemon that said offline
            deadline = time.monotonic() + TWIN_HEARTBEATS * self.config.heartbeat
            while time.monotonic() < deadline:
                if len(self._twin_statuses(probe)) >= 2:
                    raise ShoeAlreadyOnlineError(
                        f"shoe {self.config.shoe_id} is already online at table {self.config.table} "
                        "(another daemon keeps refreshing its status): stop that one first"
                    )
                time.sleep(min(0.05, self.config.heartbeat / 4))
        finally:
            probe.close()

    def _twin_statuses(self, probe: Subscriber) -> set[str]:
        """The heartbeats (their ``ts``) of another live daemon of this shoe; empty if the last word was offline."""
        beats: set[str] = set()
        for message in list(probe.messages):
            try:
                status = decode(ShoeStatus, bytes(message.payload))
            except MessageError:
                continue
            if status.shoe_id == self.config.shoe_id and status.boot_id != self.boot_id:
                beats = beats | {status.ts} if status.state == "online" else set()
        return beats

    def _publish_status(self) -> None:
        self.client.publish(self._status_topic, self._status("online"), qos=1, retain=True)

    def _status(self, state: str) -> bytes:
        return encode(
            ShoeStatus(
                shoe_id=self.config.shoe_id, boot_id=self.boot_id, state=state,  # type: ignore[arg-type]
                device=self.device_state, last_seq=self.outbox.last_seq, first_seq=self.outbox.first_seq,  # type: ignore[arg-type]
                ts=self._now(),
            )
        )  # fmt: skip

    def _alarm(self, kind: str, code: str = "", text: str = "", raw: bytes = b"") -> None:
        self.counters.alarms += 1
        metrics.SHOE_ALARMS.labels(self.config.shoe_id, kind).inc()
        alarm = ShoeAlarm(
            shoe_id=self.config.shoe_id, boot_id=self.boot_id, kind=kind,  # type: ignore[arg-type]
            after_seq=self.outbox.last_seq, code=code, text=text, ts=self._now(), video_tc=self.video.timecode(),
            raw=_text(raw),
        )  # fmt: skip
        self.client.publish(self._alarms_topic, self._sealed(alarm), qos=1)

    def _sealed(self, message: ShoeMessage | ShoeAlarm) -> bytes:
        """The message as sent: signed with the shoe's key when it has one (the controller checks it)."""
        payload = encode(message)
        return payload if self.config.key is None else sign(payload, self.config.key)

    # ---- stamps -------------------------------------------------------------------------

    def _stamp(self, seq: int, deck: int, seen_at: float | None = None) -> StampFields:
        """``seen_at``: when the card was read (a camera frame's time), if not now."""
        moment = self.clock() if seen_at is None else seen_at
        return StampFields(
            shoe_id=self.config.shoe_id,
            boot_id=self.boot_id,
            seq=seq,
            deck=deck,
            boot_seq=self.boot_seq,
            ts=datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds"),
            video_tc=self.video.timecode(moment),
        )

    def _now(self) -> str:
        return datetime.fromtimestamp(self.clock(), UTC).isoformat(timespec="milliseconds")


def _text(raw: bytes) -> str:
    return raw.decode("ascii", "backslashreplace")[:256]
