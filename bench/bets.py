"""Benchmark: accepted bet requests per second through the HTTP API on PostgreSQL, beside GET /healthz (the floor).

    .venv/bin/python bench/bets.py [--players 3000] [--concurrency 64] [--workers 1] [--threads 0] [--rate R]
                                   [--repeat R] [--profile FILE]
    .venv/bin/python bench/bets.py --burst 2000 [--burst-seconds 3] [--concurrency 256] [--workers 2]

The API (``services.api.app.create_app``) runs under uvicorn in a subprocess on a free loopback
port, against its own PostgreSQL schema (created, migrated and dropped by this script). Players
are registered and funded through the services (not timed); an operator creates a table with a
long betting window and opens one round through the operator endpoints. Then one asyncio + httpx
load generator, at bounded concurrency, sends every player's 1–4 bet slips (new wagers and raises
on the player's one side, random seats, a unique Idempotency-Key each) in a shuffled order, all
within that one betting window. The floor is the same server answering the same number of
GET /healthz requests from the same load generator at the same concurrency: HTTP, routing, the
thread pool and the client, with no authentication, database or rules.

Beside latency and throughput, each phase reports CPU milliseconds per request (Linux /proc) of
the uvicorn process(es), of PostgreSQL's client backends and background processes, and of the
load generator itself, and how busy the whole machine was: on two cores, it says who the
bottleneck is. ``--threads N`` sets how many sync endpoints run at once (the app's default:
the connection pool size, 16); ``--workers N`` runs N uvicorn processes (the app comes from the
import-string factory ``bench.bets:server_app``).

``--rate R`` offers the bets open-loop at R requests/s (each request's latency counted from when it was due),
instead of as fast as ``--concurrency`` connections go: the p99 at a given offered load.

``--burst N`` is the end of a betting window instead: N players (``--players`` is ignored) each send one slip, at
uniformly random moments of the window's last ``--burst-seconds`` (3), open loop over ``--concurrency`` connections
(a request waits for a free one, and that wait counts in its answer time). The round is opened with a window that
closes exactly then, so the server's own clock decides what came in time. The floor is the same burst of GET
/healthz at the same moments. Reported: how many were accepted and how many refused as too late, p50/p99 answer time;
checked: every slip answered, every accepted one stored (its key and its wagers), and none doubled — every slip is
sent again with its key after the window, and an accepted one must answer as before and write nothing more.

``--repeat R`` runs the floor and the bets R times, each time on a new round (the same players: their tokens are
known by then, as an open page keeps them), and reports the run whose share of the floor is the median: on a shared
machine one run's two phases can meet different neighbours.

``--profile FILE`` attaches ``py-spy record`` to the server (and its workers) during the bet phase
and writes collapsed stacks to FILE, then prints where the server's samples fall.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, func, select, text

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.processes import stop  # noqa: E402
from services.db import make_engine, migrate, session_factory  # noqa: E402
from services.db.engine import POOL_SIZE  # noqa: E402
from services.ledger.models import Account, AccountKind, IdempotencyKey  # noqa: E402
from services.ledger.wallets import WalletService  # noqa: E402
from services.rounds.models import Round, Wager  # noqa: E402
from services.rounds.players import PlayerService  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
FUNDS = 1_000_000  # per player, in minor units: far more than 4 slips × 3 bets × max stake × hold multiple
MAX_STAKE = 100


def schema_engine(url: str, schema: str, **options: Any) -> Engine:
    return make_engine(url, connect_args={"options": f"-csearch_path={schema}"}, **options)


@contextmanager
def bench_schema(url: str, prefix: str) -> Iterator[tuple[Engine, str, Engine]]:
    """A migrated PostgreSQL schema of the run's own, dropped afterwards: (admin engine, schema, engine on it)."""
    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = make_engine(url, pool_size=1)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = schema_engine(url, schema)
    try:
        migrate(engine)
        yield admin, schema, engine
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def server_app() -> Any:
    """The uvicorn app factory (``bench.bets:server_app --factory``): the API on the benchmark's schema."""
    from services.api.app import create_app
    from services.wallet.protocol import config_from

    engine = schema_engine(os.environ["BENCH_DATABASE_URL"], os.environ["BENCH_SCHEMA"])
    threads = int(os.environ.get("BENCH_THREADS") or 0) or POOL_SIZE
    return create_app(engine, threads=threads, wallet=config_from(os.environ))  # STUDIO_WALLET_URL: bench/wallet.py


