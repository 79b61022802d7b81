"""Benchmark: one controller process driving many simulated tables at full speed — rounds/s, its CPU, timers.

    .venv/bin/python bench/tables.py [--tables 50] [--seconds 60] [--warmup 10] [--shoe-processes 4]
        [--broker mqtt://127.0.0.1:1883] [--window-ms 100] [--result-pause-ms 100] [--bets 2] [--late-ms 100]
        [--profile controller.prof] [--controller-script wrapper.py] [--keep]

    # the recorded figures: Mosquitto, SQLite and PostgreSQL
    .venv/bin/python bench/tables.py --tables 10 --broker mqtt://127.0.0.1:1883
    .venv/bin/python bench/tables.py --tables 50 --broker mqtt://127.0.0.1:1883
    STUDIO_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/test \
        .venv/bin/python bench/tables.py --tables 50 --broker mqtt://127.0.0.1:1883

Database: ``STUDIO_DATABASE_URL`` (PostgreSQL: a fresh schema ``bench_tables_…`` of its own, dropped afterwards,
reached through ``search_path`` in the URL's ``options``), else a fresh SQLite file in a temporary directory.
Broker: ``--broker``, else the embedded amqtt on a free port.

Set-up: the schema is migrated and N tables (ids ``B<run>-1`` … ``B<run>-N``, new for every run so that
retained messages of earlier runs on a shared broker are never read) are created through
``RoundService.create_table`` with short windows (betting, insurance and decision ``--window-ms``).

Processes: the controller is the production CLI in a process of its own —
``studio controller --tables … --result-pause S --broker URL --database URL --http-port P --allow-unsigned`` (each
table's shoe is ``TABLE-shoe``, the CLI's default; the shoes sign nothing, as in the figures recorded before the
controller refused unsigned shoes) — so its CPU is measured alone. The tables' simulated hardware runs in
``--shoe-processes`` worker processes: per table a pty ``VirtualShoe`` (line dialect) read by the real
``SerialShoe`` driver and ``ShoeDaemon``, and a ``SimulatedDealer`` with pace 0. With ``--bets K`` (default 2)
K players per table each place one player-side bet per round through ``RoundService.place_bets`` (from the
worker processes, on the same database), so the close of betting, the decision windows their seats open and
the settlement do real ledger work; ``--bets 0`` turns it off.

Measured over ``--seconds`` after ``--warmup``:

* rounds settled per second (rows of ``rounds`` with ``settled_at`` in the interval), overall and per table;
* the controller process's CPU (utime + stime from /proc, % of one core), its main thread's share, and how
  that thread spent the interval (on a CPU / runnable, waiting for one / blocked: /proc schedstat), beside
  the workers', PostgreSQL's and Mosquitto's CPU, the whole machine's, and what other work used;
* how late the controller acted on every timer due in the interval: opening the next round (previous round's
  end + result pause; rounds that waited for a new deck left out), closing betting (``betting_closes_at``),
  closing insurance and timing out a decision (the deadline is rebuilt by replaying the round's log: the time
  of the entry that opened the window + the window; the service stamps the real deadline one flush later, so
  these two are upper bounds). Missed: a timer acted on more than ``--late-ms`` after its deadline, or not
  at all; stuck: a table with no round-log entry in the last 2 s + its longest window or pause;
* how far behind the cards are: a card written on the pty → the controller's journal row for it (the card
  is in its round), exact; and shoe stamp → the controller handling it (its
  ``studio_mqtt_receive_lag_seconds`` histogram, scraped from /metrics at both ends; bucket bounds only);
* the floor: the broker's own publish → receive round trip (``bench/shoe.py``'s ``floor``), idle before the
  controller starts and again under load inside the interval.

``--profile FILE`` runs the controller under cProfile (its main thread: the loop) and prints the top entries;
``--controller-script`` runs it through a wrapper script instead of ``studio`` (to try a change to it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import multiprocessing
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Event as MpEvent
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as mqtt
import psutil  # type: ignore[import-untyped]
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select, text
from sqlalchemy.engine import make_url

from bench.processes import stop
from bench.shoe import broker, floor, percentiles
from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import VirtualShoe
from services.bus import topics
from services.bus.client import Subscriber, connect, make_client
from services.catalog import STUDIO_GAMES
from services.controller.runner import controller_name
from services.db import make_engine, migrate, session_factory
from services.db.engine import database_url as resolve_url
from services.games.pokdeng import SEATS, Phase, PokDengRound, Side, TableSettings
from services.games.pokdeng import events as ev
from services.journal.models import ShoeJournal
from services.ledger.wallets import WalletService
from services.rounds.errors import RoundError
from services.rounds.models import Round, RoundLogEntry, Wager
from services.rounds.players import PlayerService
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService
from services.shoe.daemon import ShoeConfig, ShoeDaemon
from services.studio.dealer import SimulatedDealer

STUCK_SECONDS = 2.0  # beyond its longest window or pause, a table whose round log has not moved is stuck
BANKROLL = 10**12
WINDOW_COMMANDS = ("close_insurance", "decision_timeout")
STAKE = 100


# ---- the worker processes: shoes, shoe daemons, dealers, bettors --------------------------------------


@dataclass
class WorkerPlan:
    url: str
    database_url: str
    run_dir: str
    tables: list[tuple[str, int]]  # (table id, dealer seed)
    players: dict[str, list[str]]  # table id -> the players who bet there each round


class Bettor:
    """Each player of a table places one player-side bet as soon as the table's public state shows a new round."""

    def __init__(self, plan: WorkerPlan) -> None:
        self.players = plan.players
        self.engine = make_engine(plan.database_url, pool_size=2)
        self.service = RoundService(session_factory(self.engine), games=STUDIO_GAMES)
        self.rng = random.Random(os.getpid())
        self.rounds: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.seen: set[str] = set()
        self.stats: Counter[str] = Counter()
        self.watch = Subscriber(plan.url, [topics.round_state(table) for table in plan.players])
        self.watch.client.on_message = self._on_message

    def _on_message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        state = json.loads(message.payload)
        round_id = state.get("round_id")
        if state.get("phase") == Phase.BETTING and round_id and round_id not in self.seen:
            self.seen.add(round_id)
            self.rounds.put(round_id)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                round_id = self.rounds.get(timeout=0.1)
            except queue.Empty:
                continue
            table = round_id.rsplit("-", 1)[0]
            for player in self.players.get(table, []):
                bet = Bet(Side.PLAYER, self.rng.choice(SEATS), STAKE)
                try:
                    pokdeng(self.service).place_bets(player, round_id, [bet], key=uuid.uuid4().hex)
                    self.stats["slips accepted"] += 1
                except RoundError as error:  # the 100 ms window closed first: as in life
                    self.stats[f"slips refused ({type(error).__name__})"] += 1
        self.watch.close()
        self.engine.dispose()


