"""The production shape, started from the ``deploy/`` files themselves and broken on purpose.

Mosquitto with ``deploy/mosquitto/mosquitto.conf`` (its ACL, passwords from ``make-passwords``), PostgreSQL set up by
``deploy/postgres/setup.sql``, two ``studio api`` processes behind HAProxy with ``deploy/haproxy/haproxy.cfg``, two
``studio controller`` processes for the same table (one active, one ``--standby``), a signed ``studio shoe`` daemon on
a pty shoe; the test is the dealer (it deals what the dealer console asks for), the operator and the players (over
HTTP, through the proxy only). Then: a round; the active controller killed (SIGKILL) mid-deal — the standby takes
the table over and the round settles once; an API process killed — the proxy sends everyone to the other, and a slip
sent again with its key is placed once; Mosquitto stopped mid-deal — the card dealt meanwhile comes from the shoe's
outbox, every part reconnects; the shoe's daemon killed and started again; PostgreSQL refusing connections as a
betting window closes — the API answers 503 with Retry-After, then recovers, and so does the table. Prometheus runs the
deployed alert rules over it all (``tests/topology/prometheus.py``) and each alert must be seen firing at its fault.
At the end: money conserved to the unit, every shoe card journaled once, every round read alike from both API
processes.

Run by ``.ci/run`` (``STUDIO_REQUIRE_TOPOLOGY=1``: a missing part fails it) and by ``make topology``; skipped by
``make test`` (it needs Mosquitto, HAProxy and PostgreSQL's superuser: ``STUDIO_TEST_DATABASE_URL``).
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from hardware.sim import VirtualShoe
from services.bus import topics
from services.bus.client import Subscriber
from services.cards import FULL_DECK
from services.catalog import STUDIO_GAMES
from services.db import make_engine, migrate, session_factory
from services.journal.models import ShoeJournal
from services.ledger.wallets import WalletService
from services.rounds import audit, checks
from services.rounds.models import Wager
from services.rounds.players import PlayerService
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService
from services.shoe.signing import new_key, write_key
from services.sim.checks import TOTALS
from tests.conftest import free_port
from tests.deploy.test_deploy_files import studio_command_lines
from tests.support import wait_until
from tests.topology import prometheus
from tests.topology.camera import StreamedCamera, calibrated

pytestmark = pytest.mark.topology

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
TABLE = "T1"
NAME = "studio_topology"  # the deploy's role and database, renamed: a real ``studio`` database is never touched
BETTORS = int(os.environ.get("STUDIO_TOPOLOGY_BETTORS", "300"))  # each sends one slip in the first round
VIEWERS = int(os.environ.get("STUDIO_TOPOLOGY_VIEWERS", "2000"))  # of the public stream, through the proxy
WINDOWS = {"betting_window_ms": 12_000, "insurance_window_ms": 1_500, "decision_window_ms": 1_500}


def needed() -> str | None:
    """What this machine lacks to run the topology (None: nothing)."""
    if not shutil.which("mosquitto") and not Path("/usr/sbin/mosquitto").exists():
        return "mosquitto"
    if not shutil.which("haproxy") and not Path("/usr/sbin/haproxy").exists():
        return "haproxy"
    if not shutil.which("psql"):
        return "psql"
    if not shutil.which("prometheus"):
        return "prometheus"
    if not (os.environ.get("STUDIO_TEST_DATABASE_URL") or "").startswith("postgresql"):
        return "STUDIO_TEST_DATABASE_URL (a PostgreSQL superuser's URL)"
    return None


@dataclass
class Topology:
    tmp: Path
    logs: dict[str, Path] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    passwords: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    database_url: str = ""
    shoe: VirtualShoe | None = None
    camera: StreamedCamera = field(default_factory=StreamedCamera)
    console: Subscriber | None = None
    dealt: set[tuple[str, str, int]] = field(default_factory=set)  # the cards the console asked for, dealt
    deck: list[str] = field(default_factory=lambda: shuffled(0))  # what is left in the shoe (its last card first)
    cards: int = 0  # messages the shoe sent: cards, burns and new decks
    reloaded_for: str = ""  # the deck_low alert a new deck was loaded for
    headers: dict[str, str] = field(default_factory=dict)  # the last HTTP answer's, names in lower case
    superuser: str = ""
    prometheus: prometheus.Prometheus = field(default_factory=lambda: prometheus.Prometheus(0))
    supervised: set[str] = field(default_factory=set)  # restarted when they end, as systemd does (Restart=always)
    closing: threading.Event = field(default_factory=threading.Event)

    # ---- the parts ----------------------------------------------------------------------

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        self.logs[name] = self.tmp / f"{name}.log"
        self.commands[name] = (command, env)
        self.processes[name] = subprocess.Popen(
            command, cwd=self.tmp, env=os.environ | (env or {}), stdout=self.logs[name].open("ab"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def studio(self, name: str, *arguments: str, env: dict[str, str] | None = None) -> None:
        self.start(name, [sys.executable, "-m", "services.cli", *arguments], env)

    def controller(self, name: str) -> list[str]:
        """A controller's command line (its metrics on its own port)."""
        return [
            "controller", "--tables", TABLE, "--broker", self.mqtt("controller"), "--database", self.database_url,
            "--shoe-keys", str(self.tmp / "keys"), "--lease-seconds", "3", "--result-pause", "2", "--cameras",
            "--http-port", str(self.ports[name]),
        ]  # fmt: skip

    def mqtt(self, role: str) -> str:
        return f"mqtt://{role}:{quote(self.passwords[role], safe='')}@127.0.0.1:{self.ports['mqtt']}"

    def told(self) -> str:
        """The tail of every part's log, and which have ended (a wait that timed out says it)."""
        parts = []
        for name, log in self.logs.items():
            ended = self.processes[name].poll()
            state = f"ended {ended}" if ended is not None else "running"
            parts.append(f"\n--- {name} ({state}) ---\n{log.read_text(errors='replace')[-1200:]}")
        return "".join(parts)

    def wait(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        try:
            wait_until(condition, timeout, what)
        except TimeoutError as error:
            raise TimeoutError(f"{error}{self.told()}") from None

    # ---- HTTP, as a client of the proxy (or of one API process) -------------------------

    def http(self, method: str, path: str, who: str = "", body: Any = None, key: str = "", port: str = "proxy") -> Any:
        headers = {"Content-Type": "application/json"}
        if who:
            headers["Authorization"] = f"Bearer {self.tokens[who]}"
        if key:
            headers["Idempotency-Key"] = key
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.ports[port]}{path}", data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                self.headers = {name.lower(): value for name, value in response.headers.items()}
                return response.status, parsed(response.read())
        except urllib.error.HTTPError as error:
            self.headers = {name.lower(): value for name, value in error.headers.items()}
            return error.code, parsed(error.read())

    @staticmethod
    def listening(port: int) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    def stop(self, name: str, how: signal.Signals = signal.SIGTERM) -> float:
        """Stop the part (SIGTERM as systemd does, or SIGKILL); when it was told to (time.time())."""
        told = time.time()
        self.processes[name].send_signal(how)
        self.processes[name].wait(10)
        return told

    def again(self, name: str) -> None:
        """Start the part again with its command line (its log goes on)."""
        self.start(name, *self.commands[name])

    def alerted(self, alert: str, since: float, **labels: str) -> set[str]:
        """Wait for ``alert`` to have fired since ``since`` (a fault's time); the set of it, for the test's tally."""
        self.wait(lambda: self.prometheus.fired(alert, since, **labels), 30, f"the alert {alert} {labels or ''}")
        return {alert}

    def supervise(self) -> None:
        """Start every supervised part that ended again a second later, as ``Restart=always`` / ``RestartSec=1``."""
        while not self.closing.wait(0.5):
            for name in sorted(self.supervised):
                if self.processes[name].poll() is not None and not self.closing.wait(1):
                    self.again(name)

    def psql(self, *commands: str) -> None:
        libpq = make_url(self.superuser).set(drivername="postgresql").render_as_string(hide_password=False)
        arguments = [argument for command in commands for argument in ("-c", command)]
        subprocess.run(["psql", libpq, "-q", "-v", "ON_ERROR_STOP=1", *arguments], check=True, capture_output=True)

    def answers(self, port: str) -> bool:
        try:
            return bool(self.http("GET", "/healthz", port=port)[0] == 200)
        except OSError:
            return False

    # ---- the dealer ---------------------------------------------------------------------

    def dealt_in(self, round_id: str) -> list[tuple[str, str, int]]:
        return [card for card in self.dealt if card[0] == round_id]

    def dealer_view(self) -> dict[str, Any]:
        assert self.console is not None
        views = [json.loads(m.payload) for m in list(self.console.messages) if m.payload]
        return views[-1] if views else {}

    def deal_until(self, done: Callable[[dict[str, Any]], bool], what: str) -> None:
        """Deal whatever the dealer console asks for, in any round, until ``done(view)`` (a minute at most); a deck
        reported low is burned to its end and a new one loaded, as a dealer does."""
        assert self.shoe is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            view = self.dealer_view()
            if done(view):
                return
            wanted = view.get("next_card")
            low = [alert["at"] for alert in view.get("alerts", []) if alert["kind"] == "deck_low"]
            checking = pending(view)
            if checking:  # turned up under the camera: the next card once the camera agreed
                self.camera.turn_up(view["round_id"], checking)
                time.sleep(0.05)
                continue
            if wanted and (view["round_id"], wanted["position"], wanted["index"]) not in self.dealt:
                self.dealt.add((view["round_id"], wanted["position"], wanted["index"]))
                self.shoe.deal(self.deck.pop(), burn=bool(wanted.get("burn")))
                self.cards += 1
            elif not wanted and low and low[-1] != self.reloaded_for:
                self.reloaded_for = low[-1]
                while self.deck:
                    self.shoe.deal(self.deck.pop(), burn=True)
                    self.cards += 1
                self.deck = shuffled(len(self.dealt))
                self.shoe.new_deck()
                self.cards += 1
            time.sleep(0.05)
        raise TimeoutError(f"not done in 60 s: {what}; last dealer view: {self.dealer_view()}{self.told()}")

    def asking(self, round_id: str, after: int) -> Callable[[dict[str, Any]], bool]:
        """A dealer view of ``round_id`` with ``after`` cards dealt, all taken (the console asks for one not dealt yet)
        and agreed by the camera: between the camera's words (see ``agreed``)."""

        def done(view: dict[str, Any]) -> bool:
            wanted = view.get("next_card")
            return bool(
                view.get("round_id") == round_id and len(self.dealt_in(round_id)) >= after and wanted
                and (round_id, wanted["position"], wanted["index"]) not in self.dealt and agreed(view)
            )  # fmt: skip

        return done

    def betting(self, after: str = "", left: float = 3) -> str:
        """A round taking bets ``left`` seconds more, after round ``after`` (rounds before it dealt to their end)."""

        def open_for_bets(view: dict[str, Any]) -> bool:
            closes = view.get("betting_closes_at")
            return (
                view.get("phase") == "betting" and view.get("round_id") != after and closes is not None
                and datetime.fromisoformat(closes) - datetime.now(UTC) > timedelta(seconds=left)
            )  # fmt: skip

        self.deal_until(open_for_bets, f"a round taking bets after {after or 'the start'}")
        return str(self.dealer_view()["round_id"])