# ---- the server -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def uvicorn_server(
    url: str, schema: str, workers: int, threads: int, extra: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = os.environ | {"BENCH_DATABASE_URL": url, "BENCH_SCHEMA": schema, "PYTHONPATH": str(ROOT)} | (extra or {})
    env["BENCH_THREADS"] = str(threads)
    command = [sys.executable, "-m", "uvicorn", "bench.bets:server_app", "--factory", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # up to ~30 s for the workers to import and bind
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited with status {process.returncode}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("uvicorn did not come up within 30 s")
        yield base, process
    finally:
        stop(process, signal.SIGINT, timeout=20)


@contextmanager
def py_spy(pid: int, path: str | None, subprocesses: bool) -> Iterator[None]:
    """Sample the server with py-spy while the block runs: only the thread holding the GIL, without pausing it."""
    if path is None:
        yield
        return
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    command = [spy, "record", "--pid", str(pid), "--format", "raw", "--rate", "200", "--gil", "--nonblocking"]
    command += ["-o", path] + (["--subprocesses"] if subprocesses else [])
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # let it attach
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            recorder.kill()
            recorder.wait(timeout=10)


PHASES = [  # (label, marker in the stack); the first match wins
    ("HouseAdapter.place_bets (the bet path)", "place_bets (services/rounds/house.py"),
    ("authentication (bearer token lookup)", "current_identity (services/api/deps.py"),
    ("rest of the FastAPI request in its worker thread", "WorkerThread.run"),
    ("event loop: uvicorn, h11, starlette, pydantic", ""),
]


def summarize_profile(path: str, top: int = 20) -> None:
    """Where the server's GIL-holding samples fall: request phases, our functions, leaf packages."""
    phases: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = bets = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        phases[next(label for label, marker in PHASES if marker in stack)] += count
        frames = stack.split(";")
        leaf = frames[-1]
        packages[leaf.rpartition("(")[2].split("/")[0].split(".py")[0] or leaf] += count
        if PHASES[0][1] in stack:
            bets += count
            for frame in set(frames):
                if "(services/" in frame:
                    ours[frame] += count
    if not total:
        print("profile: no samples")
        return
    print(f"\nprofile (py-spy, GIL holder only, {total} samples in the server during the bet phase)")
    for label, _marker in PHASES:
        print(f"{100 * phases[label] / total:6.1f}%  {label}")
    print("inclusive share of our functions within place_bets (% of place_bets samples)")
    for frame, count in ours.most_common(top):
        print(f"{100 * count / max(bets, 1):6.1f}%  {frame}")
    print("leaf frames by package (% of all samples)")
    for package, count in packages.most_common(8):
        print(f"{100 * count / total:6.1f}%  {package}")


# ---- CPU accounting (Linux /proc) ---------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


BACKGROUND = ("checkpointer", "background writer", "walwriter", "autovacuum", "logical replication", "archiver")


def postgres_processes() -> tuple[int | None, list[int], list[int]]:
    """PostgreSQL's postmaster, client backends (of every user: the machine is shared) and background processes."""
    postmaster, backends, background = None, [], []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or (entry / "comm").read_text().strip() != "postgres":
                continue
            title = (entry / "cmdline").read_text()
        except OSError:
            continue
        if not title.startswith("postgres:"):
            postmaster = int(entry.name)
        elif any(word in title for word in BACKGROUND):
            background.append(int(entry.name))
        else:
            backends.append(int(entry.name))
    return postmaster, backends, background


def cpu_seconds(pids: list[int], reaped: bool = False) -> float:
    """utime + stime of the processes, and with ``reaped`` the time of their exited children too."""
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if reaped else 0)
    return total / TICK


