"""The studio on real parts, for the end-to-end tests: a pty shoe, its shoe daemon, a controller, the round service.

One table per ``Studio`` (its own table id, hence its own topics), so tests share a broker without meeting.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from sqlalchemy import Engine

from hardware.camera.device import CardSeen
from hardware.serial_shoe import Backoff, Connected, SerialShoe
from hardware.sim import VirtualShoe
from services.bus import topics
from services.bus.client import Subscriber
from services.catalog import STUDIO_GAMES
from services.controller.runner import Controller
from services.controller.table import ControllerSettings
from services.db import session_factory
from services.games.pokdeng import Phase
from services.ledger.wallets import WalletService
from services.rounds.adapters import Catalog
from services.rounds.players import PlayerService
from services.rounds.service import RoundService
from services.shoe.daemon import ShoeConfig, ShoeDaemon
from services.shoe.signing import KeyRing, new_key
from tests.support import wait_until

CROP = bytes(cv2.imencode(".jpg", np.full((60, 40, 3), 200, np.uint8))[1])
WINDOWS = {"betting_window_ms": 2500, "insurance_window_ms": 300, "decision_window_ms": 300}


class OverheadCamera:
    """A camera device for a witness daemon: it reports the cards a test says it saw (``see``)."""

    def __init__(self) -> None:
        self.seen: queue.Queue[CardSeen] = queue.Queue()

    def see(self, card: str) -> None:
        self.seen.put(CardSeen(card, 0.95, time.time(), (10, 10, 60, 90), CROP))

    def events(self, stop: threading.Event) -> Iterator[Connected | CardSeen]:
        yield Connected("overhead")
        while not stop.is_set():
            try:
                yield self.seen.get(timeout=0.05)
            except queue.Empty:
                continue


class Studio:
    """One table: a pty shoe read by a shoe daemon, a controller, the round service, all on real parts; with
    ``verify``, an overhead camera (a witness daemon, signing its sightings) checks the shoe's cards."""

    def __init__(
        self,
        database: Engine,
        url: str,
        directory: Path,
        windows: dict[str, int] = WINDOWS,
        game: str = "pokdeng",
        verify: str = "off",
        games: Catalog = STUDIO_GAMES,
    ) -> None:
        self.table = f"t{uuid.uuid4().hex[:8]}"
        self.shoe_id = f"{self.table}-shoe"
        self.service = RoundService(session_factory(database), games=games)
        self.wallets = WalletService(session_factory(database), "THB")
        self.players = PlayerService(session_factory(database))
        self.service.create_table(self.table, "THB", windows, game, allow_return_over_100=True, verify=verify)
        self.url = url
        self.sim = VirtualShoe("monitor", directory / "pty")
        self.key = new_key(self.shoe_id)  # the shoe signs; the controller holds the key
        camera_id = f"{self.table}-camera" if verify != "off" else ""
        self.settings = ControllerSettings(self.shoe_id, auto_open=False, camera_id=camera_id)
        self.camera, camera_key = OverheadCamera(), new_key(camera_id or "none")
        self.keys = KeyRing(directory / "keys", keys=[self.key, camera_key])
        self.views = Subscriber(url, [topics.round_state(self.table), topics.round_dealer(self.table)])
        self.views.wait_subscribed()
        self.stop = threading.Event()  # the witness's; the shoe and the controller each stop on their own too
        self.dealt: set[tuple[str, str, int]] = set()
        self.threads: list[threading.Thread] = []
        self.daemon, self.shoe_stop, self.shoe_thread = self._shoe(directory / "outbox.db")
        self.controller, self.controller_stop, self.controller_thread = self._controller()
        if camera_id:
            witness = ShoeConfig(
                self.table, camera_id, directory / "camera.db", url, source="camera", heartbeat=0.2, key=camera_key,
                witness=True,
            )  # fmt: skip
            self.witness = ShoeDaemon(witness, self.camera.events)
            self.threads.append(threading.Thread(target=self.witness.run, args=(self.stop,), daemon=True))
        for thread in self.threads:
            thread.start()
        self._started()

    def _shoe(self, outbox: Path) -> tuple[ShoeDaemon, threading.Event, threading.Thread]:
        """A run of the shoe's daemon on the table's pty, keeping its outbox at ``outbox``."""
        config = ShoeConfig(self.table, self.shoe_id, outbox, self.url, source="sim", heartbeat=0.2, key=self.key)
        daemon = ShoeDaemon(config, SerialShoe(str(self.sim.path), "monitor", backoff=Backoff(0.02)).events)
        stop = threading.Event()
        thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
        thread.start()
        return daemon, stop, thread

    def _controller(self) -> tuple[Controller, threading.Event, threading.Thread]:
        controller = Controller(self.service, self.url, {self.table: self.settings}, keys=self.keys)
        stop = threading.Event()
        thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
        thread.start()
        return controller, stop, thread

    def _started(self) -> None:
        wait_until(lambda: self.daemon.device_state == "connected", 10, "the shoe")
        wait_until(lambda: bool(self.controller.feeds) and self.controller.feeds[0].subscribed.is_set(), 10, "feed")

    def restart_shoe(self, outbox: Path) -> None:
        """Stop the shoe's daemon and start it again with the outbox at ``outbox`` (a new file: a daemon that lost its
        outbox, as on a new disk, counts from 1 again under a new boot id)."""
        self.shoe_stop.set()
        self.shoe_thread.join(timeout=10)
        self.daemon, self.shoe_stop, self.shoe_thread = self._shoe(outbox)
        self._started()

    def restart_controller(self) -> None:
        """Stop the controller (a clean stop hands its lease back) and start another on the same database."""
        self.controller_stop.set()
        self.controller_thread.join(timeout=10)
        self.controller, self.controller_stop, self.controller_thread = self._controller()
        self._started()

    @property
    def table_controller(self) -> Any:
        return self.controller.tables[self.table]

    def fund(self, *players: str, amount: int = 10_000) -> None:
        for player in players:
            self.players.register(player)
            self.wallets.deposit(player, amount, key=f"fund-{player}", actor="test")

    def token(self, player: str) -> dict[str, str]:
        """A funded player's bearer header (their token is issued anew)."""
        self.fund(player)
        return {"Authorization": f"Bearer {self.players.revoke(player)}"}

    def dealer_view(self) -> dict[str, Any]:
        return self.latest(topics.round_dealer(self.table))

    def latest(self, topic: str) -> dict[str, Any]:
        payloads = [json.loads(m.payload) for m in list(self.views.messages) if m.topic == topic]
        return payloads[-1] if payloads else {}

    def deal_as_the_console_says(self, cards: Iterator[str], round_id: str, timeout: float = 30) -> None:
        """Act as the dealer: whenever the console asks for a card, deal the next one; until settled."""
        self.deal_until(cards, round_id, lambda view: view.get("phase") in (Phase.SETTLED, Phase.VOID), timeout)

    def deal_until(
        self, cards: Iterator[str], round_id: str, done: Callable[[dict[str, Any]], bool], timeout: float = 30
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dealer = self.latest(topics.round_dealer(self.table))
            if dealer.get("round_id") == round_id and done(dealer):
                return
            wanted = dealer.get("next_card") if dealer.get("round_id") == round_id else None
            if wanted and (round_id, wanted["position"], wanted["index"]) not in self.dealt:
                self.dealt.add((round_id, wanted["position"], wanted["index"]))
                self.sim.deal(next(cards))
            time.sleep(0.02)
        last = self.latest(topics.round_dealer(self.table))
        raise TimeoutError(f"round {round_id}: not done in {timeout} s; last dealer view: {last}")

    def close(self) -> None:
        for stop in (self.stop, self.shoe_stop, self.controller_stop):
            stop.set()
        for thread in (*self.threads, self.shoe_thread, self.controller_thread):
            thread.join(timeout=10)
        self.views.close()
        self.sim.close()


@pytest.fixture
def studio(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[Studio]:
    running = Studio(database, mqtt_url, tmp_path)
    yield running
    running.close()