def shoe_worker(plan: WorkerPlan, stop: MpEvent, reports: multiprocessing.Queue[dict[str, Any]]) -> None:
    """One worker process: its tables' shoes, shoe daemons and dealers (and bettors) until ``stop``."""
    logging.basicConfig(level=logging.ERROR)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us through ``stop``
    halt = threading.Event()
    threads: list[threading.Thread] = []
    shoes: list[VirtualShoe] = []
    daemons: list[ShoeDaemon] = []
    dealers: list[SimulatedDealer] = []
    run_dir = Path(plan.run_dir)
    written: list[tuple[str, str, float]] = []

    def start(target: Any, name: str) -> None:
        thread = threading.Thread(target=target, args=(halt,), name=name, daemon=True)
        thread.start()
        threads.append(thread)

    bettor = Bettor(plan) if any(plan.players.values()) else None
    try:
        for table, seed in plan.tables:
            shoe = VirtualShoe("line", run_dir / f"pty-{table}")
            shoes.append(shoe)
            config = ShoeConfig(table, f"{table}-shoe", run_dir / f"shoe-{table}.outbox", plan.url, "sim")
            daemon = ShoeDaemon(config, SerialShoe(str(shoe.path), "line", backoff=Backoff(0.05)).events)
            daemons.append(daemon)
            start(daemon.run, f"shoe-{table}")
            time_cards(shoe, table, written)
            dealer = SimulatedDealer(plan.url, table, shoe, seed=seed, pace=0.0)
            dealers.append(dealer)
            start(dealer.run, f"dealer-{table}")
        if bettor is not None:
            bettor.watch.wait_subscribed()
            start(bettor.run, "bettor")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
            d.device_state == "connected" and d.client.is_connected() for d in daemons
        ):
            time.sleep(0.05)
        for dealer in dealers:
            dealer.console.wait_subscribed()
        reports.put({"ready": os.getpid()})
        stop.wait()
    finally:
        halt.set()
        for thread in threads:
            thread.join(timeout=15)
        for shoe in shoes:
            shoe.close()
        stats: Counter[str] = Counter(bettor.stats if bettor else {})
        stats["cards dealt by dealers"] = sum(len(dealer._dealt) for dealer in dealers)
        stats["shoe messages published"] = sum(d.counters.cards + d.counters.new_decks for d in daemons)
        stats["shoe resend requests"] = sum(d.counters.resend_requests for d in daemons)
        stats["threads still running"] = sum(thread.is_alive() for thread in threads)
        stats["ptys left open"] = sum(shoe.plugged for shoe in shoes)
        reports.put({"done": os.getpid(), "stats": dict(stats), "written": written})


