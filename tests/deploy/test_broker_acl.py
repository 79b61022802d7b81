"""The deploy/ broker configuration on a private Mosquitto: each role reads only what it may."""

from __future__ import annotations

import getpass
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from services.bus import topics
from services.bus.client import Subscriber, connect, make_client
from tests.conftest import free_port
from tests.support import wait_until

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
pytestmark = [
    pytest.mark.broker,
    pytest.mark.skipif(
        not (Path(MOSQUITTO).exists() and shutil.which("mosquitto_passwd")),
        reason="needs the mosquitto package (CI installs it; the embedded broker has no ACLs)",
    ),
]


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """A Mosquitto with the deploy ACL and freshly generated role passwords: (port, role → password)."""
    passwords = subprocess.run(
        [str(DEPLOY / "make-passwords"), str(tmp_path / "passwd")], check=True, capture_output=True, text=True
    ).stdout
    roles = dict(line.split() for line in passwords.splitlines())
    port = free_port()
    config = tmp_path / "mosquitto.conf"
    config.write_text(
        f"per_listener_settings false\nallow_anonymous false\npassword_file {tmp_path / 'passwd'}\n"
        f"acl_file {DEPLOY / 'acl'}\nlistener {port} 127.0.0.1\npersistence false\n"
        f"user {getpass.getuser()}\n"  # run as whoever runs the tests, who owns the password file
    )
    process = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _listening(port), 10, "mosquitto to listen")
        yield port, roles
    finally:
        process.terminate()
        process.wait(timeout=10)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def url(port: int, roles: dict[str, str], role: str) -> str:
    return f"mqtt://{role}:{roles[role]}@127.0.0.1:{port}"


def publisher(address: str) -> mqtt.Client:
    client = make_client(f"pub-{time.monotonic_ns()}")
    connect(client, address)
    wait_until(client.is_connected, 10, "the publisher's connection")
    return client


def test_only_the_controller_reads_raw_shoe_cards_and_the_public_reads_only_the_public_state(
    secured: tuple[int, dict[str, str]],
) -> None:
    port, roles = secured
    everything = "studio/v1/#"
    roles_reading = ("controller", "public", "dealer", "api")
    readers = {role: Subscriber(url(port, roles, role), [everything]) for role in roles_reading}
    for reader in readers.values():
        reader.wait_subscribed()
    shoe, controller = publisher(url(port, roles, "shoe")), publisher(url(port, roles, "controller"))
    shoe.publish(topics.shoe_cards("t1"), b'{"card": "KD"}', qos=1).wait_for_publish(5)
    controller.publish(topics.round_state("t1"), b'{"phase": "dealing"}', qos=1).wait_for_publish(5)
    controller.publish(topics.round_dealer("t1"), b'{"phase": "dealing"}', qos=1).wait_for_publish(5)
    controller.publish(topics.controller_status("c1"), b'{"state": "online"}', qos=1).wait_for_publish(5)
    wait_until(lambda: len(readers["controller"].messages) >= 4, 10, "the controller to receive all four")
    time.sleep(0.3)  # give the broker time to (not) deliver the rest
    seen = {role: sorted(m.topic.rsplit("/", 2)[-2] + "/" + m.topic.rsplit("/", 1)[-1] for m in r.messages)
            for role, r in readers.items()}  # fmt: skip
    assert seen["controller"] == ["c1/status", "round/dealer", "round/state", "shoe/cards"]
    assert seen["dealer"] == ["c1/status", "round/dealer", "round/state"]
    assert seen["api"] == ["c1/status", "round/dealer", "round/state"]  # it relays the dealer view to staff
    assert seen["public"] == ["round/state"]
    for client in (shoe, controller):
        client.disconnect()
        client.loop_stop()
    for reader in readers.values():
        reader.close()


def test_a_player_cannot_publish_cards_and_anonymous_clients_are_refused(secured: tuple[int, dict[str, str]]) -> None:
    port, roles = secured
    reader = Subscriber(url(port, roles, "controller"), [topics.shoe_cards("t1")])
    reader.wait_subscribed()
    forger = publisher(url(port, roles, "public"))
    forger.publish(topics.shoe_cards("t1"), b'{"card": "AS"}', qos=1)
    time.sleep(0.5)
    assert reader.messages == []
    anonymous = make_client("anonymous")
    connect(anonymous, f"mqtt://127.0.0.1:{port}")
    time.sleep(0.5)
    assert not anonymous.is_connected()
    for client in (forger, anonymous):
        client.disconnect()
        client.loop_stop()
    reader.close()
