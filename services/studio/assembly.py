"""The whole studio in one process: broker, database, API, controller, and per table a simulated shoe,
its shoe daemon and a simulated dealer. Used by ``studio up`` and ``studio demo``.

Each part is the production code (the same classes ``studio broker``/``shoe``/``controller``/``api``
run as separate processes); only the shoe hardware and the dealer's hands are simulated.

Started again on the same run directory and database it carries on its tables: the controller
rebuilds them from its journal, each shoe daemon goes on counting in its outbox, and each simulated
dealer goes on with the cards its shoe still holds (kept in the run directory). A stop lets the
cards already dealt reach the controller before the shoes stop: the dealers stop first.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import VirtualShoe
from services.api.app import create_app
from services.api.consoles import ViewRelay
from services.api.notify import RoundNotifier
from services.api.server import api_server
from services.bus.broker import embedded_broker, role_url, write_url
from services.catalog import STUDIO_GAMES
from services.controller.runner import Controller
from services.controller.table import ControllerSettings
from services.db import make_engine, migrate, session_factory
from services.ledger.wallets import WalletService
from services.rounds.models import GameTable
from services.rounds.players import PlayerService
from services.rounds.service import RoundService
from services.shoe.daemon import ShoeConfig, ShoeDaemon
from services.shoe.signing import KeyRing, key_for
from services.studio.dealer import SimulatedDealer

log = logging.getLogger("studio.up")


@dataclass(frozen=True)
class StudioConfig:
    tables: tuple[str, ...] = ("T1", "T2")
    run_dir: Path = Path(".studio")
    database_url: str | None = None  # default: SQLite in run_dir
    mqtt_url: str | None = None  # default: the embedded broker on a free port
    api_host: str = "127.0.0.1"
    api_port: int = 0  # 0: a free port
    table_settings: dict[str, Any] = field(default_factory=dict)
    allow_return_over_100: bool = False  # the Pok Deng tables may run settings that return 100 % or more
    result_pause_ms: int = 7_000  # a result people can read (a table's own setting wins)
    dealer_pace: float = 0.15
    simulated_dealers: bool = True  # False: somebody else deals through ``RunningStudio.shoes`` (a test, a person)
    rooms: tuple[str, ...] = ()  # Mậu Binh room tables, dealt online (no shoe)
    room_settings: dict[str, Any] = field(default_factory=dict)
    tienlen_rooms: tuple[str, ...] = ()  # Tiến Lên room tables, dealt online
    tienlen_settings: dict[str, Any] = field(default_factory=dict)
    # the house's coup tables, dealt from a shoe: (table, game) with game baccarat or dragontiger
    coup_tables: tuple[tuple[str, str], ...] = ()
    coup_settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # game -> its tables' settings
    recordings: Path | None = None  # the tables' camera recordings (``studio record --out DIR/TABLE``), for operators

    @property
    def shoe_tables(self) -> tuple[str, ...]:
        """The tables dealt from a shoe: Pok Deng's and the coup games'."""
        return self.tables + tuple(table for table, _game in self.coup_tables)


@dataclass
class RunningStudio:
    config: StudioConfig
    mqtt_url: str
    api_url: str
    database_url: str  # as given (with any password): for the operator's own tools on this machine
    service: RoundService
    wallets: WalletService
    players: PlayerService
    controller: Controller
    shoes: dict[str, VirtualShoe]


@contextlib.contextmanager
def running_studio(config: StudioConfig) -> Iterator[RunningStudio]:
    config.run_dir.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    dealers_stop = threading.Event()  # the dealers stop first: what they dealt reaches the controller
    threads: list[threading.Thread] = []
    dealers: list[threading.Thread] = []
    daemons: dict[str, ShoeDaemon] = {}
    with contextlib.ExitStack() as stack:
        if config.mqtt_url:
            url = config.mqtt_url
            write_url(url, config.run_dir)
        else:  # each of the studio's parts logs in as its role (role_url); the superuser's URL is for tools
            url = stack.enter_context(embedded_broker(run_dir=config.run_dir))
        database_url = config.database_url or f"sqlite:///{config.run_dir / 'studio.db'}"
        engine = make_engine(database_url)
        migrate(engine)
        sessions = session_factory(engine)
        service = RoundService(sessions, games=STUDIO_GAMES)
        made = [(table, "pokdeng", config.table_settings) for table in config.tables]
        made += [(room, "maubinh", config.room_settings | {"deal": "online"}) for room in config.rooms]
        made += [(room, "tienlen", config.tienlen_settings | {"deal": "online"}) for room in config.tienlen_rooms]
        made += [(table, game, config.coup_settings.get(game, {})) for table, game in config.coup_tables]
        for table, game, table_settings in made:
            with sessions() as session:
                exists = session.get(GameTable, table) is not None
            if not exists:  # outside the read: on SQLite every transaction holds the write lock
                service.create_table(
                    table, "THB", table_settings, game, allow_return_over_100=config.allow_return_over_100
                )
        shoes: dict[str, VirtualShoe] = {}

        def start(target: Any, name: str, until: threading.Event = stop) -> threading.Thread:
            thread = threading.Thread(target=target, args=(until,), name=name, daemon=True)
            thread.start()
            threads.append(thread)
            return thread

        decks = {table: service.decks(table) for table in config.shoe_tables}
        for index, table in enumerate(config.shoe_tables):
            shoe = VirtualShoe("line", config.run_dir / f"pty-{table}")
            stack.callback(shoe.close)
            shoes[table] = shoe
            key = key_for(config.run_dir / "keys", f"{table}-shoe")
            shoe_config = ShoeConfig(
                table, f"{table}-shoe", config.run_dir / f"shoe-{table}.outbox", role_url(url, "shoe"), "sim", key=key
            )
            device = SerialShoe(str(shoe.path), "line", backoff=Backoff(0.05)).events
            daemon = daemons[table] = ShoeDaemon(shoe_config, device)
            start(daemon.run, f"shoe-{table}")
            # the dealer deals only once the shoe reads: a card written to a pty nobody has opened yet is lost
            deadline = time.monotonic() + 10
            while daemon.device_state != "connected" and time.monotonic() < deadline:
                time.sleep(0.01)
            if config.simulated_dealers:
                dealer = SimulatedDealer(
                    role_url(url, "dealer"), table, shoe, seed=index, pace=config.dealer_pace,
                    kept_at=config.run_dir / f"dealer-{table}.shoe", decks=decks[table],
                )  # fmt: skip
                dealers.append(start(dealer.run, f"dealer-{table}", dealers_stop))
        settings = {
            table: ControllerSettings(f"{table}-shoe", result_pause_ms=config.result_pause_ms)
            for table in config.shoe_tables + config.rooms + config.tienlen_rooms  # a room dealt online has no shoe
        }
        controller = Controller(service, role_url(url, "controller"), settings, keys=KeyRing(config.run_dir / "keys"))
        controller_thread = start(controller.run, "controller")
        # the studio runs once its tables are rebuilt (a test or a tool reads them at once); a controller that stopped
        # (a lease held elsewhere, a login refused) is no reason to wait, nor one that cannot reach the broker for long
        deadline = time.monotonic() + CONTROLLER_START_S
        while not controller.driving.wait(0.05) and controller_thread.is_alive() and time.monotonic() < deadline:
            pass
        app = create_app(
            engine,
            notify=stack.enter_context(contextlib.closing(RoundNotifier(role_url(url, "api")))),
            relay=stack.enter_context(contextlib.closing(ViewRelay(role_url(url, "api")))),
            recordings=config.recordings,
        )
        # no proxy in front: a request's address is its connection's (the records say it)
        server = api_server(app, config.api_host, config.api_port, log_level="warning", proxy_headers=False)
        api_thread = threading.Thread(target=server.run, name="api", daemon=True)
        api_thread.start()
        while not server.started and api_thread.is_alive():
            stop.wait(0.05)
        port = server.servers[0].sockets[0].getsockname()[1] if server.started else config.api_port
        try:
            yield RunningStudio(
                config, url, f"http://{config.api_host}:{port}", database_url, service, WalletService(sessions, "THB"),
                PlayerService(sessions), controller, shoes,
            )  # fmt: skip
        finally:
            dealers_stop.set()
            for thread in dealers:
                thread.join(timeout=10)
            _let_the_last_cards_arrive(shoes, daemons, controller)
            stop.set()
            server.should_exit = True
            api_thread.join(timeout=10)
            for thread in threads:
                thread.join(timeout=10)
            engine.dispose()


CONTROLLER_START_S = 30.0  # the most the studio waits for its controller to drive its tables
ARRIVAL_S = 3.0  # at a stop, the most the last cards dealt are waited for


def _let_the_last_cards_arrive(
    shoes: dict[str, VirtualShoe], daemons: dict[str, ShoeDaemon], controller: Controller
) -> None:
    """The dealers have stopped: wait (a little) until every card they dealt was read from its pty and taken by the
    controller, so a clean stop loses no card between the dealer's hand and the journal."""

    def arrived() -> bool:
        for table, shoe in shoes.items():
            taken = controller.tables[table].last_taken[1]
            try:
                stamped = daemons[table].outbox.last_seq
            except sqlite3.Error:  # the daemon has stopped already (it failed): nothing more comes from it
                stamped = taken
            if shoe.unread() or taken < stamped:
                return False
        return True

    deadline = time.monotonic() + ARRIVAL_S
    steady = 0
    while steady < 2 and time.monotonic() < deadline:  # twice in a row: a card read but not yet stamped is not missed
        steady = steady + 1 if arrived() else 0
        time.sleep(0.05)
