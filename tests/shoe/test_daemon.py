"""Shoe → daemon → real broker → feed: a whole deck exactly once and in order, whatever breaks on the way."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from hardware.camera import CameraReader, Recognizer, calibrate
from hardware.camera.device import CROP_SIDE
from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import Faults, VirtualShoe, shuffled_deck
from hardware.sim.camera import FELTS, STYLES, Scene, SyntheticCamera, calibration_photos
from services.bus import topics
from services.bus.client import Subscriber
from services.bus.feed import ShoeEvent, ShoeFeedClient
from services.bus.messages import ShoeAlarm, ShoeCard, ShoeNewDeck, ShoeStatus, decode, jpeg_bytes
from services.cli import main
from services.shoe.daemon import ShoeAlreadyOnlineError, ShoeConfig, ShoeDaemon
from tests.conftest import BrokerProcess
from tests.support import wait_until

FAST = Backoff(first=0.02, factor=2, cap=0.2)


class Received:
    """What a feed client delivered, in delivery order."""

    def __init__(self, url: str, table: str, shoe_id: str) -> None:
        self.events: list[ShoeEvent] = []
        self.client = ShoeFeedClient(url, table, shoe_id, self.events.append, next_seq=1)
        wait_until(self.client.subscribed.is_set, 10, "the feed's subscription")

    def cards(self) -> list[str]:
        return [e.card for e in self.events if isinstance(e, ShoeCard)]

    def wait_cards(self, count: int, timeout: float = 30) -> list[str]:
        wait_until(lambda: len(self.cards()) >= count, timeout, f"{count} cards (have {len(self.cards())})")
        return self.cards()


class Running:
    """A daemon on a thread, reading the simulator through the real serial driver."""

    def __init__(self, config: ShoeConfig, sim: VirtualShoe, dialect: str) -> None:
        self.stop = threading.Event()
        self.daemon = ShoeDaemon(config, SerialShoe(str(sim.path), dialect, backoff=FAST).events)
        self.thread = threading.Thread(target=self.daemon.run, args=(self.stop,), daemon=True)
        self.thread.start()
        self.wait_device("connected")

    def wait_device(self, state: str) -> None:
        wait_until(lambda: self.daemon.device_state == state, 10, f"the device to be {state}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


@pytest.fixture
def table() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def sim() -> Iterator[VirtualShoe]:
    shoe = VirtualShoe("monitor", faults=Faults(garbage=0.2, split=True, misread=0.1, alarm=0.05, seed=11))
    yield shoe
    shoe.close()


def config(table: str, url: str, tmp_path: Path) -> ShoeConfig:
    return ShoeConfig(table, f"{table}-shoe", tmp_path / "outbox.db", url, source="sim", heartbeat=0.2)


def test_a_deck_arrives_once_and_in_order_across_an_unplug(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    alarms = Subscriber(mqtt_url, [topics.shoe_alarms(table), topics.shoe_status(table)])
    alarms.wait_subscribed()
    received = Received(mqtt_url, table, f"{table}-shoe")
    daemon = Running(config(table, mqtt_url, tmp_path), sim, "monitor")
    try:
        deck = shuffled_deck(seed=21)
        sim.deal_all(deck[:20], interval=0.005)
        received.wait_cards(20)
        sim.unplug()
        daemon.wait_device("disconnected")
        sim.plug()
        daemon.wait_device("connected")
        sim.deal_all(deck[20:], interval=0.005)
        assert received.wait_cards(52) == deck
        time.sleep(0.3)
        assert received.cards() == deck  # and nothing after
        seqs = [e.seq for e in received.events]
        assert seqs == list(range(1, 53))
        raised = [decode(ShoeAlarm, m.payload) for m in alarms.messages if m.topic.endswith("/alarms")]
        assert {"reader_fault", "misread", "device_alarm"} <= {alarm.kind for alarm in raised}
        after = [alarm.after_seq for alarm in raised if alarm.kind == "misread"]  # where each fell among the cards
        assert after == sorted(after) and 0 < max(after) < 52
    finally:
        daemon.close()
        received.client.close()
    statuses = [decode(ShoeStatus, m.payload) for m in alarms.wait_for(1) if m.topic.endswith("/status")]
    wait_until(lambda: decode(ShoeStatus, alarms.messages[-1].payload).state == "offline", 5, "offline status")
    assert statuses[0].state == "online"
    alarms.close()


def test_the_status_is_retained_and_the_last_will_says_offline_when_the_daemon_dies(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    process = start_daemon(table, mqtt_url, sim, tmp_path)
    try:
        late = Subscriber(mqtt_url, [topics.shoe_status(table)])
        late.wait_for(1)  # retained: a subscriber that comes later still gets it
        assert decode(ShoeStatus, late.messages[0].payload).state == "online"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        # Any offline after the kill, not the last message: the embedded amqtt broker can pass on a heartbeat
        # that was in flight at the kill after the will (it broadcasts the will before the queued publish).
        wait_until(
            lambda: any(decode(ShoeStatus, m.payload).state == "offline" for m in list(late.messages)),
            30,
            "the last will",
        )
        late.close()
    finally:
        stop_daemon(process)


def start_daemon(table: str, url: str, sim: VirtualShoe, tmp_path: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "services.cli", "shoe", "--table", table, "--device", f"serial://{sim.path}?dialect=monitor",
        "--outbox", str(tmp_path / "outbox.db"), "--broker", url,
    ]  # fmt: skip
    log = (tmp_path / "daemon.log").open("ab")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ | {"PYTHONUNBUFFERED": "1"})


def stop_daemon(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def device_connected(status: Subscriber, not_boot: str = "", timeout: float = 20) -> str:
    """Wait for a daemon (another than ``not_boot``) to report its device connected; its boot id."""

    def boots() -> list[str]:
        seen = [decode(ShoeStatus, m.payload) for m in list(status.messages)]
        return [s.boot_id for s in seen if s.device == "connected" and s.boot_id != not_boot]

    wait_until(lambda: bool(boots()), timeout, "the daemon's device to connect")
    return boots()[0]


def stored(tmp_path: Path) -> int:
    path = tmp_path / "outbox.db"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_a_sigkilled_daemon_publishes_what_it_had_stored_after_its_restart(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    received = Received(mqtt_url, table, f"{table}-shoe")
    status = Subscriber(mqtt_url, [topics.shoe_status(table)])
    process = start_daemon(table, mqtt_url, sim, tmp_path)
    deck = shuffled_deck(seed=8)
    try:
        first_boot = device_connected(status)
        sim.deal_all(deck[:26])
        wait_until(lambda: stored(tmp_path) == 26, 20, "26 cards in the outbox")
        process.send_signal(signal.SIGKILL)  # whatever was not yet published or acknowledged is only on disk
        process.wait(timeout=10)
        process = start_daemon(table, mqtt_url, sim, tmp_path)
        assert received.wait_cards(26) == deck[:26]
        device_connected(status, not_boot=first_boot)  # opening the port flushes what came before
        sim.deal_all(deck[26:], interval=0.005)
        assert received.wait_cards(52) == deck
        assert [e.seq for e in received.events] == list(range(1, 53))
    finally:
        stop_daemon(process)
        received.client.close()
        status.close()


def test_a_consumer_that_missed_cards_gets_them_again_from_the_outbox(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    daemon = Running(config(table, mqtt_url, tmp_path), sim, "monitor")
    try:
        deck = shuffled_deck(seed=4)
        sim.deal_all(deck[:10])
        wait_until(lambda: daemon.daemon.outbox.pending() == [] and daemon.daemon.counters.cards == 10, 10, "acks")
        received = Received(mqtt_url, table, f"{table}-shoe")  # subscribes after cards 1–10 went by
        assert received.wait_cards(10) == deck[:10]  # refilled through the resend topic
        sim.deal_all(deck[10:])
        assert received.wait_cards(52) == deck
        assert daemon.daemon.counters.resend_requests >= 1
        received.client.close()
    finally:
        daemon.close()


def test_a_deck_arrives_once_and_in_order_across_a_broker_kill_and_restart(
    broker_process: BrokerProcess, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    url = broker_process.url
    received = Received(url, table, f"{table}-shoe")
    daemon = Running(config(table, url, tmp_path), sim, "monitor")
    try:
        deck = shuffled_deck(seed=13)
        sim.deal_all(deck[:15], interval=0.005)
        received.wait_cards(15)
        broker_process.kill()
        sim.deal_all(deck[15:30], interval=0.005)  # stored and queued while the broker is down
        wait_until(lambda: daemon.daemon.counters.cards == 30, 10, "the daemon to read 30 cards")
        broker_process.start()
        assert received.wait_cards(30, timeout=60) == deck[:30]
        sim.deal_all(deck[30:], interval=0.005)
        assert received.wait_cards(52) == deck
        assert [e.seq for e in received.events] == list(range(1, 53))
    finally:
        daemon.close()
        received.client.close()


def test_camera_cards_reach_the_feed_with_their_confidence_and_frame_time(
    mqtt_url: str, table: str, tmp_path: Path
) -> None:
    camera = SyntheticCamera(Scene(style=STYLES["bold"], felt=FELTS["blue"]), seed=2)
    reader = CameraReader(lambda: camera, Recognizer(calibrate(calibration_photos())), confirm=3)
    stop = threading.Event()
    daemon = ShoeDaemon(config(table, mqtt_url, tmp_path), reader.events)
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    received = Received(mqtt_url, table, f"{table}-shoe")
    thread.start()
    try:
        dealt = ["KH", "2S", "9C", "TD"]
        for index, code in enumerate(dealt):
            if index == 3:
                camera.clear()  # the table is swept between hands
            camera.deal(code)
            received.wait_cards(index + 1)
        cards = [e for e in received.events if isinstance(e, ShoeCard)]
        assert [c.card for c in cards] == dealt
        assert all(c.source == "sim" and 0.62 <= c.confidence <= 1 and c.raw.startswith("camera ") for c in cards)
        for card in cards:  # the evidence: the card as read, a JPEG a person can look at
            assert card.crop is not None
            image = cv2.imdecode(np.frombuffer(jpeg_bytes(card.crop), np.uint8), cv2.IMREAD_COLOR)
            assert image is not None and 40 <= max(image.shape[:2]) <= CROP_SIDE
    finally:
        stop.set()
        thread.join(timeout=10)
        received.client.close()


def test_a_new_deck_announced_by_an_operator_reaches_the_feed_in_order(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    daemon = Running(config(table, mqtt_url, tmp_path), sim, "monitor")
    received = Received(mqtt_url, table, f"{table}-shoe")
    try:
        sim.deal_all(["AS", "KD"])
        received.wait_cards(2)
        wait_until(lambda: daemon.daemon.client.is_connected(), 10, "the daemon's broker connection")
        assert main(["new-deck", "--table", table, "--by", "pitboss", "--broker", mqtt_url]) == 0
        wait_until(lambda: len(received.events) == 3, 10, "the new deck")
        sim.deal_all(["2C"])
        received.wait_cards(3)
        deck = received.events[2]
        assert isinstance(deck, ShoeNewDeck) and deck.raw == "new deck announced by pitboss" and deck.deck == 1
        assert [e.seq for e in received.events] == [1, 2, 3, 4]
        card = received.events[3]
        assert isinstance(card, ShoeCard) and card.card == "2C" and card.deck == 1
        with pytest.raises(SystemExit) as refused:  # argparse refuses the table id before anything starts
            main(["new-deck", "--table", "bad/table", "--broker", mqtt_url])
        assert refused.value.code == 2
    finally:
        daemon.close()
        received.client.close()


def test_a_second_daemon_of_a_shoe_that_is_online_refuses_to_start(
    mqtt_url: str, table: str, sim: VirtualShoe, tmp_path: Path
) -> None:
    """Two writers of one sequence would take over each other's cards: the second one stops before publishing."""
    first = Running(config(table, mqtt_url, tmp_path), sim, "monitor")
    cards = Subscriber(mqtt_url, [topics.shoe_cards(table)])
    cards.wait_subscribed()
    try:
        wait_until(lambda: first.daemon.client.is_connected(), 10, "the first daemon online")
        twin = ShoeDaemon(replace(config(table, mqtt_url, tmp_path), outbox=tmp_path / "twin.db"), idle_device)
        with pytest.raises(ShoeAlreadyOnlineError, match=f"shoe {table}-shoe is already online at table {table}"):
            twin.run(threading.Event())
        published = [json.loads(m.payload).get("boot_id") for m in list(cards.messages)]
        assert twin.boot_id not in published, "the twin published nothing"
    finally:
        first.close()
        cards.close()
    restarted = ShoeDaemon(replace(config(table, mqtt_url, tmp_path), outbox=tmp_path / "again.db"), idle_device)
    stop = threading.Event()
    thread = threading.Thread(target=restarted.run, args=(stop,), daemon=True)
    thread.start()
    wait_until(lambda: restarted.client.is_connected(), 10, "a daemon after the first one stopped")
    stop.set()
    thread.join(10)
    assert not thread.is_alive()


def idle_device(stop: threading.Event) -> Iterator[Any]:
    stop.wait()
    return
    yield
