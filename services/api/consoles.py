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

log = logging.getLogger("studio.api")


class DealerViews:
    """The latest dealer view per table, with a version that grows on every change."""

    def __init__(self, url: str) -> None:
        self._lock = threading.Lock()
        self._views: dict[str, tuple[int, dict[str, Any]]] = {}
        self._version = 0
        self.subscribed = threading.Event()
        self.client = make_client("")
        self.client.on_connect = lambda client, *_: client.subscribe(topics.every_round_dealer(), qos=1)
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = self._on_message
        connect(self.client, url)

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        try:
            table = topics.table_of(message.topic)
            view = json.loads(message.payload)
            if not isinstance(view, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            log.warning("ignored a dealer view on %s: %s", message.topic, error)
            return
        with self._lock:
            self._version += 1
            self._views[table] = (self._version, view)

    def latest(self, table: str) -> tuple[int, dict[str, Any]] | None:
        """``(version, view)`` of the table's last dealer view; None before the controller published one."""
        with self._lock:
            return self._views.get(table)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
