"""The API's one broker subscription: the controllers' retained round views, fanned out to browsers.

The controller is the only process that knows a round's public state and what the dealer must deal
next (and which alerts are open); it publishes both, retained, on each table's ``…/round/state`` and
``…/round/dealer``. ``ViewRelay`` subscribes to every table's views and every controller's status
with one wildcard subscription each and publishes them into two in-memory hubs: ``state`` for the
public stream (overlay, players, public API) and ``dealer`` for the console. A browser never needs
broker credentials, and no viewer causes a database read. The dealer view carries a face-down card
only as ``received``.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import paho.mqtt.client as mqtt

from services.api.fanout import Hub
from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import ControllerStatus, DealerView, RoundView, decode

log = logging.getLogger("studio.api")
RECHECK_S = 2.0  # a dealer stream re-checks its token this often (and sends a heartbeat)


class ViewRelay:
    """The latest views per table, and whether the controller writing the table is online.

    A controller's status is retained with an ``offline`` last will, so when one dies the dealer
    view says ``"controller": "offline"`` at once and the console tells the dealer to stop.
    """

    def __init__(self, url: str) -> None:
        self.state = Hub()
        self.dealer = Hub(heartbeat_s=RECHECK_S, name="dealer")  # a dealer's token is checked again at each heartbeat
        self._lock = threading.Lock()
        self._views: dict[str, dict[str, Any]] = {}
        self._controllers: dict[str, tuple[str, list[str]]] = {}  # controller → (state, its tables)
        self.subscribed = threading.Event()
        self.client = make_client("")
        self.client.on_connect = lambda client, *_: client.subscribe(
            [
                (topics.every_round_state(), 1),
                (topics.every_round_dealer(), 1),
                (topics.every_controller_status(), 1),
            ]
        )
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = self._on_message
        connect(self.client, url)

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        is_status = mqtt.topic_matches_sub(topics.every_controller_status(), message.topic)
        if not message.payload:  # a retained message cleared
            if is_status:
                self._controller(message.topic.split("/")[-2], None)
            return
        try:
            if is_status:
                status = decode(ControllerStatus, bytes(message.payload))
                self._controller(status.controller, (status.state, status.tables))
                return
            table = topics.table_of(message.topic)
            public = mqtt.topic_matches_sub(topics.every_round_state(), message.topic)
            if not public and not mqtt.topic_matches_sub(topics.every_round_dealer(), message.topic):
                return  # not subscribed to (a broker may deliver retained messages of other topics): not a view
            view = json.loads(message.payload)
            if not isinstance(view, dict):
                raise ValueError("not a JSON object")
            checked = (RoundView if public else DealerView).model_validate(view)
            if checked.table_id != table:
                raise ValueError(f"a view of table {checked.table_id!r} on table {table!r}'s topic")
        except ValueError as error:  # MessageError too
            log.warning("ignored a message on %s: %s", message.topic, error)
            return
        if public:
            self.state.publish(table, view)
            return
        with self._lock:
            self._views[table] = view
        self._republish([table])

    def _controller(self, name: str, status: tuple[str, list[str]] | None) -> None:
        with self._lock:
            before = self._controllers.pop(name, ("", []))[1]
            if status is not None:
                self._controllers[name] = status
        self._republish(set(before) | set(status[1] if status else []))

    def _republish(self, tables: Any) -> None:
        for table in tables:
            value = self.latest(table)
            if value is not None:
                self.dealer.publish(table, value)

    def latest(self, table: str) -> dict[str, Any] | None:
        """The table's last dealer view with ``controller`` online/offline/unknown; None before the first."""
        with self._lock:
            view = self._views.get(table)
            states = {state for state, tables in self._controllers.values() if table in tables}
        if view is None:
            return None
        # a table moved to another controller is online while any controller listing it is
        state = "online" if "online" in states else "offline" if states else "unknown"
        return view | {"controller": state}

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