def postgres_cpu() -> tuple[float, float]:
    """CPU seconds so far of (client backends, background processes).

    Backends that exited are counted through the postmaster's children time, so connections
    opened and closed during a run (pool overflow) are not lost.
    """
    postmaster, backends, background = postgres_processes()
    everything = cpu_seconds([postmaster], reaped=True) if postmaster else 0.0
    everything += cpu_seconds(backends) + cpu_seconds(background)
    return everything - cpu_seconds(background), cpu_seconds(background)


@dataclass
class CpuUse:
    server: float = 0.0
    postgres: float = 0.0  # client backends
    background: float = 0.0  # checkpointer, WAL writer, autovacuum…
    client: float = 0.0
    machine: float = 0.0  # busy share of all cores, 0–1


@contextmanager
def cpu_use(server_pid: int) -> Iterator[CpuUse]:
    use = CpuUse()
    server = process_tree(server_pid)

    def machine() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(values) - values[3] - values[4], sum(values)  # busy, all (idle and iowait aside)

    before = (cpu_seconds(server), postgres_cpu(), sum(os.times()[:2]), machine())
    yield use
    use.server = cpu_seconds(server) - before[0]
    backends, background = postgres_cpu()
    use.postgres, use.background = backends - before[1][0], background - before[1][1]
    use.client = sum(os.times()[:2]) - before[2]
    busy, everything = machine()
    use.machine = (busy - before[3][0]) / max(1, everything - before[3][1])


# ---- setup ------------------------------------------------------------------------------


def register_and_fund(engine: Engine, players: int) -> tuple[str, dict[str, str]]:
    """An operator and ``players`` funded players through the services; returns the tokens."""
    sessions = session_factory(engine)
    registry, wallets = PlayerService(sessions), WalletService(sessions, "THB")
    operator_token = registry.register("bench-op", "operator")

    def one(index: int) -> tuple[str, str]:
        name = f"p{index:06d}"
        token = registry.register(name)
        wallets.deposit(name, FUNDS, f"fund-{name}", "bench-op")
        return name, token

    with ThreadPoolExecutor(8) as pool:
        tokens = dict(pool.map(one, range(players)))
    return operator_token, tokens


def open_round(
    base: str, operator_token: str, table: str = "bench", wallet: str = "internal", window_ms: int = 600_000
) -> str:
    headers = {"Authorization": f"Bearer {operator_token}"}
    body = {"id": table, "settings": {"betting_window_ms": window_ms, "max_stake": 10_000}, "wallet": wallet,
            "allow_return_over_100": True}  # fmt: skip
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        client.post("/v1/operator/tables", json=body).raise_for_status()
        response = client.post(f"/v1/operator/tables/{table}/rounds", json={})
        response.raise_for_status()
        return str(response.json()["round_id"])


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    content: bytes | None = None  # sent as is (a signed body), instead of ``body`` as JSON


def bet_requests(rng: random.Random, round_id: str, tokens: dict[str, str], max_slips: int) -> list[Request]:
    """Each player's 1–``max_slips`` slips on one side, 1–3 random seats each (repeats raise), shuffled."""
    requests = []
    run = uuid.uuid4().hex[:8]
    for player, token in tokens.items():
        side = rng.choice(("player", "banker"))
        for slip in range(rng.randint(1, max_slips)):
            seats = rng.sample(("A", "B", "C"), rng.randint(1, 3))
            bets = [{"side": side, "seat": seat, "stake": rng.randint(1, MAX_STAKE)} for seat in seats]
            headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": f"{run}-{player}-{slip}"}
            requests.append(Request("POST", f"/v1/rounds/{round_id}/bets", headers, {"bets": bets}))
    rng.shuffle(requests)
    return requests


# ---- the load generator -----------------------------------------------------------------


