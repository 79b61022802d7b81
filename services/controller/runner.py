"""The controller process: many tables, one writer each, fed from MQTT, publishing round views.

All inputs — shoe messages (through each table's exactly-once ``ShoeFeedClient``), shoe alarms,
notifications on ``…/round/commands`` — go into one queue that a single worker drains, and the
same worker ticks every table's timers between messages. One thread writes, so a table never
sees two of its inputs at once; tables share the thread, which is plenty for dozens of tables.

What the worker does with an input and between inputs is the ``Writer``, which has no transport:
the MQTT ``Controller`` drives one, and the studio simulation (``services.sim``) drives the same
code under its simulated clock and network.

It fails closed: a table whose shoe it holds no signing key for is refused at construction
(``UnsignedShoeError``), since any client of the broker could deal there, unless ``allow_unsigned``
(tests and benchmarks); a room dealt online has no shoe. The ``Controller`` confirms the broker
accepts its login before it takes any table's lease: a wrong password must not lock the real
controller out of its tables.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Literal

import paho.mqtt.client as mqtt
from sqlalchemy.exc import DBAPIError

from services.bus import topics
from services.bus.client import confirm_login, connect, make_client
from services.bus.feed import OutOfSequence, ShoeEvent, ShoeFeedClient, ShoeInlet
from services.bus.messages import (
    ControllerStatus,
    DealerView,
    M,
    MessageError,
    RoundChanged,
    RoundView,
    ShoeAlarm,
    ShoeCard,
    ShoeStatus,
    decode,
    encode,
)
from services.controller.errors import UnsignedShoeError
from services.controller.leases import RENEW_S, TTL_S, Leases, owner_name
from services.controller.table import RETRY_AFTER, ControllerSettings, Publish, TableController, reread_moved
from services.rounds.clock import Clock, SystemClock
from services.rounds.service import RoundService
from services.shoe.signing import KeyRing, check

log = logging.getLogger("studio.controller")
TICK_SECONDS = 0.05  # the longest the loop sleeps: a due deadline wakes it sooner
MIN_WAIT_SECONDS = 0.002  # a deadline that stays due (the database refuses) must not spin the loop
REREAD = timedelta(seconds=1)


@dataclass(frozen=True)
class Inbound:
    table: str
    kind: str  # shoe | alarm | command | untrusted | sighting | camera_status
    payload: Any


def controller_name(tables: Iterable[str]) -> str:
    """The process's MQTT client id and status topic name: readable, and unique per set of tables."""
    joined = "-".join(sorted(tables))
    if len(joined) <= 40:
        return f"controller-{joined}"
    return f"controller-{joined[:31]}-{hashlib.sha1(joined.encode()).hexdigest()[:8]}"


def _short(error: Exception) -> str:
    """An error on one log line."""
    return " ".join(str(error).split())[:200]