class Viewers:
    """``count`` viewers of the table's public stream through the proxy, on one asyncio loop in a thread. A viewer
    whose connection ends (its API process killed) connects again with ``Last-Event-ID``; each keeps the last state
    it was sent."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.last: dict[int, dict[str, Any]] = {}
        self.ids: dict[int, str] = {}
        self.reconnects = 0
        self.failures: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),), daemon=True)
        self._thread.start()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        await asyncio.gather(*(self._viewer(n) for n in range(self.count)))

    async def _viewer(self, n: int) -> None:
        await asyncio.sleep(n * 0.002)  # a crowd arriving, not one burst
        while not self._stop.is_set():
            try:
                await self._watch(n)
            except OSError as error:
                self.failures.append(f"viewer {n}: {error}")
            if not self._stop.is_set():
                self.reconnects += 1
                await asyncio.sleep(0.2)

    async def _watch(self, n: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        resume = f"Last-Event-ID: {self.ids[n]}\r\n" if n in self.ids else ""
        request = f"GET /v1/tables/{TABLE}/state/stream HTTP/1.1\r\nHost: studio\r\nAccept: text/event-stream\r\n"
        writer.write(f"{request}{resume}\r\n".encode())
        await writer.drain()
        buffer = b""
        try:
            while not self._stop.is_set():
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), 0.5)
                except TimeoutError:
                    continue
                if not chunk:
                    return  # the connection ended: connect again
                buffer += chunk
                *frames, buffer = buffer.split(b"\n\n")
                for frame in frames:
                    fields = dict(line.split(": ", 1) for line in frame.decode().splitlines() if ": " in line)
                    if "data" in fields and fields["data"].startswith("{"):
                        self.last[n] = json.loads(fields["data"])
                        self.ids[n] = fields.get("id", self.ids.get(n, ""))
        finally:
            writer.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)


def shuffled(seed: int) -> list[str]:
    return [str(card) for card in random.Random(seed).sample(list(FULL_DECK), len(FULL_DECK))]


def parsed(body: bytes) -> Any:
    """A JSON answer, or the text of another (the proxy's own 503 page is HTML)."""
    try:
        return json.loads(body or b"null")
    except ValueError:
        return body.decode(errors="replace")


def deploy_mosquitto(tmp: Path, port: int, websockets: int) -> Path:
    """``deploy/mosquitto/mosquitto.conf`` with this run's ports and files (the rest as deployed)."""
    text = (DEPLOY / "mosquitto" / "mosquitto.conf").read_text()
    replaced = {
        r"^password_file .*$": f"password_file {tmp / 'passwd'}",
        r"^acl_file .*$": f"acl_file {DEPLOY / 'mosquitto' / 'acl'}",
        r"^listener 1883 127\.0\.0\.1$": f"listener {port} 127.0.0.1",
        r"^listener 9001$": f"listener {websockets} 127.0.0.1",
        r"^persistence_location .*$": f"persistence_location {tmp}/",
    }
    for pattern, line in replaced.items():
        text, count = re.subn(pattern, line, text, flags=re.MULTILINE)
        assert count == 1, f"deploy/mosquitto/mosquitto.conf has no line {pattern}: the test must follow it"
    config = tmp / "mosquitto.conf"
    config.write_text(f"{text}\nuser {getpass.getuser()}\n")  # whoever runs the test owns the password file
    return config


def deploy_postgres(superuser: str) -> str:
    """``deploy/postgres/setup.sql`` run by psql (its role and database named ``NAME``); the services' URL."""
    url = make_url(superuser)
    libpq = url.set(drivername="postgresql").render_as_string(hide_password=False)
    password = secrets.token_hex(12)
    subprocess.run(["psql", libpq, "-q", "-v", "ON_ERROR_STOP=1", *drop()], check=True, capture_output=True)
    script = re.sub(r"\bstudio\b", NAME, (DEPLOY / "postgres" / "setup.sql").read_text())
    subprocess.run(
        ["psql", libpq, "-q", "-v", "ON_ERROR_STOP=1", "-v", f"password='{password}'"], input=script.encode(),
        check=True, capture_output=True,
    )  # fmt: skip
    host, port = url.host or "127.0.0.1", url.port or 5432
    return f"postgresql+psycopg://{NAME}:{password}@{host}:{port}/{NAME}"


def drop_postgres(superuser: str) -> None:
    libpq = make_url(superuser).set(drivername="postgresql").render_as_string(hide_password=False)
    subprocess.run(["psql", libpq, "-q", *drop()], check=False, capture_output=True)


def drop() -> list[str]:
    """psql's arguments that drop the topology's database and role (each its own transaction)."""
    return ["-c", f"DROP DATABASE IF EXISTS {NAME} WITH (FORCE)", "-c", f"DROP ROLE IF EXISTS {NAME}"]


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[Topology]:
    lacking = needed()
    if lacking is not None:
        if os.environ.get("STUDIO_REQUIRE_TOPOLOGY"):
            pytest.fail(f"the topology test needs {lacking}")
        pytest.skip(f"needs {lacking} (CI installs it)")
    superuser = os.environ["STUDIO_TEST_DATABASE_URL"]
    run = Topology(tmp_path, superuser=superuser)
    parts = ("mqtt", "websockets", "proxy", "api1", "api2", "shoe-metrics", "camera-metrics", "controller-a",
             "controller-b")  # fmt: skip
    run.ports = {name: free_port() for name in (*parts, "prometheus")}
    try:
        # the broker, as deployed
        made = subprocess.run(
            [str(DEPLOY / "mosquitto" / "make-passwords"), str(tmp_path / "passwd")], check=True, capture_output=True,
            text=True,
        )  # fmt: skip
        run.passwords = dict(line.split() for line in made.stdout.splitlines())
        mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        config = deploy_mosquitto(tmp_path, run.ports["mqtt"], run.ports["websockets"])
        run.start("mosquitto", [mosquitto, "-c", str(config)])
        run.wait(lambda: run.listening(run.ports["mqtt"]), 10, "mosquitto to listen")
        # the database, as deployed; the table made by the operator's tools with short windows (a test's pace)
        run.database_url = deploy_postgres(superuser)
        engine = make_engine(run.database_url)
        migrate(engine)
        sessions = session_factory(engine)
        RoundService(sessions, games=STUDIO_GAMES).create_table(
            TABLE, "THB", HOUSE_SETTINGS | WINDOWS, "pokdeng", verify=checks.HOLD, verify_window_ms=30_000
        )  # the camera must agree with the shoe on every face-up card before the round settles
        players, wallets = PlayerService(sessions), WalletService(sessions, "THB")
        for n in range(BETTORS):
            run.tokens[f"p{n}"] = players.register(f"p{n}")
            wallets.deposit(f"p{n}", 1_000, key=f"fund-p{n}", actor="topology")
        engine.dispose()
        database = ["--database", run.database_url]
        for who, role in (("op", "operator"), ("ana", "player"), ("binh", "player")):
            added = subprocess.run(
                [sys.executable, "-m", "services.cli", "players", "add", who, "--role", role, *database],
                cwd=tmp_path, check=True, capture_output=True, text=True,
            )  # fmt: skip
            run.tokens[who] = json.loads(added.stdout)["token"]
        # two API processes behind the proxy, as deployed
        for api in ("api1", "api2"):
            run.studio(api, "api", "--host", "127.0.0.1", "--port", str(run.ports[api]), "--trusted-proxy",
                       "127.0.0.1", *database, env={"STUDIO_MQTT_URL": run.mqtt("api")})  # fmt: skip
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        run.start("haproxy", [haproxy, "-db", "-f", str(DEPLOY / "haproxy" / "haproxy.cfg")], env={
            "STUDIO_PROXY_BIND": f"127.0.0.1:{run.ports['proxy']}",
            "STUDIO_API_1": f"127.0.0.1:{run.ports['api1']}", "STUDIO_API_2": f"127.0.0.1:{run.ports['api2']}",
        })  # fmt: skip
        # the shoe's key, its daemon on a pty shoe, and two controllers for the table: one writes, one stands by
        key = write_key(tmp_path / "keys", new_key(f"{TABLE}-shoe"))
        run.shoe = VirtualShoe("line", tmp_path / "pty")
        run.studio("shoe", "shoe", "--table", TABLE, "--device", f"serial://{run.shoe.path}?dialect=line",
                   "--broker", run.mqtt("shoe"), "--outbox", str(tmp_path / "shoe.outbox"), "--key", str(key),
                   "--http-port", str(run.ports["shoe-metrics"]))  # fmt: skip
        # the overhead camera (an MJPEG stream, as an IP camera serves), its key, its daemon as studio-camera@T1 runs
        camera_key = write_key(tmp_path / "keys", new_key(f"{TABLE}-camera"))
        templates = calibrated(tmp_path / "camera")
        run.studio("camera", "shoe", "--witness", "--table", TABLE, "--device",
                   f"camera://{run.camera.url}?templates={templates}", "--key", str(camera_key), "--broker",
                   run.mqtt("shoe"), "--outbox", str(tmp_path / "camera.outbox"),
                   "--http-port", str(run.ports["camera-metrics"]))  # fmt: skip
        run.studio("controller-a", *run.controller("controller-a"))
        run.console = Subscriber(run.mqtt("dealer"), [topics.round_dealer(TABLE)])
        run.wait(lambda: run.dealer_view().get("phase") == "betting", 60, "the first round's betting")
        run.studio("controller-b", *run.controller("controller-b"), "--standby")
        run.supervised.add("controller-b")
        threading.Thread(target=run.supervise, daemon=True).start()
        run.wait(lambda: all(run.answers(port) for port in ("api1", "api2", "proxy")), 60, "the APIs and the proxy")
        # Prometheus, as deployed, scraping every part and evaluating the deployed alerts
        local = lambda *names: [f"127.0.0.1:{run.ports[name]}" for name in names]  # noqa: E731
        scraped = {"studio-api": local("api1", "api2"), "studio-controller": local("controller-a", "controller-b"),
                   "studio-shoe": local("shoe-metrics"), "studio-camera": local("camera-metrics")}  # fmt: skip
        (tmp_path / "prometheus").mkdir()
        config = prometheus.configure(tmp_path / "prometheus", scraped)
        run.start("prometheus", prometheus.command(config, run.ports["prometheus"]))
        run.prometheus = prometheus.Prometheus(run.ports["prometheus"])
        run.wait(lambda: run.prometheus.ready() and run.prometheus.targets_up() == 6, 30, "Prometheus on every part")
        yield run
    finally:
        run.closing.set()
        if run.console is not None:
            run.console.close()
        for process in run.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in run.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if run.shoe is not None:
            run.shoe.close()
        run.camera.close()
        drop_postgres(superuser)


def current(run: Topology, port: str = "proxy") -> dict[str, Any]:
    status, state = run.http("GET", f"/v1/tables/{TABLE}/current", "ana", port=port)
    assert status == 200, state
    return dict(state)


def bet(run: Topology, who: str, round_id: str, stake: int, key: str) -> tuple[int, Any]:
    slip = {"bets": [{"side": "player", "seat": "A", "stake": stake}]}
    status, answer = run.http("POST", f"/v1/rounds/{round_id}/bets", who, slip, key)
    assert status in (200, 201), (status, answer)
    return status, answer


def deployed_alike(run: Topology) -> None:
    """Every studio process the topology ran is one the systemd units run (and, but for the camera, the compose file):
    the same command, the camera's as a witness."""
    lines = studio_command_lines()
    units = {(args[0], "--witness" in args) for where, args in lines if where.endswith(".service")}
    composed = {(args[0], "--witness" in args) for where, args in lines if where.startswith("compose.yaml")}
    ran = {(command[3], "--witness" in command) for command, _ in run.commands.values() if "services.cli" in command}
    assert ran == {("api", False), ("controller", False), ("shoe", False), ("shoe", True)}, ran
    assert ran <= units, f"run here, in no systemd unit: {sorted(ran - units)}"
    assert ran - {("shoe", True)} <= composed, f"run here, not in compose.yaml: {sorted(ran - composed)}"


def pending(view: dict[str, Any]) -> dict[int, str]:
    """The cards (position → card) the dealer view says wait for the camera's word."""
    return {check["position"]: check["card"] for check in view.get("checks", []) if check["status"] == checks.PENDING}


def agreed(view: dict[str, Any]) -> bool:
    """No card waits for the camera's word. (A witness is never asked to resend: a sighting in flight when the active
    controller dies, or while the broker is away, is lost, and its card waits for an operator's word — the breakages
    below come between the camera's words.)"""
    return not pending(view)


def settled(round_id: str) -> Callable[[dict[str, Any]], bool]:
    return lambda view: view.get("round_id") == round_id and view.get("phase") == "settled"


def test_the_deployed_topology_survives_a_controller_an_api_the_broker_and_the_database_failing(
    topology: Topology,
) -> None:
    run = topology
    for who in ("ana", "binh"):
        status, wallet = run.http("POST", f"/v1/operator/players/{who}/deposit", "op", {"amount": 10_000}, who)
        assert status == 200, wallet

    viewers = Viewers(run.ports["proxy"], VIEWERS)
    try:
        run.wait(lambda: len(viewers.last) == VIEWERS, 60, f"{VIEWERS} viewers of the public stream")
        played(run, viewers)
    finally:
        viewers.close()
    deployed_alike(run)


def played(run: Topology, viewers: Viewers) -> None:
    # a round through the proxy: bets from every bettor at once, the deal as the console asks, settlement
    first = run.betting(left=10)
    assert bet(run, "ana", first, 100, "a1")[0] == 201
    assert bet(run, "binh", first, 50, "b1")[0] == 201
    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda n: bet(run, f"p{n}", first, 10, f"p{n}-1")[0], range(BETTORS)))
    took = time.monotonic() - started
    assert answers == [201] * BETTORS
    print(f"{BETTORS} slips through the proxy in {took:.1f} s ({BETTORS / took:.0f}/s) with {VIEWERS} viewers")
    run.deal_until(settled(first), "the first round")
    read = current(run)  # the API's read of it, through the proxy
    assert read["round_id"] != first or read["phase"] == "settled", read
    assert run.prometheus.sustained() == set(), "a healthy studio fires no alert (for more than a blip)"
    fired: set[str] = set()

    # the active controller killed mid-deal: the standby takes the table over, the round settles once
    second = run.betting(after=first)
    assert bet(run, "ana", second, 200, "a2")[0] == 201
    run.deal_until(run.asking(second, after=3), "3 cards taken and agreed, a fourth asked for")
    killed = run.stop("controller-a", signal.SIGKILL)
    run.deal_until(settled(second), "the second round, on the standby controller")
    fired |= run.alerted("StudioProcessDown", killed, job="studio-controller")

    # an API process killed: the proxy takes it out, a slip sent again with its key is placed once
    third = run.betting(after=second)
    assert bet(run, "binh", third, 300, "b3")[0] == 201
    killed = run.stop("api1", signal.SIGKILL)
    for _ in range(4):  # round robin: every other request would go to the dead process
        status, answer = bet(run, "binh", third, 300, "b3")
        assert status in (200, 201), answer
    run.deal_until(settled(third), "the third round, one API process left")
    fired |= run.alerted("StudioProcessDown", killed, job="studio-api")

    # Mosquitto stopped mid-deal: the card dealt meanwhile waits in the shoe's outbox (the backlog alert fires), and
    # once the broker is back it is delivered, every part reconnects, the round settles
    fourth = run.betting(after=third)
    bet(run, "ana", fourth, 100, "a4")

    run.deal_until(run.asking(fourth, after=2), "2 cards taken and agreed, a third asked for")
    wanted = run.dealer_view()["next_card"]
    stopped = run.stop("mosquitto")
    run.dealt.add((fourth, wanted["position"], wanted["index"]))
    run.shoe.deal(run.deck.pop(), burn=bool(wanted.get("burn")))  # type: ignore[union-attr]
    run.cards += 1
    fired |= run.alerted("StudioOutboxBacklog", stopped)
    run.again("mosquitto")
    run.wait(lambda: run.listening(run.ports["mqtt"]), 10, "mosquitto to listen again")
    run.deal_until(settled(fourth), "the fourth round, after the broker came back")

    # the shoe's daemon killed: its last will says offline, the device alert fires; started again, it deals on
    killed = run.stop("shoe", signal.SIGKILL)
    fired |= run.alerted("StudioDeviceOffline", killed, device="shoe", table=TABLE)
    run.again("shoe")
    run.wait(lambda: bool(run.prometheus.query('studio_device_online{device="shoe"} == 1')), 30, "the shoe online")

    # the killed controller back, as a standby (both now restart as systemd would); then PostgreSQL refuses
    # connections as a betting window closes: the API answers 503 with Retry-After, the lease runs out with nobody
    # to take it, the round stays past its window — each alert fires — then everything recovers, the table changes
    # hands a second time (the flapping alert) and deals on
    run.studio("controller-a", *run.controller("controller-a"), "--standby")
    run.supervised.add("controller-a")
    run.wait(lambda: len(run.prometheus.query(f'studio_lease_held{{table="{TABLE}"}}')) == 2, 30, "two controllers")
    fifth = run.betting(after=fourth)
    bet(run, "binh", fifth, 100, "b5")
    closes = datetime.fromisoformat(run.dealer_view()["betting_closes_at"])
    time.sleep(max(0.0, (closes - datetime.now(UTC)).total_seconds() - 0.5))
    cut = time.time()
    run.psql(
        f"ALTER DATABASE {NAME} ALLOW_CONNECTIONS false",
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{NAME}'",
    )
    try:
        status, answer = run.http("GET", "/v1/history", "ana")
        assert status == 503 and answer["code"] == "database_unavailable", (status, answer)
        assert run.headers.get("retry-after", "").isdigit(), run.headers
        outage = {"StudioHTTPErrors", "StudioLeaseLost", "StudioRoundStuck"}

        def all_fired() -> bool:
            run.http("GET", "/v1/history", "ana")  # players keep asking
            return all(run.prometheus.fired(alert, cut) for alert in outage)

        run.wait(all_fired, 60, f"{', '.join(sorted(outage))} to fire")
        fired |= outage
    finally:
        run.psql(f"ALTER DATABASE {NAME} ALLOW_CONNECTIONS true")
    run.wait(lambda: run.http("GET", "/v1/history", "ana")[0] == 200, 30, "the API's recovery")
    run.deal_until(settled(fifth), "the round caught by the outage, after the database came back")
    fired |= run.alerted("StudioLeaseFlapping", cut)
    assert fired == prometheus.alert_names(), "every deployed alert fired at its fault"
    rounds = (first, second, third, fourth, fifth)

    # at the end: money conserved, every shoe card journaled once, the public state the same on both processes' reads
    engine = make_engine(run.database_url)
    try:
        with engine.connect() as connection:
            for currency, total, lowest in connection.execute(TOTALS):
                assert total == 0, f"{currency}: the balances sum to {total}"
                assert lowest is None or lowest >= 0
        with session_factory(engine)() as session:
            rows = session.execute(
                select(ShoeJournal.boot_id, ShoeJournal.seq, func.count()).where(ShoeJournal.table_id == TABLE)
                .group_by(ShoeJournal.boot_id, ShoeJournal.seq)
            ).all()  # fmt: skip
            stakes = session.scalars(select(Wager.stake).where(Wager.round_id == third, Wager.player == "binh")).all()
        service = RoundService(session_factory(engine), games=STUDIO_GAMES)
        checked = {round_id: audit.card_checks(service, round_id) for round_id in rounds}
    finally:
        engine.dispose()
    assert rows and all(count == 1 for _boot, _seq, count in rows)
    assert len(rows) == run.cards, "every message of the shoe (card, burn, new deck) was journaled, once"
    assert stakes == [300], "the slip sent five times with one key was placed once"
    assert all(checked.values()), "the camera checked every round's face-up cards"
    statuses = {row["status"] for rows in checked.values() for row in rows}
    assert statuses == {checks.AGREED}, f"the camera agreed with the shoe on every card: {checked}"
    run.studio("api1-again", "api", "--host", "127.0.0.1", "--port", str(run.ports["api1"]), "--database",
               run.database_url, env={"STUDIO_MQTT_URL": run.mqtt("api")})  # fmt: skip
    run.wait(lambda: run.answers("api1"), 60, "the API process started again")
    for round_id in rounds:
        one = run.http("GET", f"/v1/rounds/{round_id}", "ana", port="api1")
        other = run.http("GET", f"/v1/rounds/{round_id}", "ana", port="api2")
        assert one == other and one[1]["phase"] == "settled"

    # every viewer, those the killed API process dropped too, holds the state the API holds now
    def caught_up() -> bool:
        now = current(run)
        return all(view == now for view in viewers.last.values())

    run.wait(caught_up, 15, "every viewer on the current state")
    assert viewers.reconnects >= VIEWERS // 4, "the viewers of the killed process came back through the proxy"
    assert viewers.failures == [], viewers.failures[:5]
    with session_factory(engine := make_engine(run.database_url))() as session:
        nets = session.scalars(select(Wager.net).where(Wager.round_id == first, Wager.player.startswith("p"))).all()
    engine.dispose()
    assert len(nets) == BETTORS and None not in nets, "every accepted slip settled, once"
