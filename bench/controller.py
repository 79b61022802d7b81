"""Benchmark: a card scanned → the public round state showing it, and one controller driving many tables.

    .venv/bin/python bench/controller.py [--tables 1] [--cards 1000] [--broker mqtt://127.0.0.1:1883]
        [--shape deployed|studio-up]

Each table has a pty shoe read by a real shoe daemon (signing each card) and a simulated dealer that deals the
moment the dealer console asks; one controller runs every table with short windows (100 ms) so rounds follow each
other at full speed; SQLite by default (``STUDIO_DATABASE_URL`` for PostgreSQL). Two shapes:

* ``deployed`` (the default; ``deploy/``'s): the controller is the production CLI (``studio controller``) in a
  process of its own; the table's side — pty shoe, shoe daemon and dealer — in another, as on the table's own
  computer; this process only watches the public state (the watcher's and the shoe's times are both
  ``time.monotonic``, one clock for every process of the machine);
* ``studio-up`` (``studio up``'s and ``make demo``'s): everything in this one process, the controller a thread beside
  the shoe daemon, the dealer, the API and the watcher, all sharing one interpreter lock.


* scan → state: a face-up card written on the pty → the ``…/round/state`` message showing it,
  p50/p99, beside the broker's own publish → receive round trip (the floor) in the same run;
* with ``--tables N``: rounds settled per second, the process CPU, and how late the controller
  acted on each window's deadline (betting close, insurance close, decision timeout).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import multiprocessing
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from multiprocessing.synchronize import Event as MpEvent
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select

from bench.shoe import broker, floor, percentiles
from bench.tables import (
    cpu_seconds,
    database,
    free_port,
    retained_cleared,
    run_directory,
    start_controller,
    stop_controller,
)
from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import VirtualShoe
from services.bus import topics
from services.bus.client import Subscriber
from services.catalog import STUDIO_GAMES
from services.db import make_engine, migrate, session_factory
from services.rounds.models import Round, RoundLogEntry
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService
from services.shoe.daemon import ShoeConfig, ShoeDaemon
from services.shoe.signing import key_for
from services.studio.assembly import StudioConfig, running_studio
from services.studio.dealer import SimulatedDealer

FAST = HOUSE_SETTINGS | {"betting_window_ms": 100, "insurance_window_ms": 100, "decision_window_ms": 100}


class Timing:
    """When each face-up card left the shoe, and when the public state first showed it."""

    def __init__(self) -> None:
        self.written: dict[tuple[str, str, int], float] = {}
        self.shown: dict[tuple[str, str, int], float] = {}
        self.lock = threading.Lock()
        self.face_up = 0  # cards the public state has shown (how far a run is, before the shoe's times come back)

    def wrap(self, table: str, shoe: VirtualShoe, console: Subscriber) -> None:
        deal = shoe.deal

        def timed_deal(code: str, burn: bool = False) -> None:
            view = json.loads(console.messages[-1].payload) if console.messages else {}
            wanted = view.get("next_card") or {}
            if wanted.get("face_up"):
                with self.lock:
                    self.written[(str(view.get("round_id")), wanted["position"], wanted["index"])] = time.monotonic()
            deal(code, burn)

        shoe.deal = timed_deal  # type: ignore[method-assign]

    def on_state(self, payload: bytes, arrived: float) -> None:
        state = json.loads(payload)
        for position, hand in state.get("hands", {}).items():
            for index, card in enumerate(hand["cards"]):
                key = (str(state.get("round_id")), position, index)
                if card is not None:
                    with self.lock:
                        if key not in self.shown:
                            self.shown[key] = arrived
                            self.face_up += 1

    def latencies(self) -> list[float]:
        with self.lock:
            return [self.shown[key] - start for key, start in self.written.items() if key in self.shown]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--cards", type=int, default=1000, help="face-up cards to measure (all tables together)")
    parser.add_argument("--broker", default=None)
    parser.add_argument(
        "--shape", choices=("deployed", "studio-up"), default="deployed",
        help="the controller in a process of its own (deployed) or a thread of one studio process (studio-up)",
    )  # fmt: skip
    args = parser.parse_args()
    run = uuid.uuid4().hex[:4]  # new table ids every run: a shared broker keeps an earlier run's retained messages
    tables = tuple(f"B{run}-{index + 1}" for index in range(args.tables))
    with broker(args.broker) as url:
        base = floor(url, 1000, 0.005)
        measure = deployed if args.shape == "deployed" else studio_up
        scans, rounds, cpu, wall, lateness = measure(args, tables, url)
    report(args, url, base, scans[: args.cards], rounds, cpu, wall, lateness)


Measured = tuple[list[float], int, float, float, list[float]]  # scans, rounds opened, controller CPU, wall, lateness


def studio_up(args: Any, tables: tuple[str, ...], url: str) -> Measured:
    """The studio in this process (``studio up``): the controller, the shoe daemons, the dealers, the API."""
    with tempfile.TemporaryDirectory() as directory:
        config = StudioConfig(
            tables=tables, run_dir=Path(directory), mqtt_url=url, table_settings=FAST, result_pause_ms=100,
            dealer_pace=0.0,
        )  # fmt: skip
        timing = Timing()
        with running_studio(config) as studio:
            watcher = watch(url, tables, timing)
            consoles = {t: Subscriber(url, [topics.round_dealer(t)]) for t in tables}
            for console in consoles.values():
                console.wait_subscribed()
            for table in tables:
                timing.wrap(table, studio.shoes[table], consoles[table])
            cpu, wall = time.process_time(), time.perf_counter()
            wait_for(lambda: len(timing.latencies()), args.cards)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            rounds = sum(table.counters.get("rounds_opened", 0) for table in studio.controller.tables.values())
            lateness = window_lateness(studio.service)
            for subscriber in (watcher, *consoles.values()):
                subscriber.close()
    return timing.latencies(), rounds, cpu, wall, lateness


def deployed(args: Any, tables: tuple[str, ...], url: str) -> Measured:
    """The controller as ``studio controller`` in a process of its own; the tables' shoes, shoe daemons and dealers
    in another (``table_side``); this process watches."""
    timing = Timing()
    with (
        run_directory(False) as directory,
        database(directory, False) as (database_url, _name),
        retained_cleared(url, list(tables)),
    ):
        engine = make_engine(database_url, pool_size=2)
        migrate(engine)
        service = RoundService(session_factory(engine), games=STUDIO_GAMES)
        for table in tables:
            service.create_table(table, "THB", FAST)
            key_for(directory / "keys", f"{table}-shoe")
        context = multiprocessing.get_context("spawn")
        stop, reports = context.Event(), context.Queue()
        side = context.Process(target=table_side, args=(url, str(directory), tables, stop, reports), daemon=True)
        side.start()
        try:
            reports.get(timeout=120)  # the table side is ready: its shoes read, its dealers listen
        except queue.Empty:
            side.kill()
            raise SystemExit("the table side (shoes, shoe daemons, dealers) did not start within 120 s") from None
        watcher = watch(url, tables, timing)
        port = free_port()
        command = [
            str(Path(sys.executable).with_name("studio")), "controller", "--tables", ",".join(tables),
            "--result-pause", "0.1", "--broker", url, "--database", database_url, "--http-port", str(port),
            "--shoe-keys", str(directory / "keys"),
        ]  # fmt: skip
        controller: subprocess.Popen[bytes] | None = None
        written: dict[tuple[str, str, int], float] = {}
        try:
            controller = start_controller(command, port, directory / "controller.log")
            cpu, wall, opened = cpu_seconds(controller.pid), time.perf_counter(), rounds_of(service, tables)
            # the public state also shows the banker's face-down card at its reveal (not timed): a quarter more
            wait_for(lambda: timing.face_up, args.cards * 5 // 4)
            cpu, wall = cpu_seconds(controller.pid) - cpu, time.perf_counter() - wall
            opened = rounds_of(service, tables) - opened
        finally:
            if controller is not None:
                stop_controller(controller)
            stop.set()
            with contextlib.suppress(queue.Empty):  # a table side that died has nothing to send: the error says why
                written = reports.get(timeout=60)
            side.join(timeout=10)
            if side.is_alive():
                side.kill()
            watcher.close()
        timing.written.update(written)
        lateness = window_lateness(service)
        engine.dispose()
    return timing.latencies(), opened, cpu, wall, lateness


def rounds_of(service: RoundService, tables: tuple[str, ...]) -> int:
    """How many rounds the tables have opened so far."""
    with service.sessions() as session:
        return session.scalar(select(func.count()).select_from(Round).where(Round.table_id.in_(tables))) or 0


def table_side(
    url: str, directory: str, tables: tuple[str, ...], stop: MpEvent, reports: multiprocessing.Queue[Any]
) -> None:
    """The tables' side in a process of its own: each table's pty shoe, its shoe daemon (signing, the outbox) and a
    dealer who deals the moment the console asks; sends back when each face-up card went onto its pty."""
    logging.basicConfig(level=logging.ERROR)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us through ``stop``
    halt, timing = threading.Event(), Timing()
    threads: list[threading.Thread] = []
    shoes: list[VirtualShoe] = []
    run_dir = Path(directory)
    for seed, table in enumerate(tables):
        shoe = VirtualShoe("line", run_dir / f"pty-{table}")
        shoes.append(shoe)
        key = key_for(run_dir / "keys", f"{table}-shoe")
        config = ShoeConfig(table, f"{table}-shoe", run_dir / f"shoe-{table}.outbox", url, "sim", key=key)
        daemon = ShoeDaemon(config, SerialShoe(str(shoe.path), "line", backoff=Backoff(0.05)).events)
        dealer = SimulatedDealer(url, table, shoe, seed=seed, pace=0.0)
        timing.wrap(table, shoe, dealer.console)  # the console the dealer deals from: its request is this card's
        for target, name in ((daemon.run, f"shoe-{table}"), (dealer.run, f"dealer-{table}")):
            thread = threading.Thread(target=target, args=(halt,), name=name, daemon=True)
            thread.start()
            threads.append(thread)
        deadline = time.monotonic() + 30
        while daemon.device_state != "connected" and time.monotonic() < deadline:
            time.sleep(0.01)
        dealer.console.wait_subscribed()
    reports.put({"ready": True})
    stop.wait()
    halt.set()
    for thread in threads:
        thread.join(timeout=10)
    for shoe in shoes:  # the dealers closed their consoles
        shoe.close()
    with timing.lock:
        reports.put(dict(timing.written))


def watch(url: str, tables: tuple[str, ...], timing: Timing) -> Subscriber:
    """The public state of every table, each face-up card's first showing timed."""
    watcher = Subscriber(url, [topics.round_state(t) for t in tables])
    watcher.client.on_message = lambda _c, _d, m: timing.on_state(bytes(m.payload), time.monotonic())
    watcher.wait_subscribed()
    return watcher


