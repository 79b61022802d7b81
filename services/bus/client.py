"""A paho-mqtt 2 client set up the studio's way: MQTT 3.1.1, clean sessions, automatic reconnect.

Delivery guarantees come from our own outbox and de-duplication, not from broker sessions, so
a clean session is the honest choice: nothing of value lives only in the broker. paho keeps
retrying a login the broker refused, silently: ``confirm_login`` asks once and says so.
"""

from __future__ import annotations

import threading
import time
import uuid

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from services.bus.broker import credentials, host_port, without_login
from services.bus.errors import BusError

LOGIN_POLL_S = 0.05  # how often a wait for the broker's answer looks at its stop event


def make_client(client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True)
    client.reconnect_delay_set(min_delay=1, max_delay=4)
    return client


def connect(client: mqtt.Client, url: str, keepalive: int = 10) -> None:
    """Connect in the background: paho's loop thread keeps reconnecting until ``loop_stop``."""
    host, port = host_port(url)
    login = credentials(url)
    if login is not None:
        client.username_pw_set(*login)
    client.connect_async(host, port, keepalive=keepalive)
    client.loop_start()


class LoginRefusedError(BusError):
    """The broker answered a login with a refusal (a wrong password, a user it does not know, one not allowed)."""

    code = "login_refused"


def confirm_login(url: str, stop: threading.Event, client_id: str) -> bool:
    """Log in to the broker at ``url`` with its credentials, as ``client_id`` (never a client id in use: the broker
    would disconnect that client), and wait for its answer: True when it accepted the login, False when ``stop``
    came first. ``LoginRefusedError`` when it refused. A broker not reachable yet is waited for, as before."""
    answered = threading.Event()
    refusals: list[str] = []

    def on_connect(_client: mqtt.Client, _data: object, _flags: object, reason: object, _p: object) -> None:
        if getattr(reason, "is_failure", False):
            refusals.append(str(reason))
        answered.set()

    client = make_client(client_id)
    client.on_connect = on_connect
    connect(client, url)
    try:
        while not answered.wait(LOGIN_POLL_S):
            if stop.is_set():
                return False
    finally:
        client.disconnect()
        client.loop_stop()
    if refusals:
        login = credentials(url)
        user = f"of {login[0]}" if login else "without a user name"
        raise LoginRefusedError(
            f"the broker at {without_login(url)} refused the login {user} ({refusals[0]}): check the password "
            "(the broker's passwords file, or the URL given)"
        )
    return True


class Subscriber:
    """A client that collects messages of some topics (tools, tests, benchmarks)."""

    def __init__(self, url: str, topics: list[str], client_id: str = "") -> None:
        self.messages: list[mqtt.MQTTMessage] = []
        self.changed = threading.Condition()
        self.subscribed = threading.Event()
        self.client = make_client(client_id or f"subscriber-{uuid.uuid4().hex[:12]}")
        self.topics = topics
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *_args: self.subscribed.set()
        self.client.on_message = self._on_message
        connect(self.client, url)

    def _on_connect(self, client: mqtt.Client, _data: object, _flags: object, reason: object, _p: object) -> None:
        client.subscribe([(topic, 1) for topic in self.topics])

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        with self.changed:
            self.messages.append(message)
            self.changed.notify_all()

    def wait_subscribed(self, timeout: float = 10) -> None:
        if not self.subscribed.wait(timeout):
            raise TimeoutError(f"no SUBACK within {timeout} s")

    def wait_for(self, count: int, timeout: float = 10) -> list[mqtt.MQTTMessage]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.messages)} of {count} messages within {timeout} s")
                self.changed.wait(left)
            return list(self.messages)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