@dataclass
class Load:
    seconds: float
    latencies: list[float]  # of every request, seconds
    statuses: Counter[int]
    cpu: CpuUse

    def accepted(self, status: int) -> int:
        return self.statuses[status]

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def drive(base: str, requests: list[Request], concurrency: int, server_pid: int, rate: float = 0.0) -> Load:
    """``concurrency`` workers, each with its own one-connection client, share one iterator of requests.

    One client per worker, not one client with a pool of ``concurrency`` connections: httpx's pool
    bookkeeping grows with its size, and one 64-connection client tops out near 160 req/s on this
    machine (64 one-connection clients: about 650 req/s against the same server).
    """
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=base, limits=limits, timeout=60) for _ in range(concurrency)]
    gc.collect()  # the load generator's own collections (70-140 ms each, on its requests and clients) stall every
    gc.disable()  # request it sends meanwhile: none while it measures
    try:
        await asyncio.gather(*(client.get("/healthz") for client in clients))  # open the connections
        if rate:
            with cpu_use(server_pid) as cpu:
                seconds = await offered(clients, requests, rate, latencies, statuses)
            return Load(seconds, latencies, statuses, cpu)
        pending = iter(requests)

        async def worker(client: httpx.AsyncClient) -> None:
            for request in pending:  # the shared iterator bounds the whole run to len(requests)
                start = time.perf_counter()
                response = await send(client, request)
                latencies.append(time.perf_counter() - start)
                statuses[response.status_code] += 1

        with cpu_use(server_pid) as cpu:
            start = time.perf_counter()
            await asyncio.gather(*(worker(client) for client in clients))
            seconds = time.perf_counter() - start
    finally:
        gc.enable()
        for client in clients:
            await client.aclose()
    return Load(seconds, latencies, statuses, cpu)


async def send(client: httpx.AsyncClient, request: Request) -> httpx.Response:
    if request.content is not None:
        return await client.request(request.method, request.path, headers=request.headers, content=request.content)
    return await client.request(request.method, request.path, headers=request.headers, json=request.body)


async def offered(
    clients: list[httpx.AsyncClient], requests: list[Request], rate: float, latencies: list[float],
    statuses: Counter[int], dues: list[float] | None = None, start: float | None = None,
    answers: dict[int, httpx.Response] | None = None,
) -> float:  # fmt: skip
    """Open loop: request ``i`` is due at ``dues[i]`` s after ``start`` (by default ``i / rate`` s after now) whatever
    the answers before it; its latency runs from when it was due (so a slow server is not hidden by requests it
    delayed), waiting for a free connection included. ``answers`` collects each request's response by its index."""
    idle: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
    for client in clients:
        idle.put_nowait(client)
    start = time.perf_counter() if start is None else start
    dues = dues if dues is not None else [index / rate for index in range(len(requests))]

    async def one(index: int, request: Request) -> None:
        due = start + dues[index]
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        client = await idle.get()
        try:
            response = await send(client, request)
        finally:
            idle.put_nowait(client)
        latencies.append(time.perf_counter() - due)
        statuses[response.status_code] += 1
        if answers is not None:
            answers[index] = response

    await asyncio.gather(*(one(index, request) for index, request in enumerate(requests)))
    return time.perf_counter() - start


# ---- checks -----------------------------------------------------------------------------


def check(engine: Engine, round_id: str, accepted: int, players: int) -> str:
    """Every accepted slip (``accepted``: of every round so far) left its key; every player's wallet + held still
    equals the funding."""
    with engine.connect() as connection:
        slips = select(func.count()).select_from(IdempotencyKey).where(IdempotencyKey.actor != "bench-op")
        keys = connection.scalar(slips)
        wagers = connection.scalar(select(func.count()).select_from(Wager).where(Wager.round_id == round_id))
        money = connection.scalar(
            select(func.sum(Account.balance)).where(Account.kind.in_([AccountKind.WALLET, AccountKind.HOLD]))
        )
    if keys != accepted or money != players * FUNDS:
        raise SystemExit(f"check failed: {keys} keys for {accepted} accepted slips; wallets + holds = {money}")
    return f"check: {accepted} slips stored, {wagers} wagers, wallets + holds = funding"


def opened_sessions(admin: Engine) -> int:
    """Sessions ever opened on this database (PostgreSQL ≥ 14)."""
    with admin.connect() as connection:
        query = "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        return int(connection.scalar(text(query)) or 0)


# ---- the burst: the last seconds of one betting window ---------------------------------------


BURST_LEAD_S = 2.0  # the window's first part, before the burst (the connections are open by then)


@dataclass
class Burst:
    load: Load
    answers: dict[int, httpx.Response]
    late_by_ms: float  # how far past the window's close the last answer came


