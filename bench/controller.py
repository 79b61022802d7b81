"""Benchmark: a card scanned → the public round state showing it, and one controller driving many tables.

    .venv/bin/python bench/controller.py [--tables 1] [--cards 1000] [--broker mqtt://127.0.0.1:1883]

Each table has a pty shoe read by a real shoe daemon and a simulated dealer that deals the moment
the dealer console asks; one controller process (a thread here, as in ``studio up``) runs every
table with short windows (100 ms) so rounds follow each other at full speed; SQLite by default
(``STUDIO_DATABASE_URL`` for PostgreSQL). Measured:

* scan → state: a face-up card written on the pty → the ``…/round/state`` message showing it,
  p50/p99, beside the broker's own publish → receive round trip (the floor) in the same run;
* with ``--tables N``: rounds settled per second, the process CPU, and how late the controller
  acted on each window's deadline (betting close, insurance close, decision timeout).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select

from bench.shoe import broker, floor, percentiles
from hardware.sim import VirtualShoe
from services.bus import topics
from services.bus.client import Subscriber
from services.rounds.models import Round, RoundLogEntry
from services.rounds.returns import HOUSE_SETTINGS
from services.studio.assembly import StudioConfig, running_studio

FAST = HOUSE_SETTINGS | {"betting_window_ms": 100, "insurance_window_ms": 100, "decision_window_ms": 100}


class Timing:
    """When each face-up card left the shoe, and when the public state first showed it."""

    def __init__(self) -> None:
        self.written: dict[tuple[str, str, int], float] = {}
        self.shown: dict[tuple[str, str, int], float] = {}
        self.lock = threading.Lock()

    def wrap(self, table: str, shoe: VirtualShoe, console: Subscriber) -> None:
        deal = shoe.deal

        def timed_deal(code: str, burn: bool = False) -> None:
            view = json.loads(console.messages[-1].payload) if console.messages else {}
            wanted = view.get("next_card") or {}
            if wanted.get("face_up"):
                with self.lock:
                    self.written[(str(view.get("round_id")), wanted["position"], wanted["index"])] = time.perf_counter()
            deal(code, burn)

        shoe.deal = timed_deal  # type: ignore[method-assign]

    def on_state(self, payload: bytes, arrived: float) -> None:
        state = json.loads(payload)
        for position, hand in state.get("hands", {}).items():
            for index, card in enumerate(hand["cards"]):
                key = (str(state.get("round_id")), position, index)
                if card is not None:
                    with self.lock:
                        self.shown.setdefault(key, arrived)

    def latencies(self) -> list[float]:
        with self.lock:
            return [self.shown[key] - start for key, start in self.written.items() if key in self.shown]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--cards", type=int, default=1000, help="face-up cards to measure (all tables together)")
    parser.add_argument("--broker", default=None)
    args = parser.parse_args()
    run = uuid.uuid4().hex[:4]  # new table ids every run: a shared broker keeps an earlier run's retained messages
    tables = tuple(f"B{run}-{index + 1}" for index in range(args.tables))
    with broker(args.broker) as url, tempfile.TemporaryDirectory() as directory:
        base = floor(url, 1000, 0.005)
        config = StudioConfig(
            tables=tables, run_dir=Path(directory), mqtt_url=url, table_settings=FAST, result_pause_ms=100,
            dealer_pace=0.0,
        )  # fmt: skip
        timing = Timing()
        with running_studio(config) as studio:
            watcher = Subscriber(url, [topics.round_state(t) for t in tables])
            watcher.client.on_message = lambda _c, _d, m: timing.on_state(m.payload, time.perf_counter())
            watcher.wait_subscribed()
            consoles = {t: Subscriber(url, [topics.round_dealer(t)]) for t in tables}
            for console in consoles.values():
                console.wait_subscribed()
            for table in tables:
                timing.wrap(table, studio.shoes[table], consoles[table])
            cpu, wall = time.process_time(), time.perf_counter()
            while len(timing.latencies()) < args.cards and time.perf_counter() - wall < 600:
                time.sleep(0.2)
                print(f"\r{len(timing.latencies())} cards", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            rounds = sum(table.counters.get("rounds_opened", 0) for table in studio.controller.tables.values())
            lateness = window_lateness(studio)
            for subscriber in (watcher, *consoles.values()):
                subscriber.close()
    report(args, url, base, timing.latencies()[: args.cards], rounds, cpu, wall, lateness)


def window_lateness(studio: Any) -> list[float]:
    """For every window the controller closed: when it acted − the deadline (seconds)."""
    late = []
    with studio.service.sessions() as session:
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
    print(f"broker {url}; {args.tables} table(s); {len(scans)} face-up cards measured")
    print(f"{'what':<48}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}")
    for label, values in (("floor: paho publish → subscriber (QoS 1)", base), ("scan → public state", scans)):
        p50, p99, top, _mean = percentiles(values)
        print(f"{label:<48}{p50:>8.2f}{p99:>8.2f}{top:>8.2f}")
    ratio = percentiles(scans)[1] / percentiles(base)[1]
    print(f"ratio p99 scan/floor: {ratio:.1f}×")
    print(f"rounds opened: {rounds} in {wall:.1f} s = {rounds / wall:.1f} rounds/s; CPU {cpu / wall:.0%} of a core")
    print("  (CPU of the whole process: the controller, and every table's shoe daemon and simulated dealer)")
    if lateness:
        p50, p99, top, _mean = percentiles(lateness)
        print(f"betting windows closed after their deadline: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {top:.0f} ms")
    scan, floor_ = percentiles(scans), percentiles(base)
    figures = {
        "tables": args.tables, "cards": len(scans), "scan_to_state_p50_ms": round(scan[0], 2),
        "scan_to_state_p99_ms": round(scan[1], 2), "floor_p50_ms": round(floor_[0], 2),
        "floor_p99_ms": round(floor_[1], 2), "ratio_p99": round(scan[1] / floor_[1], 1),
        "rounds_per_s": round(rounds / wall, 2), "cpu_share": round(cpu / wall, 3),
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: this run's figures


if __name__ == "__main__":
    main()
