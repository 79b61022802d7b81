"""The dealer console feed inside the API: the controller's retained ``…/round/dealer`` views, relayed.

The controller is the only process that knows what the dealer must deal next (and which alerts are
open); it publishes that view, retained, on each table's dealer topic. The API keeps the latest view
of every table from one wildcard subscription and streams it to logged-in dealers and operators, so
a browser never needs broker credentials. The view carries a face-down card only as ``received``.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import paho.mqtt.client as mqtt

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import ControllerStatus, decode

log = logging.getLogger("studio.api")


class DealerViews:
    """The latest dealer view per table, and whether the controller writing the table is online.

    A controller's status is retained with an ``offline`` last will, so when one dies the view
    says ``"controller": "offline"`` at once and the console tells the dealer to stop.
    """

    def __init__(self, url: str) -> None:
        self._lock = threading.Lock()
        self._views: dict[str, dict[str, Any]] = {}
        self._controllers: dict[str, tuple[str, list[str]]] = {}  # controller → (state, its tables)
        self.subscribed = threading.Event()
        self.client = make_client("")
        self.client.on_connect = lambda client, *_: client.subscribe(
            [(topics.every_round_dealer(), 1), (topics.every_controller_status(), 1)]
        )
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = self._on_message
        connect(self.client, url)

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        if not message.payload:  # a retained message cleared
            if mqtt.topic_matches_sub(topics.every_controller_status(), message.topic):
                with self._lock:
                    self._controllers.pop(message.topic.split("/")[-2], None)
            return
        try:
            if mqtt.topic_matches_sub(topics.every_controller_status(), message.topic):
                status = decode(ControllerStatus, bytes(message.payload))
                with self._lock:
                    self._controllers[status.controller] = (status.state, status.tables)
                return
            table = topics.table_of(message.topic)
            view = json.loads(message.payload)
            if not isinstance(view, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:  # MessageError too
            log.warning("ignored a message on %s: %s", message.topic, error)
            return
        with self._lock:
            self._views[table] = view

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
