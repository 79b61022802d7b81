"""The production shape, started from the ``deploy/`` files themselves and broken on purpose.

Mosquitto with ``deploy/mosquitto/mosquitto.conf`` (its ACL, passwords from ``make-passwords``), PostgreSQL set up by
``deploy/postgres/setup.sql``, two ``studio api`` processes behind HAProxy with ``deploy/haproxy/haproxy.cfg``, two
``studio controller`` processes for the same table (one active, one ``--standby``), a signed ``studio shoe`` daemon on
a pty shoe; the test is the dealer (it deals what the dealer console asks for), the operator and the players (over
HTTP, through the proxy only). Then: a round; the active controller killed (SIGKILL) mid-deal — the standby takes
the table over and the round settles once; an API process killed — the proxy sends everyone to the other, and a slip
sent again with its key is placed once; Mosquitto restarted mid-deal — the card in flight comes from the shoe's
outbox, every part reconnects; PostgreSQL refusing connections — the API answers 503 with Retry-After, then recovers,
and so does the table. At the end: money conserved to the unit, every shoe card journaled once, every round read
alike from both API processes.

Run by ``.ci/run`` (``STUDIO_REQUIRE_TOPOLOGY=1``: a missing part fails it) and by ``make topology``; skipped by
``make test`` (it needs Mosquitto, HAProxy and PostgreSQL's superuser: ``STUDIO_TEST_DATABASE_URL``).
"""

from __future__ import annotations

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
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
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
from services.rounds.models import Wager
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService
from services.shoe.signing import new_key, write_key
from services.sim.checks import TOTALS
from tests.conftest import free_port
from tests.support import wait_until

pytestmark = pytest.mark.topology

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
TABLE = "T1"
NAME = "studio_topology"  # the deploy's role and database, renamed: a real ``studio`` database is never touched
WINDOWS = {"betting_window_ms": 6_000, "insurance_window_ms": 1_500, "decision_window_ms": 1_500}
# one deck, shuffled once: five rounds take at most 52 of its cards... dealt as the console asks, never twice
CARDS = [str(card) for card in random.Random(7).sample(list(FULL_DECK), len(FULL_DECK))]


def needed() -> str | None:
    """What this machine lacks to run the topology (None: nothing)."""
    if not shutil.which("mosquitto") and not Path("/usr/sbin/mosquitto").exists():
        return "mosquitto"
    if not shutil.which("haproxy") and not Path("/usr/sbin/haproxy").exists():
        return "haproxy"
    if not shutil.which("psql"):
        return "psql"
    if not (os.environ.get("STUDIO_TEST_DATABASE_URL") or "").startswith("postgresql"):
        return "STUDIO_TEST_DATABASE_URL (a PostgreSQL superuser's URL)"
    return None


