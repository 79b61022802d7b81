"""The serial driver against the pty shoe simulator: real ports, real unplugging, no device."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest
import serial

from hardware.serial_shoe import (
    Backoff,
    CardRead,
    Connected,
    Disconnected,
    DriverEvent,
    Misread,
    NewDeck,
    SerialShoe,
)
from hardware.serial_shoe.frames import Alarm
from hardware.sim import Faults, VirtualShoe, shuffled_deck

FAST = Backoff(first=0.01, factor=2, cap=0.05)


class Reader:
    """The driver on a thread, its events in a queue."""

    def __init__(self, shoe: SerialShoe) -> None:
        self.shoe, self.events, self.stop = shoe, queue.Queue[DriverEvent](), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for event in self.shoe.events(self.stop):
            self.events.put(event)

    def until(self, count: int, kind: type, timeout: float = 10.0) -> list[DriverEvent]:
        """Every event until ``count`` of ``kind`` have arrived."""
        seen: list[DriverEvent] = []
        deadline = time.monotonic() + timeout
        while sum(isinstance(e, kind) for e in seen) < count:
            seen.append(self.events.get(timeout=max(0.01, deadline - time.monotonic())))
        return seen

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


@pytest.fixture(params=["monitor", "line"])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sim(dialect: str) -> Iterator[VirtualShoe]:
    shoe = VirtualShoe(dialect, faults=Faults(garbage=0.3, split=True, misread=0.1, alarm=0.1, seed=7))
    yield shoe
    shoe.close()


def cards(events: list[DriverEvent]) -> list[str]:
    return [e.code for e in events if isinstance(e, CardRead)]


def test_a_whole_deck_arrives_in_order_through_noise_split_writes_misreads_and_alarms(
    sim: VirtualShoe, dialect: str
) -> None:
    reader = Reader(SerialShoe(str(sim.path), dialect, backoff=FAST))
    try:
        assert isinstance(reader.until(1, Connected)[-1], Connected)
        deck = shuffled_deck(seed=3)
        sim.deal_all(deck)
        events = reader.until(52, CardRead)
        assert cards(events) == deck
        assert any(isinstance(e, Misread) for e in events)
        assert any(isinstance(e, Alarm) for e in events) == (dialect == "monitor")
        assert reader.shoe.parser.stats.garbage > 0  # the noise was seen, counted and skipped
    finally:
        reader.close()


def test_after_an_unplug_the_driver_reconnects_and_reads_on(sim: VirtualShoe, dialect: str) -> None:
    reader = Reader(SerialShoe(str(sim.path), dialect, backoff=FAST))
    try:
        reader.until(1, Connected)
        deck = shuffled_deck(seed=5)
        sim.deal_all(deck[:20])
        first = reader.until(20, CardRead)
        sim.unplug()
        gone = reader.until(1, Disconnected)[-1]
        assert isinstance(gone, Disconnected) and gone.retry_in > 0
        sim.plug()
        reader.until(1, Connected)
        sim.deal_all(deck[20:])
        assert cards(first) + cards(reader.until(32, CardRead)) == deck
        assert reader.shoe.reconnects >= 1
    finally:
        reader.close()


def test_a_missing_port_is_retried_with_backoff_until_it_appears(tmp_path: object) -> None:
    sim = VirtualShoe("line")
    sim.unplug()
    reader = Reader(SerialShoe(str(sim.path), "line", backoff=FAST))
    try:
        failures = reader.until(3, Disconnected)
        delays = [e.retry_in for e in failures if isinstance(e, Disconnected)]
        assert delays[:3] == [0.01, 0.02, 0.04] and "cannot open" in failures[0].reason  # type: ignore[union-attr]
        sim.plug()
        reader.until(1, Connected)
        sim.deal("AS")
        assert cards(reader.until(1, CardRead)) == ["AS"]
    finally:
        reader.close()
        sim.close()


def test_the_port_is_opened_exclusively(sim: VirtualShoe, dialect: str) -> None:
    reader = Reader(SerialShoe(str(sim.path), dialect, backoff=FAST))
    try:
        reader.until(1, Connected)
        with pytest.raises(serial.SerialException):
            serial.serial_for_url(str(sim.path), exclusive=True)
    finally:
        reader.close()


def test_every_dialect_of_the_simulated_shoe_announces_a_new_deck(sim: VirtualShoe, dialect: str) -> None:
    """Found in review: the monitor dialect sent nothing for a new deck, so its decks could never be told apart."""
    reader = Reader(SerialShoe(str(sim.path), dialect, backoff=FAST))
    try:
        reader.until(1, Connected)
        sim.deal("AS")
        sim.new_deck()
        sim.deal("AS")  # the same card, from the next deck
        events = [e for e in reader.until(2, CardRead) if isinstance(e, CardRead | NewDeck)]
        assert [type(e).__name__ for e in events] == ["CardRead", "NewDeck", "CardRead"]
    finally:
        reader.close()