class Writer:
    """A controller's tables, with no transport: each input handled, leases, re-reads and timers in between.

    Call ``start`` once the tables' leases are held, then ``handle`` each input and ``step`` after
    each (and whenever ``wait`` runs out). A step that the database refused is not lost: a shoe
    message whose handling failed on a database error is taken again, in order, once the table
    has been rebuilt from the database (``recover``), and a refused tick is tried again later.
    """

    def __init__(
        self,
        service: RoundService,
        tables: dict[str, ControllerSettings],
        publisher: Callable[[str], Publish],
        leases: Leases,
        clock: Clock,
        keys: KeyRing,
        allow_unsigned: bool = False,
    ) -> None:
        """``allow_unsigned``: drive a table whose shoe has no key here (tests and benchmarks; said on its console).
        Without it such a table is refused: ``UnsignedShoeError``."""
        self.service, self.leases, self.clock, self.keys = service, leases, clock, keys
        self.allow_unsigned = allow_unsigned
        self.tables = {
            table: TableController(table, service, settings, publish=publisher(table))
            for table, settings in tables.items()
        }
        self._refuse_unsigned()
        self.malformed = 0
        self.failed: deque[Inbound] = deque()  # inputs a database failure stopped: taken again first, in order
        self._stale: set[str] = set()  # tables whose memory may be ahead of the database: recover first
        self._retry_at: datetime | None = None
        self._reread_at = self._renew_at = clock.now()
        self._due: dict[str, datetime | None] = {}  # each table's next deadline, as of its last input or tick
        self._touched: set[str] = set(self.tables)  # a step ticks only these and the tables due (not all 50)

    def _unsigned(self) -> list[tuple[str, str]]:
        """The tables (with their shoe) whose shoe has no key here; a room dealt online has no shoe."""
        return [
            (table, controller.settings.shoe_id)
            for table, controller in self.tables.items()
            if not self.keys.keys_for(controller.settings.shoe_id) and not self.service.deals_online(table)
        ]

    def _refuse_unsigned(self) -> list[tuple[str, str]]:
        unsigned = self._unsigned()
        if unsigned and not self.allow_unsigned:
            raise UnsignedShoeError(unsigned, self.keys)
        return unsigned

    def start(self) -> None:
        """After the leases are taken: fence every write, rebuild each table from the database (a key removed since
        the construction refuses the start too)."""
        unsigned = dict(self._refuse_unsigned())
        self.service.fence = self.leases
        for table, controller in self.tables.items():
            controller.recover()
            if table in unsigned:
                controller.unsigned()
            camera = controller.settings.camera_id
            if camera and not self.keys.keys_for(camera):
                controller.unsigned(camera, "any client of the broker could confirm its cards")

    def inlet(self, table: str, clock: Callable[[], float] | None = None) -> ShoeInlet:
        """The table's shoe inlet, resuming where its journal says (``TableController.feed_start``)."""
        controller = self.tables[table]
        start = controller.feed_start()
        untrusted = partial(self.untrusted, table)
        shoe = controller.settings.shoe_id
        return ShoeInlet(shoe, start.next_seq, untrusted, clock or time.monotonic, boot=start.boot, newest=start.newest)

    def untrusted(self, table: str, payload: bytes) -> str | None:
        """Why a message of the table's shoe is not to be trusted, or None (a shoe without keys is trusted: a table
        driven only with ``allow_unsigned``)."""
        keys = self.keys.keys_for(self.tables[table].settings.shoe_id)
        return check(payload, keys) if keys else None

    def alarm(self, table: str, payload: bytes) -> Inbound | None:
        """A payload on the table's alarm topic as an input (None: malformed, counted and dropped)."""
        alarm = self.decoded(ShoeAlarm, payload, "an alarm")
        if alarm is None:
            return None
        why = self.untrusted(table, payload) if alarm.shoe_id == self.tables[table].settings.shoe_id else None
        return Inbound(table, "alarm", alarm) if why is None else Inbound(table, "untrusted", (alarm, why))

    def sighting(self, table: str, payload: bytes) -> Inbound | None:
        """A payload on the table's camera topic as an input: a card the overhead camera saw (None: malformed, or
        not signed by the table's camera when it has keys — counted, logged and dropped)."""
        seen = self.decoded(ShoeCard, payload, "a camera sighting")
        if seen is None:
            return None
        camera = self.tables[table].settings.camera_id
        keys = self.keys.keys_for(camera) if camera else None
        why = check(payload, keys) if keys else None
        if why is not None:
            self.malformed += 1
            log.warning("table %s: a sighting in the name of camera %s refused: %s", table, seen.shoe_id, why)
            return None
        return Inbound(table, "sighting", seen)

    def command(self, table: str, payload: bytes) -> Inbound | None:
        """A payload on the table's ``round/commands`` topic as an input (None: malformed)."""
        changed = self.decoded(RoundChanged, payload, "a round command")
        return None if changed is None else Inbound(table, "command", None)

    def decoded(self, kind: type[M], payload: bytes, what: str) -> M | None:
        """The message, or None: malformed, counted and logged."""
        try:
            return decode(kind, payload)
        except MessageError as error:
            self.malformed += 1
            log.warning("ignored %s: %s", what, error)
            return None

    def handle(self, item: Inbound) -> None:
        """One input; behind an earlier one the database refused, it waits its turn."""
        if self.failed:
            self.failed.append(item)
            self._retry_failed()
            return
        self._take(item)

    def _take(self, item: Inbound) -> bool:
        controller = self.tables[item.table]
        self._touched.add(item.table)
        try:
            if item.table in self._stale:
                controller.recover()
                self._stale.discard(item.table)
            if item.kind == "shoe":
                event: ShoeEvent = item.payload
                controller.on_shoe(event)
            elif item.kind == "alarm":
                controller.on_alarm(item.payload)
            elif item.kind == "untrusted":
                message, why = item.payload
                if isinstance(why, OutOfSequence):  # signed by the shoe, but out of its sequence
                    controller.on_out_of_sequence(message, why.why)
                else:
                    controller.on_untrusted(message, why)
            elif item.kind == "sighting":
                controller.on_sighting(item.payload)
            elif item.kind == "camera_status":
                controller.on_camera_status(item.payload)
            else:
                controller.refresh()
        except DBAPIError as error:  # the database is away: this input is taken again once it is back
            log.warning("table %s: the database refused %s (%s); kept to retry", item.table, item.kind, _short(error))
            self._stale.add(item.table)
            self.failed.appendleft(item)
            self._retry_at = self.clock.now() + RETRY_AFTER
            return False
        except Exception:  # one bad input must not stop every table: log it, carry on
            log.exception("table %s: failed to handle %s", item.table, item.kind)
            self._stale.add(item.table)
        return True

    def _retry_failed(self) -> None:
        if self._retry_at is not None and self.clock.now() < self._retry_at:
            return
        self._retry_at = None
        while self.failed:
            if not self._take(self.failed.popleft()):
                return

    def step(self) -> bool:
        """Between inputs: inputs to retry, leases to renew, rounds moved elsewhere, timers; False: a lease is lost
        (stop writing every table)."""
        now = self.clock.now()
        if self.failed:
            self._retry_failed()
        elif self._retry_at is not None and now >= self._retry_at:
            self._retry_at = None  # a refused timed step: this step's ticks try it again
        if now >= self._renew_at:
            self._renew_at = now + timedelta(seconds=RENEW_S)
            self.leases.renew()
        if self.leases.lost:  # another controller writes a table of ours now: stop writing any
            log.error("lost the lease of %s: stopping", ", ".join(sorted(self.leases.lost)))
            return False
        if now >= self._reread_at:  # an operator or a player may have moved a round through the API
            self._reread_at = now + REREAD
            self._reread()
            self._touched.update(self.tables)
        for table, controller in self.tables.items():
            due = self._due.get(table)
            if table not in self._touched and table not in self._stale and (due is None or now < due):
                continue
            try:
                if table in self._stale:
                    controller.recover()
                    self._stale.discard(table)
                controller.tick(now)
            except DBAPIError as error:  # tried again at its next deadline (or the next retry)
                log.warning("table %s: the database refused a timed step: %s", table, _short(error))
                self._stale.add(table)
                self._retry_at = now + RETRY_AFTER
            self._due[table] = controller.next_deadline()
        self._touched.clear()
        return True

    def next_deadline(self) -> datetime:
        """When ``step`` next has something to do (now, when an input moved a table since the last step)."""
        if self._touched:
            return self.clock.now()
        deadlines = [d for d in self._due.values() if d is not None]
        deadlines += [self._renew_at, self._reread_at]
        if self._retry_at is not None:
            deadlines.append(self._retry_at)
        return min(deadlines)

    def wait(self) -> float:
        """Seconds until ``step`` next has something to do (at most ``TICK_SECONDS``)."""
        left = (self.next_deadline() - self.clock.now()).total_seconds()
        return min(TICK_SECONDS, max(MIN_WAIT_SECONDS, left))

    def _reread(self) -> None:
        try:
            reread_moved(self.service, self.tables)
        except DBAPIError as error:  # the database is away: the next pass tries again (one line, not a traceback)
            log.warning("could not read the tables' rounds: the database refused (%s)", _short(error))
        except Exception:
            log.exception("could not read the tables' rounds")