async def burst(
    base: str, dues: list[float], concurrency: int, server_pid: int,
    ready: Callable[[], tuple[list[Request], float]],
) -> Burst:  # fmt: skip
    """Once the connections are open, ``ready()`` gives the requests and when the window closes (wall clock, epoch
    s); ``requests[i]`` goes ``dues[i]`` s into the burst, which ends then."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=base, limits=limits, timeout=60) for _ in range(concurrency)]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    answers: dict[int, httpx.Response] = {}
    try:
        await asyncio.gather(*(client.get("/healthz") for client in clients))  # open the connections
        requests, closes_at = ready()
        span = max(dues) if dues else 0.0
        start = time.perf_counter() + (closes_at - span - time.time())  # the burst's first moment, on this clock
        if start < time.perf_counter():
            raise SystemExit("the burst's window closed before it could start: raise BURST_LEAD_S")
        with cpu_use(server_pid) as cpu:
            await offered(clients, requests, 0.0, latencies, statuses, dues, start, answers)
            seconds = span  # the burst's own length: what "accepted per second" is over
        late = time.time() - closes_at
    finally:
        for client in clients:
            await client.aclose()
    return Burst(Load(max(seconds, 1e-9), latencies, statuses, cpu), answers, 1000 * late)


async def resend(base: str, requests: list[Request], concurrency: int) -> dict[int, httpx.Response]:
    """Every request again, after the window: what an impatient or retrying client would send."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(request: Request) -> httpx.Response:
            async with gate:
                return await send(client, request)

        answers = await asyncio.gather(*(one(request) for request in requests))
    return dict(enumerate(answers))


def check_burst(
    engine: Engine, round_id: str, requests: list[Request], first: dict[int, httpx.Response],
    again: dict[int, httpx.Response], players: int,
) -> str:  # fmt: skip
    """None lost: every slip answered, every accepted one's key and wagers stored; none doubled: a resent accepted
    slip answers as before, a resent late one is refused again, and nothing more was written."""
    unanswered = [index for index in range(len(requests)) if index not in first]
    if unanswered:
        raise SystemExit(f"check failed: {len(unanswered)} slips never answered")
    accepted = [index for index, response in first.items() if response.status_code == 201]
    odd = {response.status_code for response in first.values()} - {201, 409}
    if odd:
        raise SystemExit(f"check failed: answers other than accepted or too late: {sorted(odd)}")
    changed = [index for index, response in again.items() if
               response.status_code != first[index].status_code
               or (response.status_code == 201 and response.json() != first[index].json())]  # fmt: skip
    if changed:
        index = changed[0]
        raise SystemExit(
            f"check failed: {len(changed)} slips answered differently when sent again, e.g. "
            f"{first[index].status_code} {first[index].text} then {again[index].status_code} {again[index].text}"
        )
    bets = sum(len((requests[index].body or {})["bets"]) for index in accepted)
    with engine.connect() as connection:
        wagers = connection.scalar(select(func.count()).select_from(Wager).where(Wager.round_id == round_id))
    if wagers != bets:
        raise SystemExit(f"check failed: {wagers} wagers stored for the {bets} bets of {len(accepted)} accepted slips")
    check(engine, round_id, len(accepted), players)  # every accepted slip's key; wallets + holds = funding
    return (
        f"check: {len(requests)} slips answered, {len(accepted)} accepted and stored ({bets} wagers), "
        f"all {len(requests)} sent again: same answers, nothing written twice; wallets + holds = funding"
    )


def closes_at(engine: Engine, round_id: str) -> float:
    with engine.connect() as connection:
        when = connection.scalar(select(Round.betting_closes_at).where(Round.id == round_id))
    assert when is not None
    return float(when.timestamp())