@dataclass
class Topology:
    tmp: Path
    logs: dict[str, Path] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    passwords: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    database_url: str = ""
    shoe: VirtualShoe | None = None
    console: Subscriber | None = None
    dealt: set[tuple[str, str, int]] = field(default_factory=set)
    headers: dict[str, str] = field(default_factory=dict)  # the last HTTP answer's, names in lower case
    superuser: str = ""

    # ---- the parts ----------------------------------------------------------------------

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        self.logs[name] = self.tmp / f"{name}.log"
        self.processes[name] = subprocess.Popen(
            command, cwd=self.tmp, env=os.environ | (env or {}), stdout=self.logs[name].open("wb"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def studio(self, name: str, *arguments: str, env: dict[str, str] | None = None) -> None:
        self.start(name, [sys.executable, "-m", "services.cli", *arguments], env)

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

    def restart(self, name: str) -> None:
        """Stop the part (SIGTERM, as systemd does) and start it again with the same command line."""
        process = self.processes[name]
        process.terminate()
        process.wait(10)
        self.logs[name].with_suffix(".before-restart.log").write_bytes(self.logs[name].read_bytes())
        self.start(name, [str(arg) for arg in process.args])  # type: ignore[union-attr]

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

    def deal_until(self, cards: Iterator[str], done: Callable[[dict[str, Any]], bool], what: str) -> None:
        """Deal whatever the dealer console asks for, in any round, until ``done(view)`` (a minute at most)."""
        assert self.shoe is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            view = self.dealer_view()
            if done(view):
                return
            wanted = view.get("next_card")
            if wanted and (view["round_id"], wanted["position"], wanted["index"]) not in self.dealt:
                self.dealt.add((view["round_id"], wanted["position"], wanted["index"]))
                self.shoe.deal(next(cards))
            time.sleep(0.05)
        raise TimeoutError(f"not done in 60 s: {what}; last dealer view: {self.dealer_view()}{self.told()}")

    def betting(self, cards: Iterator[str], after: str = "") -> str:
        """A round taking bets for a few seconds more, after round ``after`` (rounds before it dealt to their end)."""

        def open_for_bets(view: dict[str, Any]) -> bool:
            closes = view.get("betting_closes_at")
            return (
                view.get("phase") == "betting" and view.get("round_id") != after and closes is not None
                and datetime.fromisoformat(closes) - datetime.now(UTC) > timedelta(seconds=3)
            )  # fmt: skip

        self.deal_until(cards, open_for_bets, f"a round taking bets after {after or 'the start'}")
        return str(self.dealer_view()["round_id"])


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
    run.ports = {name: free_port() for name in ("mqtt", "websockets", "proxy", "api1", "api2")}
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
        RoundService(session_factory(engine), games=STUDIO_GAMES).create_table(
            TABLE, "THB", HOUSE_SETTINGS | WINDOWS, "pokdeng"
        )
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
                   "--http-port", "0")  # fmt: skip
        controller = ["controller", "--tables", TABLE, "--broker", run.mqtt("controller"), *database,
                      "--shoe-keys", str(tmp_path / "keys"), "--lease-seconds", "3", "--result-pause", "2",
                      "--http-port", "0"]  # fmt: skip
        run.studio("controller-a", *controller)
        run.console = Subscriber(run.mqtt("dealer"), [topics.round_dealer(TABLE)])
        run.wait(lambda: run.dealer_view().get("phase") == "betting", 60, "the first round's betting")
        run.studio("controller-b", *controller, "--standby")
        run.wait(lambda: all(run.answers(port) for port in ("api1", "api2", "proxy")), 60, "the APIs and the proxy")
        yield run
    finally:
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


def settled(round_id: str) -> Callable[[dict[str, Any]], bool]:
    return lambda view: view.get("round_id") == round_id and view.get("phase") == "settled"


def test_the_deployed_topology_survives_a_controller_an_api_the_broker_and_the_database_failing(
    topology: Topology,
) -> None:
    run = topology
    for who in ("ana", "binh"):
        status, wallet = run.http("POST", f"/v1/operator/players/{who}/deposit", "op", {"amount": 10_000}, who)
        assert status == 200, wallet
    cards = iter(CARDS)

    # a round through the proxy: bets, the deal as the console asks, settlement
    first = run.betting(cards)
    assert bet(run, "ana", first, 100, "a1")[0] == 201
    assert bet(run, "binh", first, 50, "b1")[0] == 201
    run.deal_until(cards, settled(first), "the first round")
    read = current(run)  # the API's read of it, through the proxy
    assert read["round_id"] != first or read["phase"] == "settled", read

    # the active controller killed mid-deal: the standby takes the table over, the round settles once
    second = run.betting(cards, after=first)
    assert bet(run, "ana", second, 200, "a2")[0] == 201
    run.deal_until(cards, lambda view: view.get("round_id") == second and len(run.dealt_in(second)) >= 3, "3 cards")
    run.processes["controller-a"].send_signal(signal.SIGKILL)
    run.processes["controller-a"].wait(10)
    run.deal_until(cards, settled(second), "the second round, on the standby controller")

    # an API process killed: the proxy takes it out, a slip sent again with its key is placed once
    third = run.betting(cards, after=second)
    assert bet(run, "binh", third, 300, "b3")[0] == 201
    run.processes["api1"].send_signal(signal.SIGKILL)
    run.processes["api1"].wait(10)
    for _ in range(4):  # round robin: every other request would go to the dead process
        status, answer = bet(run, "binh", third, 300, "b3")
        assert status in (200, 201), answer
    run.deal_until(cards, settled(third), "the third round, one API process left")

    # Mosquitto restarted mid-deal: the card in flight is delivered from the shoe's outbox, every part reconnects
    fourth = run.betting(cards, after=third)
    bet(run, "ana", fourth, 100, "a4")
    run.deal_until(cards, lambda view: view.get("round_id") == fourth and len(run.dealt_in(fourth)) >= 2, "2 cards")
    run.restart("mosquitto")
    run.wait(lambda: run.listening(run.ports["mqtt"]), 10, "mosquitto to listen again")
    run.deal_until(cards, settled(fourth), "the fourth round, after the broker's restart")

    # PostgreSQL refuses connections: the API answers 503 with Retry-After, then recovers, and so does the table
    run.psql(
        f"ALTER DATABASE {NAME} ALLOW_CONNECTIONS false",
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{NAME}'",
    )
    try:
        status, answer = run.http("GET", "/v1/history", "ana")
        assert status == 503 and answer["code"] == "database_unavailable", (status, answer)
        assert run.headers.get("retry-after", "").isdigit(), run.headers
    finally:
        run.psql(f"ALTER DATABASE {NAME} ALLOW_CONNECTIONS true")
    run.wait(lambda: run.http("GET", "/v1/history", "ana")[0] == 200, 30, "the API's recovery")
    fifth = run.betting(cards, after=fourth)
    bet(run, "binh", fifth, 100, "b5")
    run.deal_until(cards, settled(fifth), "a round after the database came back")
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
    finally:
        engine.dispose()
    assert rows and all(count == 1 for _boot, _seq, count in rows)
    assert len(rows) == len(run.dealt), "every card dealt was journaled, once"
    assert stakes == [300], "the slip sent five times with one key was placed once"
    run.studio("api1-again", "api", "--host", "127.0.0.1", "--port", str(run.ports["api1"]), "--database",
               run.database_url, env={"STUDIO_MQTT_URL": run.mqtt("api")})  # fmt: skip
    run.wait(lambda: run.answers("api1"), 60, "the API process started again")
    for round_id in rounds:
        one = run.http("GET", f"/v1/rounds/{round_id}", "ana", port="api1")
        other = run.http("GET", f"/v1/rounds/{round_id}", "ana", port="api2")
        assert one == other and one[1]["phase"] == "settled"
