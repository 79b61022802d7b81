"""The controller process: many tables, one writer each, fed from MQTT, publishing round views.

All inputs — shoe messages (through each table's exactly-once ``ShoeFeedClient``), shoe alarms,
notifications on ``…/round/commands`` — go into one queue that a single worker drains, and the
same worker ticks every table's timers between messages. One thread writes, so a table never
sees two of its inputs at once; tables share the thread, which is plenty for dozens of tables.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import paho.mqtt.client as mqtt

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.feed import ShoeEvent, ShoeFeedClient
from services.bus.messages import (
    ControllerStatus,
    DealerView,
    MessageError,
    RoundChanged,
    RoundView,
    ShoeAlarm,
    decode,
    encode,
)
from services.controller.leases import RENEW_S, TTL_S, Leases, owner_name
from services.controller.table import ControllerSettings, TableController, reread_moved
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
    kind: str  # shoe | alarm | command
    payload: Any


def controller_name(tables: Iterable[str]) -> str:
    """The process's MQTT client id and status topic name: readable, and unique per set of tables."""
    joined = "-".join(sorted(tables))
    if len(joined) <= 40:
        return f"controller-{joined}"
    return f"controller-{joined[:31]}-{hashlib.sha1(joined.encode()).hexdigest()[:8]}"


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
    ) -> None:
        """``keys``: the shoes' signing keys; a table whose shoe has keys deals only messages signed by one.

        ``standby``: when another controller writes a table, wait for its lease to run out (else refuse).
        """
        self.service = service
        self.standby = standby
        self.keys = keys or KeyRing()
        self.url = url
        self.clock = clock or SystemClock()
        self.inbox: queue.Queue[Inbound] = queue.Queue()
        self.name = controller_name(tables)
        self.client = make_client(self.name)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.tables = {
            table: TableController(table, service, settings, publish=self._publisher(table))
            for table, settings in tables.items()
        }
        # if this process dies, the broker tells the dealer consoles: stop dealing at these tables
        self.client.will_set(topics.controller_status(self.name), self._status("offline"), qos=1, retain=True)
        self.feeds: list[ShoeFeedClient] = []
        self.malformed = 0
        self.leases = Leases(service.sessions, owner_name(self.name), self.clock, timedelta(seconds=lease_ttl))
        self.lost: dict[str, str] = {}  # tables whose lease this controller lost (it stopped): why

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
        """Take every table's lease (``LeaseHeldError`` if a live controller writes one and this is no standby),
        then drive the tables until ``stop`` — or until a lease is lost (``lost`` says which and why)."""
        for table in self.tables:
            if not self.leases.acquire(table, self.standby, stop):
                return  # stopped while waiting as a standby
        self.service.fence = self.leases.fence
        try:
            self._drive(stop)
        finally:
            self.lost = dict(self.leases.lost)
            self.leases.release()

    def _drive(self, stop: threading.Event) -> None:
        connect(self.client, self.url)
        for table, controller in self.tables.items():
            controller.recover()
            self.feeds.append(
                ShoeFeedClient(
                    self.url, table, controller.settings.shoe_id,
                    lambda event, table=table: self.inbox.put(Inbound(table, "shoe", event)),  # type: ignore[misc]
                    next_seq=controller.next_seq(),
                    untrusted=lambda payload, table=table: self._untrusted(table, payload),  # type: ignore[misc]
                    refuse=lambda event, why, table=table: self.inbox.put(  # type: ignore[misc]
                        Inbound(table, "untrusted", (event, why))
                    ),
                )
            )  # fmt: skip
            if not self.keys.keys_for(controller.settings.shoe_id) and not self.service.deals_online(table):
                controller.unsigned_shoe()
        reread_at = renew_at = self.clock.now()
        try:
            while not stop.is_set():
                try:
                    item = self.inbox.get(timeout=self._wait())
                except queue.Empty:
                    item = None
                if item is not None:
                    self._handle(item)
                now = self.clock.now()
                if now >= renew_at:
                    renew_at = now + timedelta(seconds=RENEW_S)
                    self.leases.renew()
                if self.leases.lost:  # another controller writes a table of ours now: stop writing any
                    log.error("lost the lease of %s: stopping", ", ".join(sorted(self.leases.lost)))
                    break
                if now >= reread_at:  # an operator or a player may have moved a round through the API
                    reread_at = now + REREAD
                    self._reread()
                for controller in self.tables.values():
                    controller.tick(now)
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

    def _wait(self) -> float:
        """Seconds until the earliest deadline of any table (at most ``TICK_SECONDS``)."""
        deadlines = [d for d in (c.next_deadline() for c in self.tables.values()) if d is not None]
        if not deadlines:
            return TICK_SECONDS
        left = (min(deadlines) - self.clock.now()).total_seconds()
        return min(TICK_SECONDS, max(MIN_WAIT_SECONDS, left))

    def _reread(self) -> None:
        try:
            reread_moved(self.service, self.tables)
        except Exception:  # the database is away: the next pass tries again
            log.exception("could not read the tables' rounds")

    def _handle(self, item: Inbound) -> None:
        controller = self.tables[item.table]
        try:
            if item.kind == "shoe":
                event: ShoeEvent = item.payload
                controller.on_shoe(event)
            elif item.kind == "alarm":
                controller.on_alarm(item.payload)
            elif item.kind == "untrusted":
                controller.on_untrusted(*item.payload)
            else:
                controller.refresh()
        except Exception:  # one bad input must not stop every table: log it, alert, carry on
            log.exception("table %s: failed to handle %s", item.table, item.kind)
            controller.refresh()

    def _shoe(self, table: str) -> str:
        return self.tables[table].settings.shoe_id

    def _untrusted(self, table: str, payload: bytes) -> str | None:
        """Why a message of the table's shoe is not to be trusted, or None (a shoe without keys is trusted)."""
        keys = self.keys.keys_for(self._shoe(table))
        return check(payload, keys) if keys else None

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, _reason: object, _p: object) -> None:
        subscriptions = []
        for table in self.tables:
            subscriptions += [(topics.shoe_alarms(table), 1), (topics.round_commands(table), 1)]
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
            try:
                alarm = decode(ShoeAlarm, bytes(message.payload))
                why = self._untrusted(table, bytes(message.payload)) if alarm.shoe_id == self._shoe(table) else None
                self.inbox.put(
                    Inbound(table, "alarm", alarm) if why is None else Inbound(table, "untrusted", (alarm, why))
                )
            except MessageError as error:
                self.malformed += 1
                log.warning("ignored an alarm: %s", error)
        else:
            try:
                decode(RoundChanged, bytes(message.payload))
            except MessageError as error:
                self.malformed += 1
                log.warning("ignored a round command: %s", error)
                return
            self.inbox.put(Inbound(table, "command", None))