def run_burst(args: argparse.Namespace) -> None:
    players, seconds = args.burst, args.burst_seconds
    rng = random.Random(args.seed)
    with bench_schema(args.url, "bench_burst") as (_admin, schema, engine):
        start = time.perf_counter()
        operator_token, tokens = register_and_fund(engine, players)
        print(f"setup: {players} players registered and funded in {time.perf_counter() - start:.1f} s")
        dues = sorted(rng.uniform(0, seconds) for _ in range(players))
        with uvicorn_server(args.url, schema, args.workers, args.threads) as (base, process):
            floor = [Request("GET", "/healthz")] * players
            round_ids: list[str] = []
            requests: list[Request] = []

            def floor_ready() -> tuple[list[Request], float]:
                return floor, time.time() + BURST_LEAD_S + seconds

            def round_ready() -> tuple[list[Request], float]:
                round_ids.append(open_round(base, operator_token, window_ms=int(1000 * (BURST_LEAD_S + seconds))))
                requests[:] = bet_requests(rng, round_ids[0], tokens, 1)  # one slip a player, in a random order
                return requests, closes_at(engine, round_ids[0])

            floor_burst = asyncio.run(burst(base, dues, args.concurrency, process.pid, floor_ready))
            bets = asyncio.run(burst(base, dues, args.concurrency, process.pid, round_ready))
            round_id = round_ids[0]
            again = asyncio.run(resend(base, requests, args.concurrency))
        print(check_burst(engine, round_id, requests, bets.answers, again, players))

    load = bets.load
    accepted, late = load.accepted(201), load.accepted(409)
    print(
        f"server: uvicorn, {args.workers} worker(s), {args.threads or POOL_SIZE} threads each; "
        f"{players} players, one slip each, at random moments of the window's last {seconds:g} s, "
        f"{args.concurrency} connections"
    )
    table([("burst: POST .../bets (201)", load, 201), ("floor: GET /healthz (200)", floor_burst.load, 200)])
    print(
        f"accepted in the window: {accepted} of {players} ({100 * accepted / players:.1f} %); "
        f"refused as too late: {late}; the last answer came {bets.late_by_ms:,.0f} ms after the window closed"
    )
    figures = {
        "players": players, "burst_s": seconds, "accepted": accepted, "too_late": late,
        "accepted_share": round(accepted / players, 3),
        "p50_ms": round(1000 * load.percentile(0.5), 1), "p99_ms": round(1000 * load.percentile(0.99), 1),
        "floor_p50_ms": round(1000 * floor_burst.load.percentile(0.5), 1),
        "floor_p99_ms": round(1000 * floor_burst.load.percentile(0.99), 1),
        "ratio_p99": round(load.percentile(0.99) / floor_burst.load.percentile(0.99), 2),
        "answers_after_close_ms": round(bets.late_by_ms), "answered": len(load.latencies),
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: this run's figures


# ---- main -------------------------------------------------------------------------------


def table(rows: list[tuple[str, Load, int]]) -> None:
    print(
        f"{'what':<27}{'requests':>9}{'ok':>7}{'ok req/s':>9}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}"
        f"  CPU ms/request: {'server':>6}{'pg':>6}{'pg bg':>6}{'client':>7}  busy"
    )
    for label, load, ok_status in rows:
        ok, n, cpu = load.accepted(ok_status), len(load.latencies), load.cpu
        print(
            f"{label:<27}{n:>9}{ok:>7}{ok / load.seconds:>9,.0f}{1000 * load.percentile(0.50):>8.1f}"
            f"{1000 * load.percentile(0.99):>8.1f}{1000 * max(load.latencies):>8.1f}                  "
            f"{1000 * cpu.server / n:>6.2f}{1000 * cpu.postgres / n:>6.2f}{1000 * cpu.background / n:>6.2f}"
            f"{1000 * cpu.client / n:>7.2f}"
            f"  {100 * cpu.machine:3.0f}%"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL), help="PostgreSQL URL")
    parser.add_argument("--players", type=int, default=3_000)
    parser.add_argument("--slips", type=int, default=4, help="most bet requests per player (1–N each)")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--threads", type=int, default=0, help="request threads per worker (0: the app default, 16)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", metavar="FILE", help="py-spy the server during the bet phase (collapsed stacks)")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="offered load, requests/s (open loop; 0: as fast as it goes)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of floor then bets (a round each): the median's")
    parser.add_argument("--burst", type=int, default=0, help="N players, one slip each, in a window's last seconds")
    parser.add_argument("--burst-seconds", type=float, default=3.0, help="the burst's length, s")
    args = parser.parse_args()
    if not 1 <= args.concurrency <= 1_000 or not 1 <= args.players <= 1_000_000 or not 1 <= args.slips <= 100:
        parser.error("keep --concurrency ≤ 1000, --players ≤ 1,000,000 and --slips ≤ 100")
    if not 1 <= args.repeat <= 50:
        parser.error("keep --repeat 1–50")
    if not 0 <= args.burst <= 100_000 or not 0.1 <= args.burst_seconds <= 60:
        parser.error("keep --burst ≤ 100,000 and --burst-seconds 0.1–60")
    if args.burst:
        run_burst(args)
        return

    with bench_schema(args.url, "bench_bets") as (admin, schema, engine):
        start = time.perf_counter()
        operator_token, tokens = register_and_fund(engine, args.players)
        print(f"setup: {args.players} players registered and funded in {time.perf_counter() - start:.1f} s")
        runs: list[tuple[Load, Load]] = []  # (bets, floor) of each repetition, each on a round of its own
        accepted = 0
        rng = random.Random(args.seed)
        with uvicorn_server(args.url, schema, args.workers, args.threads) as (base, process):
            for run in range(args.repeat):
                round_id = open_round(base, operator_token, table=f"bench{run or ''}")  # a table per run
                requests = bet_requests(rng, round_id, tokens, args.slips)
                floor = [Request("GET", "/healthz")] * len(requests)
                floor_load = asyncio.run(drive(base, floor, args.concurrency, process.pid))
                sessions_before = opened_sessions(admin)
                with py_spy(process.pid, args.profile, subprocesses=args.workers > 1):
                    bets_load = asyncio.run(drive(base, requests, args.concurrency, process.pid, args.rate))
                opened = opened_sessions(admin) - sessions_before
                accepted += bets_load.accepted(201)
                print(check(engine, round_id, accepted, args.players))
                runs.append((bets_load, floor_load))
    if len(runs) > 1:
        shares = [bets.accepted(201) / bets.seconds / (floor.accepted(200) / floor.seconds) for bets, floor in runs]
        print(f"accepted/s as a share of the floor's, each run: {', '.join(f'{100 * x:.1f} %' for x in shares)}")
        bets_load, floor_load = runs[sorted(range(len(runs)), key=shares.__getitem__)[len(runs) // 2]]
        print("the run below: the median share")

    print(
        f"server: uvicorn, {args.workers} worker(s), {args.threads or POOL_SIZE} threads each; "
        f"load: {args.concurrency} httpx.AsyncClient in flight; {args.players} players, "
        f"{len(bets_load.latencies)} bet slips"
    )
    table([("bets: POST .../bets (201)", bets_load, 201), ("floor: GET /healthz (200)", floor_load, 200)])
    print(f"PostgreSQL connections opened during the bet phase: {opened:,} (every user's)")
    refused = {status: n for status, n in bets_load.statuses.items() if status != 201}
    if refused:
        print(f"bet requests not accepted, by status: {refused}")
    bet_rate = bets_load.accepted(201) / bets_load.seconds
    floor_rate = floor_load.accepted(200) / floor_load.seconds
    print(
        f"ratio floor/bets: throughput {floor_rate / bet_rate:.1f}×, "
        f"p50 {bets_load.percentile(0.5) / floor_load.percentile(0.5):.1f}×, "
        f"p99 {bets_load.percentile(0.99) / floor_load.percentile(0.99):.1f}×"
    )
    print(
        "CPU: of the uvicorn process(es), of PostgreSQL's client backends (pg) and background processes (pg bg),"
        " of this load generator; busy: all cores"
    )
    if args.profile:
        summarize_profile(args.profile)
    figures = {
        "accepted_per_s": round(bet_rate, 1), "floor_per_s": round(floor_rate, 1),
        "p50_ms": round(1000 * bets_load.percentile(0.5), 1), "p99_ms": round(1000 * bets_load.percentile(0.99), 1),
        "floor_p99_ms": round(1000 * floor_load.percentile(0.99), 1),
        "ratio_p99": round(bets_load.percentile(0.99) / floor_load.percentile(0.99), 2),
        "offered_per_s": args.rate or None, "share_of_floor": round(bet_rate / floor_rate, 3), "runs": len(runs),
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: this run's figures


if __name__ == "__main__":
    main()
