"""Benchmark: one API process fanning a table's public state out to N concurrent SSE clients.

    .venv/bin/python bench/fanout.py [--clients 10000] [--changes 20] [--broker mqtt://host:port] [--proxies N]

The API (``create_app`` with the broker relay, uvicorn, one process) runs in a child process; the
clients — plain asyncio HTTP/1.1 connections to ``/v1/tables/T1/state/stream``, split over
``--client-procs`` other processes — all stay connected while this process publishes ``--changes``
public states (about 1 KB each, the size of a real round state) on ``…/round/state``, one a second,
as a controller does. Every client stamps each change's arrival (CLOCK_MONOTONIC is one clock for
every process of the machine); a change's latency is arrival − publish.

Figures: per change, the latency to the last client (p50/p99 over the changes) and over all
deliveries; the API's CPU per change (its own user + system time over the changes, heartbeats
included); the same change to one client of the same API process. Floor, in the same run with the
same clients: a bare asyncio server (no HTTP stack, no MQTT) writing each change, encoded once, to
every connection — what the kernel's loopback TCP costs for N sockets on this machine.

``--proxies N``: the production shape — two API processes behind N HAProxy processes, each with
``deploy/haproxy/haproxy.cfg`` (Debian's ``haproxy``; N proxy machines behind DNS or an L4 balancer), the client
processes taking the proxies in turn and each proxy splitting its clients over both API processes (round robin); the
API's CPU is both processes'. Its floor: two bare servers behind the same proxies. A proxy holds about half its
open-file limit in connections (each connection is two descriptors): where a process may open 20,000 files, 20,000
viewers need three.
Loopback only; every loop is bounded in count and time. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

TABLE = "T1"
PATH = f"/v1/tables/{TABLE}/state/stream"
NUMBER = re.compile(rb'"n":(\d+)')


def raise_file_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the API process ------------------------------------------------------------------------


def serve(port: int, broker: str, database: str) -> None:
    raise_file_limit()
    from services.api.app import create_app
    from services.api.consoles import ViewRelay
    from services.api.server import api_server
    from services.catalog import STUDIO_GAMES
    from services.db import make_engine, migrate, session_factory
    from services.rounds.returns import HOUSE_SETTINGS
    from services.rounds.service import RoundService

    engine = make_engine(database)
    migrate(engine)
    RoundService(session_factory(engine), games=STUDIO_GAMES).create_table(TABLE, settings=HOUSE_SETTINGS)
    app = create_app(engine, relay=ViewRelay(broker))
    server = api_server(app, "127.0.0.1", port, log_level="warning", backlog=16384, timeout_keep_alive=60)
    profile = os.environ.get("BENCH_PROFILE")  # a path: write the API process's cProfile there
    if not profile:
        server.run()
        return
    import cProfile
    import signal

    profiler = cProfile.Profile()

    def stop(*_: object) -> None:
        profiler.dump_stats(profile)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    profiler.enable()
    server.run()


# --- the client processes -------------------------------------------------------------------


async def one_client(port: int, arrivals: dict[int, list[float]], ready: list[int], stop: asyncio.Event) -> None:
    """One viewer: connects (again, after a pause that grows, when refused or answered anything but 200 — a proxy
    with no server up answers 503 — as a player's page does), then stamps each change's arrival."""
    request = f"GET {PATH} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode()
    for attempt in range(40):
        writer = None
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except (OSError, asyncio.IncompleteReadError):
            head = b""
        if head.startswith(b"HTTP/1.1 200"):
            break
        if writer is not None:
            writer.close()
        await asyncio.sleep(min(2.0, 0.05 * (attempt + 1)))
    else:
        raise RuntimeError("could not connect")
    buffer = b""
    counted = False
    while not stop.is_set():
        chunk = await reader.read(65536)
        if not chunk:
            break
        now = time.monotonic()
        buffer += chunk
        end = buffer.rfind(b"\n\n")
        if end < 0:
            continue
        complete, buffer = buffer[: end + 2], buffer[end + 2 :]
        for match in NUMBER.finditer(complete):
            arrivals.setdefault(int(match.group(1)), []).append(now)
        if not counted:
            ready[0] += 1
            counted = True
    writer.close()


def run_clients(port: int, count: int, duration_s: float, pipe: Any) -> None:
    raise_file_limit()

    async def main() -> dict[int, list[float]]:
        arrivals: dict[int, list[float]] = {}
        ready = [0]
        stop = asyncio.Event()
        tasks = []
        for start in range(0, count, 250):  # connect in batches: the listen backlog is finite
            tasks += [
                asyncio.create_task(one_client(port, arrivals, ready, stop))
                for _ in range(start, min(count, start + 250))
            ]
            await asyncio.sleep(0.05)
        deadline = time.monotonic() + 60
        while ready[0] < count and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        pipe.send(("ready", ready[0]))
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            if pipe.poll():
                pipe.recv()
                break
            await asyncio.sleep(0.05)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return arrivals

    pipe.send(("arrivals", asyncio.run(main())))


# --- the run --------------------------------------------------------------------------------


@contextmanager
def broker(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from services.bus.broker import embedded_broker

    with embedded_broker() as started:
        yield started


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def state(n: int) -> bytes:
    """A round state of realistic size, numbered ``n``."""
    hands = {seat: {"cards": ["5H", "TH", None], "points": None} for seat in ("A", "B", "C", "banker")}
    value = {"v": 1, "round_id": f"{TABLE}-1", "table_id": TABLE, "phase": "dealing", "n": n, "hands": hands}
    value["padding"] = "x" * max(0, 1000 - len(json.dumps(value)))
    return json.dumps(value, separators=(",", ":")).encode()


class Publisher:
    """Changes for the API: retained public states on the table's MQTT topic, as a controller publishes them."""

    def __init__(self, broker_url: str) -> None:
        from services.bus import topics
        from services.bus.client import connect, make_client

        self.topic = topics.round_state(TABLE)
        self.client = make_client("")
        connect(self.client, broker_url)
        deadline = time.monotonic() + 10
        while not self.client.is_connected() and time.monotonic() < deadline:
            time.sleep(0.02)

    def __call__(self, n: int) -> None:
        self.client.publish(self.topic, state(n), qos=1, retain=True).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def raw_server(port: int, pipe: Any) -> None:
    """The floor: a bare asyncio server writing each change's chunk to every connection, no HTTP stack.

    It answers each connection at once with the response head and the latest frame, then writes
    every change — encoded once — to every transport; ``pipe`` brings the change numbers.
    """
    raise_file_limit()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"

    def chunk(n: int) -> bytes:
        frame = b"data: " + state(n) + b"\n\n"
        return b"%x\r\n%s\r\n" % (len(frame), frame)

    async def main() -> None:
        transports: list[asyncio.Transport] = []
        latest = [b""]

        class Stream(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                writer = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes
                transports.append(writer)
                writer.write(head + latest[0])

        server = await asyncio.get_running_loop().create_server(Stream, "127.0.0.1", port, backlog=16384)
        async with server:
            while (n := await asyncio.to_thread(pipe.recv)) is not None:
                latest[0] = chunk(n)
                for transport in transports:
                    if not transport.is_closing():  # the port probe's connection, clients gone
                        transport.write(latest[0])

    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # writes to clients that left at the end
    try:
        import uvloop  # the API's loop too (uvicorn[standard])
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())


def measure(
    ports: list[int], change: Any, pids: list[int], clients: int, procs: int, changes: int, first: int
) -> dict[str, Any]:
    """``clients`` over ``procs`` client processes, each connecting to one of ``ports`` in turn."""
    change(first - 1)
    per_proc = [clients // procs + (1 if index < clients % procs else 0) for index in range(procs)]
    pipes = []
    workers = []
    for index, count in enumerate(per_proc):
        port = ports[index % len(ports)]
        if not count:
            continue
        parent, child = multiprocessing.Pipe()
        worker = multiprocessing.Process(target=run_clients, args=(port, count, changes * 1.5 + 60, child))
        worker.start()
        pipes.append(parent)
        workers.append(worker)
    connected = sum(pipe.recv()[1] for pipe in pipes)
    if connected < clients:
        print(f"only {connected} of {clients} clients connected", file=sys.stderr)
    time.sleep(1.0)
    published: dict[int, float] = {}
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    for n in range(first, first + changes):
        published[n] = time.monotonic()
        change(n)
        time.sleep(max(0.0, published[n] + 1.0 - time.monotonic()))
    time.sleep(1.0)
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    for pipe in pipes:
        pipe.send("stop")
    arrivals: dict[int, list[float]] = {}
    for pipe in pipes:
        for n, times in pipe.recv()[1].items():
            arrivals.setdefault(n, []).extend(times)
    for worker in workers:
        worker.join(30)
    reached = [n for n in published if connected and len(arrivals.get(n, [])) == connected]
    last = [(max(arrivals[n]) - published[n]) * 1000 for n in reached]
    every = sorted((t - published[n]) * 1000 for n in published for t in arrivals.get(n, []))
    complete = len(reached)
    return {
        "clients": connected,
        "changes_complete": complete,
        "last_client_p50_ms": round(statistics.median(last), 1) if last else None,
        "last_client_p99_ms": round(statistics.quantiles(last, n=100)[98], 1) if len(last) > 1 else None,
        "delivery_p50_ms": round(every[len(every) // 2], 1) if every else None,
        "delivery_p99_ms": round(every[int(len(every) * 0.99)], 1) if every else None,
        "api_cpu_ms_per_change": round(cpu / changes * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--client-procs", type=int, default=4)
    parser.add_argument("--broker", default=None, help="an MQTT URL (default: the embedded amqtt on a free port)")
    parser.add_argument("--proxies", type=int, default=0, help="N HAProxy processes in front of two API processes")
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "BROKER", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.serve[2])
        return
    raise_file_limit()
    servers = 2 if args.proxies else 1
    procs = max(args.client_procs, 2 * args.proxies)  # every proxy gets client processes
    with broker(args.broker) as url, tempfile.TemporaryDirectory() as scratch:
        ports = [free_port() for _ in range(servers)]
        apis = [
            subprocess.Popen([sys.executable, __file__, "--serve", str(port), url, f"sqlite:///{scratch}/fanout{n}.db"])
            for n, port in enumerate(ports)
        ]
        publisher = Publisher(url)
        try:
            for port, api in zip(ports, apis, strict=True):
                wait_for_port(port, api)
            with proxied(ports, args.proxies) as entry:
                pids = [api.pid for api in apis]
                one = measure(entry, publisher, pids, 1, 1, min(args.changes, 10), first=1)
                print(f"API, 1 client: {one}", flush=True)
                full = measure(entry, publisher, pids, args.clients, procs, args.changes, first=1000)
                print(f"API x{servers}, {args.proxies} proxies, {args.clients} clients: {full}", flush=True)
        finally:
            publisher.close()
            for api in apis:
                api.terminate()
                api.wait(10)
    raw_ports = [free_port() for _ in range(servers)]
    pipes = [multiprocessing.Pipe() for _ in range(servers)]
    raws = [
        multiprocessing.Process(target=raw_server, args=(port, end))
        for port, (_, end) in zip(raw_ports, pipes, strict=True)
    ]
    for raw in raws:
        raw.start()

    def change(n: int | None) -> None:
        for commands, _ in pipes:
            commands.send(n)

    try:
        for port in raw_ports:
            wait_for_port(port, None)
        with proxied(raw_ports, args.proxies) as entry:
            raw_pids = [raw.pid or 0 for raw in raws]
            floor = measure(entry, change, raw_pids, args.clients, procs, args.changes, 1000)
        print(f"bare sockets x{servers}, {args.clients} clients: {floor}", flush=True)
    finally:
        change(None)
        for raw in raws:
            raw.join(10)
    figures = {
        **full,
        "api_processes": servers,
        "haproxy_processes": args.proxies,
        "one_client_p50_ms": one["last_client_p50_ms"],
        "one_client_p99_ms": one["last_client_p99_ms"],
        "floor_bare_sockets_last_client_p50_ms": floor["last_client_p50_ms"],
        "floor_bare_sockets_last_client_p99_ms": floor["last_client_p99_ms"],
        "floor_bare_sockets_cpu_ms_per_change": floor["api_cpu_ms_per_change"],
        "p99_ratio_to_floor": _ratio(full["last_client_p99_ms"], floor["last_client_p99_ms"]),
        "cpu_ratio_to_floor": _ratio(full["api_cpu_ms_per_change"], floor["api_cpu_ms_per_change"]),
    }
    print(json.dumps(figures))


@contextmanager
def proxied(ports: list[int], proxies: int) -> Iterator[list[int]]:
    """The ports the clients connect to: the one server's, or those of ``proxies`` HAProxy processes, each in front of
    the two servers with the deployed configuration."""
    if not proxies:
        yield ports[:1]
        return
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        raise SystemExit("--proxies needs HAProxy (apt-get install -y haproxy)")
    config = Path(__file__).resolve().parents[1] / "deploy" / "haproxy" / "haproxy.cfg"
    entries = [free_port() for _ in range(proxies)]
    servers = {"STUDIO_API_1": f"127.0.0.1:{ports[0]}", "STUDIO_API_2": f"127.0.0.1:{ports[1]}"}
    started = [
        subprocess.Popen(
            [haproxy, "-db", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            env=os.environ | servers | {"STUDIO_PROXY_BIND": f"127.0.0.1:{entry}"},
        )
        for entry in entries
    ]
    try:
        for entry, process in zip(entries, started, strict=True):
            wait_for_port(entry, process)
        time.sleep(4.5)  # both servers seen healthy (two checks, 2 s apart) before the clients come
        yield entries
    finally:
        for process in started:
            process.terminate()
            process.wait(10)


def _ratio(value: float | None, floor: float | None) -> float | None:
    return round(value / floor, 2) if value and floor else None


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or (process is not None and process.poll() is not None):
                raise SystemExit(f"nothing listens on port {port}") from None
            time.sleep(0.2)


if __name__ == "__main__":
    main()