class Controller:
    def __init__(
        self,
        service: RoundService,
        url: str,
        tables: dict[str, ControllerSettings],
        clock: Clock | None = None,
        keys: KeyRing | None = None,
        standby: bool = False,
        lease_ttl: float = TTL_S,
        allow_unsigned: bool = False,
    ) -> None:
        """``keys``: the shoes' signing keys; a table deals only messages signed by one of its shoe's keys, and a
        table whose shoe has none is refused (``UnsignedShoeError``) unless ``allow_unsigned`` (tests, benchmarks).

        ``standby``: when another controller writes a table, wait for its lease to run out (else refuse).
        """
        self.service = service
        self.standby = standby
        self.url = url
        self.clock = clock or SystemClock()
        self.inbox: queue.Queue[Inbound] = queue.Queue()
        self.name = controller_name(tables)
        self.client = make_client(self.name)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.leases = Leases(service.sessions, owner_name(self.name), self.clock, timedelta(seconds=lease_ttl))
        self.writer = Writer(
            service, tables, self._publisher, self.leases, self.clock, keys or KeyRing(), allow_unsigned
        )
        self.tables = self.writer.tables
        # if this process dies, the broker tells the dealer consoles: stop dealing at these tables
        self.client.will_set(topics.controller_status(self.name), self._status("offline"), qos=1, retain=True)
        self.feeds: list[ShoeFeedClient] = []
        self.lost: dict[str, str] = {}  # tables whose lease this controller lost (it stopped): why
        self.driving = threading.Event()  # set once every table is rebuilt and its shoe's feed subscribed

    @property
    def malformed(self) -> int:
        return self.writer.malformed

    def _status(self, state: Literal["online", "offline"]) -> bytes:
        status = ControllerStatus(
            controller=self.name, state=state, tables=sorted(self.tables), ts=datetime.now(UTC).isoformat()
        )
        return encode(status)

    def _publisher(self, table: str) -> Callable[[str, dict[str, Any]], None]:
        names = {"state": topics.round_state(table), "dealer": topics.round_dealer(table)}
        schemas: dict[str, type[RoundView]] = {"state": RoundView, "dealer": DealerView}

        def publish(view: str, payload: dict[str, Any]) -> None:
            schemas[view].model_validate(payload)  # the topic's schema holds for what we send, too
            self.client.publish(names[view], json.dumps(payload, separators=(",", ":")), qos=1, retain=True)

        return publish

    def run(self, stop: threading.Event) -> None:
        """Confirm the broker accepts this controller's login (``LoginRefusedError`` if it refuses: before any lease
        is taken, so a wrong password locks no table), take every table's lease (``LeaseHeldError`` if a live
        controller writes one and this is no standby), then drive the tables until ``stop`` — or until a lease is
        lost (``lost`` says which and why). A broker not reachable yet is waited for."""
        if not confirm_login(self.url, stop, f"{self.name}-login-{uuid.uuid4().hex[:8]}"):
            return  # stopped while waiting for the broker
        try:
            for table in sorted(self.tables):  # one order for every controller: two never hold one each of a pair
                if not self.leases.acquire(table, self.standby, stop):
                    return  # stopped while waiting as a standby, or a table taken before was lost meanwhile
            self._drive(stop)
        finally:  # the leases taken are handed back: a refusal or a stop while waiting leaves none held
            self.lost = dict(self.leases.lost)
            self.leases.release()

    def _drive(self, stop: threading.Event) -> None:
        connect(self.client, self.url)
        self.writer.start()
        for table, controller in self.tables.items():
            start = controller.feed_start()
            self.feeds.append(
                ShoeFeedClient(
                    self.url, table, controller.settings.shoe_id,
                    lambda event, table=table: self.inbox.put(Inbound(table, "shoe", event)),  # type: ignore[misc]
                    next_seq=start.next_seq, untrusted=partial(self.writer.untrusted, table),
                    refuse=lambda event, why, table=table: self.inbox.put(  # type: ignore[misc]
                        Inbound(table, "untrusted", (event, why))
                    ),
                    boot=start.boot, newest=start.newest,
                )
            )  # fmt: skip
        self.driving.set()
        try:
            while not stop.is_set():
                try:
                    item = self.inbox.get(timeout=self.writer.wait())
                except queue.Empty:
                    item = None
                if item is not None:
                    self.writer.handle(item)
                if not self.writer.step():
                    break
        finally:
            for feed in self.feeds:
                feed.close()
            if self.client.is_connected():  # a clean stop says so itself (the will is for a crash)
                offline = self.client.publish(
                    topics.controller_status(self.name), self._status("offline"), qos=1, retain=True
                )
                offline.wait_for_publish(timeout=2)
            self.client.disconnect()
            self.client.loop_stop()

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, _reason: object, _p: object) -> None:
        subscriptions = []
        for table, controller in self.tables.items():
            subscriptions += [(topics.shoe_alarms(table), 1), (topics.round_commands(table), 1)]
            if controller.settings.camera_id:
                subscriptions += [(topics.camera_cards(table), 1), (topics.camera_status(table), 1)]
        client.subscribe(subscriptions)
        client.publish(topics.controller_status(self.name), self._status("online"), qos=1, retain=True)

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        try:
            table = topics.table_of(message.topic)
        except ValueError:
            table = ""
        if table not in self.tables:  # not ours (a broker may echo what this client itself published)
            return
        if message.topic == topics.shoe_alarms(table):
            item = self.writer.alarm(table, bytes(message.payload))
        elif message.topic == topics.camera_cards(table):
            item = self.writer.sighting(table, bytes(message.payload))
        elif message.topic == topics.camera_status(table):
            status = self.writer.decoded(ShoeStatus, bytes(message.payload), "a camera's status")
            item = None if status is None else Inbound(table, "camera_status", status)
        else:
            item = self.writer.command(table, bytes(message.payload))
        if item is not None:
            self.inbox.put(item)