def wait_for(count: Any, wanted: int, timeout: float = 600) -> None:
    began = time.perf_counter()
    while count() < wanted and time.perf_counter() - began < timeout:
        time.sleep(0.2)
        print(f"\r{count()} cards", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def window_lateness(service: RoundService) -> list[float]:
    """For every window the controller closed: when it acted − the deadline (seconds)."""
    late = []
    with service.sessions() as session:
        rows = session.execute(
            select(Round.betting_closes_at, RoundLogEntry.created_at, RoundLogEntry.command)
            .join(RoundLogEntry, RoundLogEntry.round_id == Round.id)
            .where(RoundLogEntry.actor == "controller")
        ).all()
    for closes_at, acted_at, command in rows:
        if json.loads(command)["type"] == "close_betting":
            late.append((acted_at - closes_at).total_seconds())
    return late


def report(args: Any, url: str, base: list[float], scans: list[float], rounds: int, cpu: float, wall: float,
           lateness: list[float]) -> None:  # fmt: skip
    print(f"broker {url}; {args.tables} table(s); {args.shape} shape; {len(scans)} face-up cards measured")
    print(f"{'what':<48}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}")
    for label, values in (("floor: paho publish → subscriber (QoS 1)", base), ("scan → public state", scans)):
        p50, p99, top, _mean = percentiles(values)
        print(f"{label:<48}{p50:>8.2f}{p99:>8.2f}{top:>8.2f}")
    ratio = percentiles(scans)[1] / percentiles(base)[1]
    print(f"ratio p99 scan/floor: {ratio:.1f}×")
    print(f"rounds opened: {rounds} in {wall:.1f} s = {rounds / wall:.1f} rounds/s; CPU {cpu / wall:.0%} of a core")
    if args.shape == "studio-up":
        print("  (CPU of the whole process: the controller, and every table's shoe daemon and simulated dealer)")
    else:
        print("  (CPU of the controller's process alone)")
    if lateness:
        p50, p99, top, _mean = percentiles(lateness)
        print(f"betting windows closed after their deadline: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {top:.0f} ms")
    scan, floor_ = percentiles(scans), percentiles(base)
    figures = {
        "tables": args.tables, "shape": args.shape, "cards": len(scans), "scan_to_state_p50_ms": round(scan[0], 2),
        "scan_to_state_p99_ms": round(scan[1], 2), "floor_p50_ms": round(floor_[0], 2),
        "floor_p99_ms": round(floor_[1], 2), "ratio_p99": round(scan[1] / floor_[1], 1),
        "rounds_per_s": round(rounds / wall, 2), "cpu_share": round(cpu / wall, 3),
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: this run's figures


if __name__ == "__main__":
    main()
