"""The studio's broker roles, on the embedded broker and on a private Mosquitto with the deploy/ configuration:
each role reads only what it may — retained messages included — and writes only where it may; no anonymous client."""

from __future__ import annotations

import getpass
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt
import pytest

from services.bus import topics
from services.bus.access import rules
from services.bus.broker import embedded_broker, host_port, role_url
from services.bus.client import Subscriber, connect, make_client
from tests.conftest import free_port
from tests.support import wait_until

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
pytestmark = [pytest.mark.broker]
HAS_MOSQUITTO = Path(MOSQUITTO).exists() and bool(shutil.which("mosquitto_passwd"))


@pytest.fixture(params=["embedded", "mosquitto"])
def secured(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """A broker with the studio's roles and freshly generated passwords: (port, role → password)."""
    if request.param == "embedded":
        with embedded_broker() as admin:
            _host, port = host_port(admin)
            yield port, {role: unquote(urlsplit(role_url(admin, role)).password or "") for role in rules()}
        return
    if not HAS_MOSQUITTO:
        pytest.skip("needs the mosquitto package (CI installs it)")
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


def test_only_the_controller_reads_raw_shoe_cards_and_sightings_and_the_public_reads_only_the_public_state(
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
    shoe.publish(topics.camera_cards("t1"), b'{"card": "9C"}', qos=1).wait_for_publish(5)  # a witness camera's
    controller.publish(topics.round_state("t1"), b'{"phase": "dealing"}', qos=1).wait_for_publish(5)
    controller.publish(topics.round_dealer("t1"), b'{"phase": "dealing"}', qos=1).wait_for_publish(5)
    controller.publish(topics.controller_status("c1"), b'{"state": "online"}', qos=1).wait_for_publish(5)
    wait_until(lambda: len(readers["controller"].messages) >= 5, 10, "the controller to receive all five")
    time.sleep(0.3)  # give the broker time to (not) deliver the rest
    seen = {role: sorted(m.topic.rsplit("/", 2)[-2] + "/" + m.topic.rsplit("/", 1)[-1] for m in r.messages)
            for role, r in readers.items()}  # fmt: skip
    assert seen["controller"] == ["c1/status", "camera/cards", "round/dealer", "round/state", "shoe/cards"]
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


def test_retained_messages_reach_only_the_roles_that_may_read_them(secured: tuple[int, dict[str, str]]) -> None:
    port, roles = secured
    shoe, controller = publisher(url(port, roles, "shoe")), publisher(url(port, roles, "controller"))
    retained = {
        topics.round_state("t1"): controller, topics.round_dealer("t1"): controller, topics.shoe_status("t1"): shoe,
    }  # fmt: skip
    for topic, client in retained.items():
        client.publish(topic, b'{"retained": true}', qos=1, retain=True).wait_for_publish(5)
    bystander = Subscriber(url(port, roles, "api"), [topics.round_state("elsewhere")])  # an unrelated topic
    readers = {role: Subscriber(url(port, roles, role), ["studio/v1/#"]) for role in ("public", "dealer", "shoe")}
    for reader in (bystander, *readers.values()):
        reader.wait_subscribed()
    wait_until(lambda: len(readers["dealer"].messages) >= 3, 10, "the dealer's retained views")
    time.sleep(0.5)  # time for anything wrongly allowed to arrive
    seen = {role: sorted(m.topic.split("/", 4)[-1] for m in r.messages) for role, r in readers.items()}
    assert seen["dealer"] == ["round/dealer", "round/state", "shoe/status"]
    assert seen["public"] == ["round/state"]
    assert seen["shoe"] == ["shoe/status"]  # its own status (readwrite), never a round view
    assert bystander.messages == []
    for topic, client in retained.items():
        client.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)  # clear
    for client in (shoe, controller):
        client.disconnect()
        client.loop_stop()
    for reader in (bystander, *readers.values()):
        reader.close()


def test_a_wrong_password_is_refused(secured: tuple[int, dict[str, str]]) -> None:
    port, _roles = secured
    client = make_client("guess")
    connect(client, f"mqtt://public:not-the-password@127.0.0.1:{port}")
    time.sleep(0.5)
    assert not client.is_connected()
    client.disconnect()
    client.loop_stop()