def time_cards(shoe: VirtualShoe, table: str, written: list[tuple[str, str, float]]) -> None:
    """Note (table, card, wall time) as each card goes onto the pty."""
    deal = shoe.deal

    def timed_deal(code: str, burn: bool = False) -> None:
        written.append((table, code, time.time()))
        deal(code, burn)

    shoe.deal = timed_deal  # type: ignore[method-assign]


# ---- the parent: database, controller process, measurement ------------------------------------------


@contextlib.contextmanager
def database(directory: Path, keep: bool) -> Iterator[tuple[str, str]]:
    """(URL for every process, a description): a fresh SQLite file, or a fresh schema of STUDIO_DATABASE_URL."""
    given = os.environ.get("STUDIO_DATABASE_URL")
    if not given:
        yield f"sqlite:///{directory / 'studio.db'}", "SQLite (fresh file)"
        return
    schema = f"bench_tables_{uuid.uuid4().hex[:10]}"
    admin = make_engine(given, pool_size=1)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(resolve_url(given)).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False), f"PostgreSQL, schema {schema}"
    finally:
        if not keep:
            with admin.begin() as connection:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@contextlib.contextmanager
def run_directory(keep: bool) -> Iterator[Path]:
    """A temporary directory for the ptys, outboxes, the SQLite file and the controller's log."""
    directory = Path(tempfile.mkdtemp(prefix="bench-tables-"))
    try:
        yield directory
    finally:
        links = sorted(str(path.relative_to(directory)) for path in directory.rglob("shoe") if path.is_symlink())
        if links:
            print(f"pty links left behind: {links[:5]}", file=sys.stderr)
        if keep:
            print(f"kept {directory}", file=sys.stderr)
        else:
            shutil.rmtree(directory, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tracker(process: psutil.Process) -> bool:
    """multiprocessing's resource tracker (it lives as long as this process; not one of ours to stop)."""
    with contextlib.suppress(psutil.Error):
        return "resource_tracker" in " ".join(process.cmdline())
    return False


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """utime + stime of the process (all its threads), or of one of its threads, from /proc."""
    path = Path(f"/proc/{pid}/task/{thread}/stat") if thread else Path(f"/proc/{pid}/stat")
    fields = path.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_queue_seconds(pid: int) -> float:
    """How long the process's main thread has waited, runnable, for a CPU (0 where schedstat is missing)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def named_cpu(names: tuple[str, ...]) -> dict[str, float]:
    """CPU seconds so far of every process with one of these names (whoever's), summed per name."""
    totals: dict[str, float] = dict.fromkeys(names, 0.0)
    for process in psutil.process_iter(["name"]):
        name = process.info["name"]
        if name in totals:
            with contextlib.suppress(psutil.Error, FileNotFoundError, ProcessLookupError):
                totals[name] += cpu_seconds(process.pid)
    return totals


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return float(sum(values) - idle), float(sum(values))


@dataclass
class Sample:
    wall: float
    at: datetime
    controller: float
    controller_main: float  # its main thread: the loop that handles every input and ticks every table
    main_waiting: float  # seconds that thread was runnable but waited for a CPU (/proc schedstat)
    workers: float
    bench: float  # this process (the floor measurement, the samples)
    others: dict[str, float]
    machine: tuple[float, float]
    load: tuple[float, float, float]
    metrics: dict[str, dict[tuple[tuple[str, str], ...], float]]


def scrape(port: int) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = defaultdict(dict)
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def sample(controller: int, workers: list[int], port: int) -> Sample:
    return Sample(
        time.perf_counter(), datetime.now(UTC), cpu_seconds(controller), cpu_seconds(controller, controller),
        run_queue_seconds(controller),
        sum(cpu_seconds(pid) for pid in workers), cpu_seconds(os.getpid()),
        named_cpu(("postgres", "mosquitto")), machine_busy(), os.getloadavg(), scrape(port),
    )  # fmt: skip


def aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass
class Timers:
    """Lateness (seconds) of every timer the controller acted on, by kind; and the ones it never acted on."""

    late: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    never: list[str] = field(default_factory=list)
    deck_waits: int = 0


def analyse(
    service: RoundService, tables: list[str], start: datetime, end: datetime, stopped: datetime, pause: timedelta
) -> tuple[Timers, list[Any], int]:
    """Timers due in [start, end]; the rounds of our tables; wagers settled in the interval."""
    with service.sessions() as session:
        rounds = session.execute(select(Round).where(Round.table_id.in_(tables))).scalars().all()
        entries = session.execute(
            select(RoundLogEntry.round_id, RoundLogEntry.seq, RoundLogEntry.command, RoundLogEntry.actor,
                   RoundLogEntry.created_at)
            .join(Round, Round.id == RoundLogEntry.round_id)
            .where(Round.table_id.in_(tables))
            .order_by(RoundLogEntry.round_id, RoundLogEntry.seq)
        ).all()  # fmt: skip
        decks = session.execute(
            select(ShoeJournal.table_id, ShoeJournal.received_at).where(
                ShoeJournal.table_id.in_(tables), ShoeJournal.kind == "new_deck"
            )
        ).all()
        wagers = session.execute(
            select(Wager.id, Round.settled_at)
            .join(Round, Round.id == Wager.round_id)
            .where(Round.table_id.in_(tables), Wager.net.is_not(None))
        ).all()
    settled_wagers = sum(1 for _id, at in wagers if at is not None and start <= aware(at) <= end)
    log: dict[str, list[Any]] = defaultdict(list)
    for entry in entries:
        log[entry.round_id].append(entry)
    timers = Timers()

    def due(moment: datetime) -> bool:
        return start <= moment <= end

    overdue = stopped - timedelta(seconds=STUCK_SECONDS)
    for round_ in rounds:
        settings = TableSettings.from_mapping(json.loads(round_.settings))
        closes = aware(round_.betting_closes_at)
        engine = PokDengRound(settings)
        window: tuple[str, datetime] | None = None
        closed_betting = False
        for entry in log[round_.id]:
            command = json.loads(entry.command)
            if command["type"] == "recalculate":
                continue
            at = aware(entry.created_at)
            if entry.actor == "controller" and command["type"] == "close_betting":
                closed_betting = True
                if due(closes):
                    timers.late["close betting"].append((at - closes).total_seconds())
            elif entry.actor == "controller" and command["type"] in WINDOW_COMMANDS and window and due(window[1]):
                timers.late[window[0]].append((at - window[1]).total_seconds())
            events = engine.apply(ev.command_from_dict(command))
            window = None if command["type"] != "buy_insurance" else window
            for event in events:
                if isinstance(event, ev.InsuranceOffered):
                    window = ("close insurance", at + timedelta(milliseconds=settings.insurance_window_ms))
                elif isinstance(event, ev.DecisionWindowOpened):
                    window = ("decision timeout", at + timedelta(milliseconds=settings.decision_window_ms))
        if not closed_betting and round_.phase == Phase.BETTING and closes < overdue:
            timers.never.append(f"{round_.id}: betting never closed (due {closes:%H:%M:%S.%f})")
        if window is not None and window[1] < overdue:
            timers.never.append(f"{round_.id}: {window[0]} never done (due {window[1]:%H:%M:%S.%f})")
    by_table: dict[str, list[Any]] = defaultdict(list)
    for round_ in rounds:
        by_table[round_.table_id].append(round_)
    reloads: dict[str, list[datetime]] = defaultdict(list)
    for table, at in decks:
        reloads[table].append(aware(at))
    for table, own in by_table.items():
        own.sort(key=lambda r: r.number)
        for before, after in zip(own, [*own[1:], None], strict=True):
            ended = before.settled_at or before.voided_at
            if ended is None:
                continue
            opens = aware(ended) + pause
            waited = any(at > opens and (after is None or at <= aware(after.opened_at)) for at in reloads[table])
            if waited:
                timers.deck_waits += 1 if after is not None and due(opens) else 0
            elif after is not None:
                if due(opens):
                    timers.late["open next round"].append((aware(after.opened_at) - opens).total_seconds())
            elif opens < overdue:
                timers.never.append(f"{table}: next round never opened (due {opens:%H:%M:%S.%f})")
    return timers, list(rounds), settled_wagers


def card_lag(
    service: RoundService, tables: list[str], written: list[tuple[str, str, float]], start: datetime, end: datetime
) -> tuple[list[float], int]:
    """Card on the pty → the controller's journal row for it (the card is in the round), for cards written in
    [start, end]; and how many of those the controller had not handled when it was stopped.

    The k-th time a card went onto a table's pty is the k-th journal row of that card at that table.
    """
    with service.sessions() as session:
        rows = session.execute(
            select(ShoeJournal.table_id, ShoeJournal.card, ShoeJournal.received_at)
            .where(ShoeJournal.table_id.in_(tables), ShoeJournal.card.is_not(None))
            .order_by(ShoeJournal.id)
        ).all()
    journaled: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    for table, card, moment in rows:
        journaled[(table, str(card))].append(aware(moment))
    seen: Counter[tuple[str, str]] = Counter()
    lags: list[float] = []
    unhandled = 0
    for table, card, sent in sorted(written, key=lambda item: item[2]):
        index = seen[(table, card)]
        seen[(table, card)] += 1
        if not start.timestamp() <= sent <= end.timestamp():
            continue
        handled = journaled[(table, card)]
        if index < len(handled):
            lags.append(handled[index].timestamp() - sent)
        else:
            unhandled += 1
    return lags, unhandled


def histogram_delta(
    before: dict[str, dict[tuple[tuple[str, str], ...], float]],
    after: dict[str, dict[tuple[tuple[str, str], ...], float]],
    name: str,
) -> list[tuple[float, float]]:
    """(upper bound, count) per bucket of a histogram's growth over the interval, summed over every label."""
    buckets: dict[float, float] = defaultdict(float)
    for labels, value in after.get(f"{name}_bucket", {}).items():
        bound = float(dict(labels)["le"])
        buckets[bound] += value - before.get(f"{name}_bucket", {}).get(labels, 0.0)
    return sorted(buckets.items())


def bucket_quantile(buckets: list[tuple[float, float]], q: float) -> str:
    total = buckets[-1][1] if buckets else 0
    if not total:
        return "–"
    for bound, count in buckets:
        if count >= q * total:
            return f"≤ {1000 * bound:g} ms" if bound != float("inf") else "> 5 s"
    return "?"


def counter_delta(before: Sample, after: Sample, name: str, label: str) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for labels, value in after.metrics.get(name, {}).items():
        totals[dict(labels)[label]] += value - before.metrics.get(name, {}).get(labels, 0.0)
    return {key: value for key, value in totals.items() if value}


@contextlib.contextmanager
def retained_cleared(url: str, tables: list[str]) -> Iterator[None]:
    """Leave no retained messages of this run on the broker, however the run ends."""
    try:
        yield
    finally:
        clear_retained(url, tables)


def clear_retained(url: str, tables: list[str]) -> None:
    client = make_client(f"bench-tables-clear-{uuid.uuid4().hex[:8]}")
    connect(client, url)
    deadline = time.monotonic() + 10
    while not client.is_connected() and time.monotonic() < deadline:
        time.sleep(0.02)
    infos = [
        client.publish(topic, b"", qos=1, retain=True)
        for table in tables
        for topic in (topics.round_state(table), topics.round_dealer(table), topics.shoe_status(table))
    ]
    status = getattr(topics, "controller_status", None)  # the controller's own retained status, where it has one
    if status is not None:
        name = controller_name(tables)
        infos.append(client.publish(status(name), b"", qos=1, retain=True))
    for info in infos:
        with contextlib.suppress(RuntimeError, ValueError):
            info.wait_for_publish(timeout=5)
    client.disconnect()
    client.loop_stop()


def wait_ready(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the controller exited with {process.returncode} before it was ready")
        with contextlib.suppress(OSError):
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError("the controller did not become ready")


def start_controller(command: list[str], port: int, log_path: Path) -> subprocess.Popen[bytes]:
    """The controller process, once ready (its health port answers); its log's end printed if it never is."""
    with log_path.open("wb") as log_file:
        controller = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        wait_ready(port, controller)
    except RuntimeError:
        print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
        stop(controller)
        raise
    return controller


def stop_controller(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    began = time.perf_counter()
    return stop(process), time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60, help="measured interval")
    parser.add_argument("--warmup", type=float, default=10, help="seconds of play before the interval")
    parser.add_argument("--shoe-processes", type=int, default=4, help="worker processes for shoes and dealers")
    parser.add_argument("--broker", default=None, help="mqtt://host:port (default: the embedded amqtt)")
    parser.add_argument("--window-ms", type=int, default=100, help="betting, insurance and decision windows")
    parser.add_argument("--result-pause-ms", type=int, default=100, help="results shown before the next round")
    parser.add_argument("--bets", type=int, default=2, help="players betting at each table each round (0: none)")
    parser.add_argument("--late-ms", type=float, default=100, help="a timer acted on later than this is missed")
    parser.add_argument("--profile", type=Path, default=None, help="run the controller under cProfile into FILE")
    parser.add_argument(
        "--controller-script", type=Path, default=None,
        help="run the controller as `python SCRIPT controller …` (a wrapper that patches or instruments it)",
    )  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL schema and the run directory")
    args = parser.parse_args()
    run = uuid.uuid4().hex[:4]
    tables = [f"B{run}-{index + 1}" for index in range(args.tables)]
    settings = HOUSE_SETTINGS | {f"{kind}_window_ms": args.window_ms for kind in ("betting", "insurance", "decision")}
    players = {table: [f"p{run}-{index + 1}-{j + 1}" for j in range(args.bets)] for index, table in enumerate(tables)}
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"start: {uptime}", file=sys.stderr)
    with (
        run_directory(args.keep) as directory,
        broker(args.broker) as url,
        database(directory, args.keep) as (database_url, database_name),
        retained_cleared(url, tables),
    ):
        engine = make_engine(database_url, pool_size=2)
        migrate(engine)
        sessions = session_factory(engine)
        service = RoundService(sessions, games=STUDIO_GAMES)
        for table in tables:
            service.create_table(table, "THB", settings)
        wallets, registry = WalletService(sessions), PlayerService(sessions)
        for name in (p for own in players.values() for p in own):
            registry.register(name)
            wallets.deposit(name, BANKROLL, key=f"bench-{name}", actor="bench")
        print(f"{len(tables)} tables and {args.bets * len(tables)} players created; floor (idle)…", file=sys.stderr)
        idle_floor = floor(url, 1000, 0.005)
        context = multiprocessing.get_context("spawn")
        stop = context.Event()
        reports: multiprocessing.Queue[dict[str, Any]] = context.Queue()
        workers = []
        for index in range(args.shoe_processes):
            own = [(table, n) for n, table in enumerate(tables) if n % args.shoe_processes == index]
            if own:
                plan = WorkerPlan(url, database_url, str(directory), own, {t: players[t] for t, _ in own})
                workers.append(context.Process(target=shoe_worker, args=(plan, stop, reports), daemon=True))
        port = free_port()
        studio = Path(sys.executable).with_name("studio")
        pause = f"{args.result_pause_ms / 1000:g}"  # the CLI takes seconds
        options = [
            "controller", "--tables", ",".join(tables), "--result-pause", pause,
            "--broker", url, "--database", database_url, "--http-port", str(port), "--allow-unsigned",
        ]  # fmt: skip
        entry = [str(args.controller_script)] if args.controller_script else ["-m", "services.cli"]
        if args.profile:  # (cProfile turns the program's exit status into 0)
            command = [sys.executable, "-m", "cProfile", "-o", str(args.profile), *entry, *options]
        elif args.controller_script:
            command = [sys.executable, *entry, *options]
        else:
            command = [str(studio), *options]
        controller: subprocess.Popen[bytes] | None = None
        log_path = directory / "controller.log"
        worker_stats: Counter[str] = Counter()
        written: list[tuple[str, str, float]] = []
        try:
            for worker in workers:
                worker.start()
            ready = 0
            while ready < len(workers):
                report_ = reports.get(timeout=120)
                ready += "ready" in report_
            print(f"{len(workers)} shoe processes ready; starting the controller", file=sys.stderr)
            controller = start_controller(command, port, log_path)
            worker_pids = [w.pid for w in workers if w.pid is not None]
            time.sleep(args.warmup)
            before = sample(controller.pid, worker_pids, port)
            print(f"measuring {args.seconds:g} s…", file=sys.stderr)
            loaded_floor = floor(url, 1000, 0.005)
            time.sleep(max(0.0, args.seconds - (time.perf_counter() - before.wall)))
            after = sample(controller.pid, worker_pids, port)
            uptime_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
            with service.sessions() as session:  # what every table did last, while all still runs
                last = dict(
                    session.execute(
                        select(Round.table_id, RoundLogEntry.created_at)
                        .join(RoundLogEntry, RoundLogEntry.round_id == Round.id)
                        .where(Round.table_id.in_(tables))
                        .order_by(RoundLogEntry.created_at)
                    ).all()
                )
        finally:
            stopped, began = datetime.now(UTC), time.perf_counter()
            code, took = stop_controller(controller) if controller is not None else (None, 0.0)
            stop.set()
            done, deadline = 0, time.monotonic() + 30
            while done < sum(worker.pid is not None for worker in workers) and time.monotonic() < deadline:
                with contextlib.suppress(queue.Empty):  # read before joining: a worker exits once its report is read
                    item = reports.get(timeout=1)
                    done += "done" in item
                    worker_stats.update(item.get("stats", {}))
                    written += item.get("written", [])
            for worker in workers:
                worker.join(timeout=10)
                if worker.is_alive():
                    worker.kill()
                    worker.join(timeout=10)
            print(f"everything stopped in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        exits = [worker.exitcode for worker in workers]
        orphans = [p.pid for p in psutil.Process().children(recursive=True) if not tracker(p)]
        timers, rounds, settled_wagers = analyse(
            service, tables, before.at, after.at, stopped, timedelta(milliseconds=args.result_pause_ms)
        )
        lags, unhandled = card_lag(service, tables, written, before.at, after.at)
        engine.dispose()
        log_lines = log_path.read_text(errors="replace").splitlines()
    report(
        args, tables, url, database_name, uptime, uptime_end, idle_floor, loaded_floor, before, after, rounds, timers,
        settled_wagers, last, (code, took, exits, orphans, worker_stats), log_lines, (lags, unhandled), command,
    )  # fmt: skip
    if args.profile:
        profile_report(args.profile)


def report(
    args: Any, tables: list[str], url: str, database_name: str, uptime: str, uptime_end: str, idle_floor: list[float],
    loaded_floor: list[float], before: Sample, after: Sample, rounds: list[Any], timers: Timers, settled_wagers: int,
    last: dict[str, datetime], shutdown: tuple[Any, float, list[Any], list[int], Counter[str]], log_lines: list[str],
    card_lags: tuple[list[float], int], command: list[str],
) -> None:  # fmt: skip
    wall = after.wall - before.wall
    start, end = before.at, after.at
    settled = [r for r in rounds if r.settled_at is not None and start <= aware(r.settled_at) <= end]
    voided = [r for r in rounds if r.voided_at is not None and start <= aware(r.voided_at) <= end]
    per_table = Counter(r.table_id for r in settled)
    counts = [per_table.get(table, 0) for table in tables]
    cores = os.cpu_count() or 1
    busy = (after.machine[0] - before.machine[0]) / max(1.0, after.machine[1] - before.machine[1])
    print(f"broker {url} ({'given' if args.broker else 'embedded amqtt'}); database {database_name}")
    print(
        f"{args.tables} tables, {args.shoe_processes} shoe processes, windows {args.window_ms} ms, "
        f"result pause {args.result_pause_ms} ms, bets: "
        + (f"on ({args.bets} players × 1 player-side bet per table per round)" if args.bets else "off")
    )
    print(f"controller: {' '.join(command)}")
    print(f"load before: {uptime}")
    print(f"load after:  {uptime_end}")
    print(f"measured {wall:.1f} s after {args.warmup:g} s warm-up")
    print()
    print(f"rounds settled: {len(settled)} = {len(settled) / wall:.1f} rounds/s ({len(voided)} voided)")
    if counts:
        print(f"  per table: min {min(counts)}, median {sorted(counts)[len(counts) // 2]}, max {max(counts)} rounds "
              f"({min(counts) / wall:.2f}–{max(counts) / wall:.2f} rounds/s)")  # fmt: skip
    print(f"  wagers settled in the interval: {settled_wagers}")
    used = after.controller - before.controller
    per_round = 1000 * used / max(1, len(settled))
    print(f"controller process CPU: {used / wall:.0%} of one core ({per_round:.1f} ms CPU per round settled)")
    main_thread = (after.controller_main - before.controller_main) / wall
    print(f"  of which its main thread (the one loop: every input, every tick) {main_thread:.0%}, the other threads "
          f"(paho network loops of the controller and of each table's shoe feed, feed gap tickers, /metrics) "
          f"{used / wall - main_thread:.0%}")  # fmt: skip
    runnable = (after.main_waiting - before.main_waiting) / wall
    print(f"  main thread's time: on a CPU {main_thread:.0%}, runnable but waiting for a CPU {runnable:.0%}, "
          f"blocked {1 - main_thread - runnable:.0%} (database round trips and commits, locks, the GIL, "
          f"an empty inbox)")  # fmt: skip
    others = ", ".join(
        f"{name} {(after.others[name] - before.others[name]) / wall:.0%}" for name in after.others
    )  # fmt: skip
    print(f"  beside: shoe/dealer/bettor processes {(after.workers - before.workers) / wall:.0%}, {others} "
          f"(all of its processes, whoever's); machine {busy:.0%} of {cores} cores busy")  # fmt: skip
    ours = used + after.workers - before.workers + after.bench - before.bench
    ours += sum(after.others[name] - before.others[name] for name in after.others)
    other = busy * cores - ours / wall
    print(f"  other work on the machine (busy cores − the processes above − this one): {other:.0%} of a core")
    print(f"  load average at the end: {' '.join(f'{v:.2f}' for v in after.load)}")
    print()
    print(f"timers due in the interval, acted on after their deadline (missed: > {args.late_ms:g} ms late, or never)")
    print(f"{'timer':<20}{'count':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'>50ms':>7}{'>100ms':>8}{'>250ms':>8}"
          f"{'>1s':>6}{'missed':>8}")  # fmt: skip
    every: list[float] = []
    limit = args.late_ms / 1000
    for kind in ("open next round", "close betting", "close insurance", "decision timeout"):
        values = timers.late.get(kind, [])
        every += values
        row_(kind, values, limit)
    row_("all", every, limit)
    missed = sum(v > limit for v in every) + len(timers.never)
    print(f"missed timers: {missed} ({sum(v > limit for v in every)} late, {len(timers.never)} never acted on)")
    for line in timers.never[:10]:
        print(f"  {line}")
    print(f"  (rounds that waited for a new deck after the result pause, not counted as timers: {timers.deck_waits})")
    still = STUCK_SECONDS + max(args.window_ms, args.result_pause_ms) / 1000  # a window may pass without a log entry
    stuck = [t for t, at in last.items() if (end - aware(at)).total_seconds() > still]
    quiet = [t for t in tables if t not in last]
    named = f": {', '.join(sorted(stuck + quiet)[:10])}" if stuck or quiet else ""
    print(f"stuck tables (round log still for {still:g} s at the end): {len(stuck + quiet)}{named}")
    print()
    lags, unhandled = card_lags
    if lags:
        p50, p99, top, _mean = percentiles(lags)
        print(f"card on the pty → in its round (the controller's journal row): {len(lags)} cards written in the "
              f"interval, p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {top:.0f} ms; "
              f"{unhandled} not yet handled at the stop")  # fmt: skip
    lag = histogram_delta(before.metrics, after.metrics, "studio_mqtt_receive_lag_seconds")
    total = lag[-1][1] if lag else 0
    quantiles = [bucket_quantile(lag, q) for q in (0.5, 0.99, 1.0)]
    print(f"shoe stamp → controller handles it ({total:.0f} messages; /metrics bucket bounds): "
          f"p50 {quantiles[0]}, p99 {quantiles[1]}, max {quantiles[2]}")  # fmt: skip
    settle = histogram_delta(before.metrics, after.metrics, "studio_settlement_seconds")
    print(f"settlement in the ledger: p50 {bucket_quantile(settle, 0.5)}, p99 {bucket_quantile(settle, 0.99)}")
    cards = counter_delta(before, after, "studio_cards_total", "disposition")
    alerts = counter_delta(before, after, "studio_alerts_total", "kind")
    print(f"controller's cards by disposition: {dict(sorted(cards.items()))}; alerts: {dict(sorted(alerts.items()))}")
    print()
    print(f"{'floor: paho publish → subscriber (QoS 1)':<48}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}")
    for label, values in (("  idle, before the controller starts", idle_floor), ("  under load, in the interval",
                                                                                    loaded_floor)):  # fmt: skip
        p50, p99, top, _mean = percentiles(values)
        print(f"{label:<48}{p50:>8.2f}{p99:>8.2f}{top:>8.2f}")
    if every:
        ratio = percentiles(every)[1] / percentiles(loaded_floor)[1]
        print(f"ratio p99 timer lateness / p99 floor under load: {ratio:.1f}×")
    print()
    code, took, exits, orphans, stats = shutdown
    print(f"shutdown: controller exit code {code} after SIGTERM in {took:.1f} s; shoe processes exit codes {exits}; "
          f"processes left: {len(orphans)}")  # fmt: skip
    print(f"  workers: {dict(sorted(stats.items()))}")
    levels: Counter[str] = Counter()
    notable: list[str] = []
    for line in log_lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            levels["non-JSON"] += 1
            if len(notable) < 5 and line.strip():
                notable.append(line.strip()[:200])
            continue
        levels[entry.get("level", "?")] += 1
        if entry.get("level") in ("warning", "error", "critical") and len(notable) < 5:
            notable.append(f"{entry['level']}: {entry.get('message', '')[:200]}")
    print(f"  controller log lines by level: {dict(levels)}")
    for line in notable:
        print(f"    {line}")
    late = percentiles(every) if every else (0.0, 0.0, 0.0, 0.0)
    figures = {
        "tables": args.tables, "database": database_name, "rounds_per_s": round(len(settled) / wall, 2),
        "controller_cpu_ms_per_round": round(per_round, 1), "controller_cpu_share": round(used / wall, 3),
        "timer_late_p50_ms": round(late[0], 1), "timer_late_p99_ms": round(late[1], 1), "missed_timers": missed,
        "floor_p99_ms_under_load": round(percentiles(loaded_floor)[1], 2),
        "card_to_round_p99_ms": round(percentiles(lags)[1], 1) if lags else None,
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: this run's figures


def row_(kind: str, values: list[float], limit: float) -> None:
    if not values:
        print(f"{kind:<20}{0:>7}")
        return
    p50, p99, top, _mean = percentiles(values)
    over = [sum(v > bound for v in values) for bound in (0.05, 0.1, 0.25, 1.0)]
    print(f"{kind:<20}{len(values):>7}{p50:>9.1f}{p99:>9.1f}{top:>9.1f}{over[0]:>7}{over[1]:>8}{over[2]:>8}"
          f"{over[3]:>6}{sum(v > limit for v in values):>8}")  # fmt: skip


def profile_report(path: Path) -> None:
    import pstats

    print()
    print(f"controller profile (cProfile, main thread only: the controller's worker loop), {path}")
    stats = pstats.Stats(str(path))
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
