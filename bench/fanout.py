"""Benchmark: one API process fanning a table's public state out to N concurrent SSE clients.

    .venv/bin/python bench/fanout.py [--clients 10000] [--changes 20] [--broker mqtt://host:port]

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
    import uvicorn

    from services.api.app import create_app
    from services.api.consoles import ViewRelay
    from services.catalog import STUDIO_GAMES
    from services.db import make_engine, migrate, session_factory
    from services.rounds.returns import HOUSE_SETTINGS
    from services.rounds.service import RoundService

    engine = make_engine(database)
    migrate(engine)
    RoundService(session_factory(engine), games=STUDIO_GAMES).create_table(TABLE, settings=HOUSE_SETTINGS)
    app = create_app(engine, relay=ViewRelay(broker))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", backlog=16384, timeout_keep_alive=60)
    profile = os.environ.get("BENCH_PROFILE")  # a path: write the API process's cProfile there
    if not profile:
        uvicorn.Server(config).run()
        return
    import cProfile
    import signal

    profiler = cProfile.Profile()

    def stop(*_: object) -> None:
        profiler.dump_stats(profile)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    profiler.enable()
    uvicorn.Server(config).run()


# --- the client processes -------------------------------------------------------------------


async def one_client(port: int, arrivals: dict[int, list[float]], ready: list[int], stop: asyncio.Event) -> None:
    for attempt in range(20):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            break
        except OSError:
            await asyncio.sleep(0.05 * (attempt + 1))
    else:
        raise RuntimeError("could not connect")
    writer.write(f"GET {PATH} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
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


def measure(port: int, change: Any, pid: int, clients: int, procs: int, changes: int, first: int) -> dict[str, Any]:
    change(first - 1)
    per_proc = [clients // procs + (1 if index < clients % procs else 0) for index in range(procs)]
    pipes = []
    workers = []
    for count in per_proc:
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
    cpu_before = cpu_seconds(pid)
    for n in range(first, first + changes):
        published[n] = time.monotonic()
        change(n)
        time.sleep(max(0.0, published[n] + 1.0 - time.monotonic()))
    time.sleep(1.0)
    cpu = cpu_seconds(pid) - cpu_before
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
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "BROKER", "DATABASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.serve[2])
        return
    raise_file_limit()
    with broker(args.broker) as url, tempfile.TemporaryDirectory() as scratch:
        port = free_port()
        database = f"sqlite:///{scratch}/fanout.db"
        api = subprocess.Popen([sys.executable, __file__, "--serve", str(port), url, database])
        publisher = Publisher(url)
        try:
            wait_for_port(port, api)
            one = measure(port, publisher, api.pid, 1, 1, min(args.changes, 10), first=1)
            print(f"API, 1 client: {one}", flush=True)
            full = measure(port, publisher, api.pid, args.clients, args.client_procs, args.changes, first=1000)
            print(f"API, {args.clients} clients: {full}", flush=True)
        finally:
            publisher.close()
            api.terminate()
            api.wait(10)
    raw_port = free_port()
    commands, server_end = multiprocessing.Pipe()
    raw = multiprocessing.Process(target=raw_server, args=(raw_port, server_end))
    raw.start()
    try:
        wait_for_port(raw_port, None)
        floor = measure(raw_port, commands.send, raw.pid or 0, args.clients, args.client_procs, args.changes, 1000)
        print(f"bare sockets, {args.clients} clients: {floor}", flush=True)
    finally:
        commands.send(None)
        raw.join(10)
    figures = {
        **full,
        "one_client_p50_ms": one["last_client_p50_ms"],
        "one_client_p99_ms": one["last_client_p99_ms"],
        "floor_bare_sockets_last_client_p50_ms": floor["last_client_p50_ms"],
        "floor_bare_sockets_last_client_p99_ms": floor["last_client_p99_ms"],
        "floor_bare_sockets_cpu_ms_per_change": floor["api_cpu_ms_per_change"],
        "p99_ratio_to_floor": _ratio(full["last_client_p99_ms"], floor["last_client_p99_ms"]),
        "cpu_ratio_to_floor": _ratio(full["api_cpu_ms_per_change"], floor["api_cpu_ms_per_change"]),
    }
    print(json.dumps(figures))


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
