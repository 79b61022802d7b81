"""The public-state fan-out: one source per process, every client served from memory, resume, heartbeats."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from services.api.app import create_app
from services.api.consoles import ViewRelay
from services.api.fanout import HEARTBEAT, Hub, Poller
from services.bus import topics
from services.bus.client import connect, make_client
from services.rounds.players import PlayerService
from tests.support import stream_in_background, wait_until


def data(frame: bytes) -> Any:
    lines = frame.decode().splitlines()
    return json.loads(next(line[len("data: ") :] for line in lines if line.startswith("data: ")))


def frame_id(frame: bytes) -> str:
    return next(line[len("id: ") :] for line in frame.decode().splitlines() if line.startswith("id: "))


async def body(hub: Hub, key: str, **options: Any) -> AsyncIterator[bytes]:
    """Drive one client's ASGI response and yield its frames (a heartbeat is a frame too)."""
    response = hub.stream(key, **options)
    chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            chunks.put_nowait(message["body"] or None if not message.get("more_body") else message["body"])
            if not message.get("more_body"):
                chunks.put_nowait(None)

    task = asyncio.create_task(response({"type": "http"}, receive, send))
    try:
        while (chunk := await chunks.get()) is not None:
            for frame in chunk.split(b"\n\n")[:-1]:
                yield frame + b"\n\n"
    finally:
        gone.set()
        await task


def test_a_new_client_gets_the_latest_value_then_each_change_published_from_any_thread() -> None:
    async def scenario() -> list[Any]:
        hub = Hub()
        hub.publish("T1", {"n": 1})
        hub.publish("T1", {"n": 2})
        frames = body(hub, "T1", changes=3)
        received = [data(await anext(frames))]
        threading.Thread(target=lambda: [hub.publish("T1", {"n": n}) for n in (3, 3, 4)]).start()
        received += [data(frame) async for frame in frames]
        return received

    assert asyncio.run(scenario()) == [{"n": 2}, {"n": 3}, {"n": 4}], "the latest first; an unchanged value is not sent"


def test_a_stopping_servers_streams_end_and_one_opened_meanwhile_gets_the_latest_value_then_ends() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        hub = Hub()
        hub.publish("T1", {"n": 1})
        open_before = body(hub, "T1")
        before = [data(await anext(open_before))]
        hub.end()  # the server stops (``services.api.server``)
        before += [data(frame) async for frame in open_before]  # the open stream ends: no frame after the end
        opened_meanwhile = [data(frame) async for frame in body(hub, "T1")]  # accepted before the stop
        return before, opened_meanwhile

    assert asyncio.run(asyncio.wait_for(scenario(), 5)) == ([{"n": 1}], [{"n": 1}])


def test_a_client_that_reconnects_gets_what_it_missed_and_nothing_it_had() -> None:
    async def scenario() -> None:
        hub = Hub()
        for n in range(1, 4):
            hub.publish("T1", {"n": n})
        first = [frame async for frame in body(hub, "T1", changes=1)]
        seen = frame_id(first[0])
        assert data(first[0]) == {"n": 3}
        for n in range(4, 7):
            hub.publish("T1", {"n": n})
        resumed = [data(frame) async for frame in body(hub, "T1", last_event_id=seen, changes=3)]
        assert resumed == [{"n": 4}, {"n": 5}, {"n": 6}]
        for n in range(7, 60):  # more than the hub keeps: the latest only
            hub.publish("T1", {"n": n})
        assert [data(frame) async for frame in body(hub, "T1", last_event_id=seen, changes=1)] == [{"n": 59}]
        other = "0000.1"  # another process's ids mean nothing here
        assert [data(frame) async for frame in body(hub, "T1", last_event_id=other, changes=1)] == [{"n": 59}]

    asyncio.run(scenario())


def test_an_idle_stream_sends_heartbeats_and_ends_when_no_longer_allowed() -> None:
    async def scenario() -> list[bytes]:
        hub = Hub(heartbeat_s=0.05)
        hub.publish("T1", {"n": 1})
        answers = iter([True, False])

        async def allowed() -> bool:
            return next(answers)

        return [frame async for frame in body(hub, "T1", still_allowed=allowed)]

    frames = asyncio.run(scenario())
    assert [data(frames[0]), frames[1:]] == [{"n": 1}, [HEARTBEAT]]


def test_a_slow_client_holds_nobody_up_and_catches_up_with_what_it_missed() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        hub = Hub()
        hub.publish("T1", {"n": 0})
        gate = asyncio.Event()
        slow: list[bytes] = []

        async def slow_send(message: dict[str, Any]) -> None:
            if message.get("body") and slow:  # the first frame goes through; then the socket is full
                await gate.wait()
            if message.get("body"):
                slow.append(message["body"])

        gone = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        slow_task = asyncio.create_task(hub.stream("T1", changes=4)({"type": "http"}, receive, slow_send))
        fast = body(hub, "T1", changes=4)
        received = [data(await anext(fast))]
        for n in (1, 2, 3):
            hub.publish("T1", {"n": n})
            received.append(data(await anext(fast)))
        gate.set()
        await asyncio.wait_for(slow_task, 5)
        frames = [frame + b"\n\n" for chunk in slow for frame in chunk.split(b"\n\n")[:-1]]
        return received, [data(frame) for frame in frames]

    fast, slow = asyncio.run(scenario())
    assert fast == [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}], "the fast client is not held up"
    assert slow == [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}], "the slow one gets every frame, in order"


def test_without_a_broker_one_read_per_table_serves_every_client() -> None:
    reads: list[str] = []

    def read(key: str) -> dict[str, Any]:
        reads.append(key)
        return {"reads": len(reads) // 10}

    async def scenario() -> list[list[Any]]:
        hub = Hub()
        poller = Poller(hub, read, interval_s=0.01)
        hub.publish("T1", read("T1"))

        async def client() -> list[Any]:
            poller.watch("T1")
            return [data(frame) async for frame in body(hub, "T1", changes=3)]

        return await asyncio.gather(*(client() for _ in range(50)))

    received = asyncio.run(scenario())
    assert all(values == [{"reads": 0}, {"reads": 1}, {"reads": 2}] for values in received)
    assert 20 <= len(reads) <= 40, "one read per tick for all 50 clients, not one per client"


def test_a_change_of_a_tables_public_state_wakes_the_private_reads_of_that_table_only() -> None:
    reads: list[str] = []
    count = iter(range(1_000))

    def read(key: str) -> dict[str, Any]:
        reads.append(key)
        return {"key": key, "n": next(count)}

    async def scenario() -> list[str]:
        states, private = Hub(), Hub()
        poller = Poller(private, read, interval_s=3600)  # no tick during the test: only a wake reads
        states.listen(lambda table: poller.wake(table + "/"))
        for key in ("T1/ana", "T1/binh", "T10/ana"):
            private.publish(key, read(key))
            poller.watch(key)
        reads.clear()
        streams = [asyncio.create_task(collect(private, key)) for key in ("T1/ana", "T10/ana")]
        await asyncio.sleep(0.05)
        threading.Thread(target=states.publish, args=("T1", {"phase": "dealing"})).start()  # the relay's thread
        await asyncio.wait_for(streams[0], 5)
        for _ in range(20):  # binh's read (no client of his is streaming) may finish just after ana's
            if len(reads) >= 2:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # time for a wrong read of T10 to show
        streams[1].cancel()
        return sorted(reads)

    async def collect(hub: Hub, key: str) -> list[Any]:
        return [data(frame) async for frame in body(hub, key, changes=2)]

    assert asyncio.run(scenario()) == ["T1/ana", "T1/binh"], "T1's private views read at once, T10's not"


@pytest.mark.broker
@pytest.mark.db
def test_the_relay_fans_the_controller_state_out_without_a_database_read_per_change(
    database: Engine, mqtt_url: str
) -> None:
    table = f"f{time.monotonic_ns() % 10**9}"
    relay = ViewRelay(mqtt_url)
    publisher = make_client("")
    connect(publisher, mqtt_url)
    app = create_app(database, relay=relay)
    players: PlayerService = app.state.services.players
    operator = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    statements: list[str] = []
    try:
        relay.subscribed.wait(10)
        wait_until(publisher.is_connected, 10, "the publisher to connect")
        with TestClient(app) as client:
            client.post("/v1/operator/tables", json={"id": table, "allow_return_over_100": True}, headers=operator)

            def publish(n: int) -> None:
                state = {"v": 1, "table_id": table, "round_id": f"{table}-1", "phase": "dealing", "n": n}
                publisher.publish(topics.round_state(table), json.dumps(state), qos=1, retain=True).wait_for_publish(5)

            publish(0)
            wait_until(lambda: relay.state.value(table) is not None, 10, "the relayed state")
            received: list[list[int]] = []

            def watch() -> None:
                with client.stream("GET", f"/v1/tables/{table}/state/stream?changes=4") as response:
                    lines = [line for line in response.iter_lines() if line.startswith("data: ")]
                received.append([json.loads(line[len("data: ") :])["n"] for line in lines])

            watchers = [threading.Thread(target=watch) for _ in range(20)]
            for watcher in watchers:
                watcher.start()
            wait_until(lambda: len(relay.state.feed(table).clients) == 20, 10, "20 clients")
            event.listen(database, "before_cursor_execute", lambda *args: statements.append(str(args[2])))
            for n in range(1, 4):
                publish(n)
            for watcher in watchers:
                watcher.join(10)
        assert received == [[0, 1, 2, 3]] * 20
        assert statements == [], "a change reaches every client from memory"
    finally:
        publisher.publish(topics.round_state(table), b"", qos=1, retain=True).wait_for_publish(5)
        publisher.disconnect()
        publisher.loop_stop()
        relay.close()


class HeartbeatCount:
    """An SSE stream read to its end on a thread, counting its heartbeats: the hub sends one to each client
    whose login passed the check it makes just before."""

    def __init__(self, client: TestClient, path: str, headers: dict[str, str]) -> None:
        self.heartbeats = 0
        self.ended = threading.Event()
        threading.Thread(target=self.read, args=(client, path, headers), daemon=True).start()

    def read(self, client: TestClient, path: str, headers: dict[str, str]) -> None:
        with client.stream("GET", path, headers=headers) as response:
            assert response.status_code == 200, response.read()
            for line in response.iter_lines():
                if line == HEARTBEAT.decode().strip():
                    self.heartbeats += 1
        self.ended.set()  # the server ended it


@contextmanager
def console_api(
    database: Engine, mqtt_url: str
) -> Iterator[tuple[ViewRelay, TestClient, dict[str, str], dict[str, str]]]:
    """An API relaying the dealer views from the broker, with an operator's and a dealer's (``pit``) headers."""
    relay = ViewRelay(mqtt_url)
    app = create_app(database, relay=relay)
    players: PlayerService = app.state.services.players
    operator = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    dealer = {"Authorization": f"Bearer {players.register('pit', 'dealer')}"}
    try:
        with TestClient(app) as client:
            yield relay, client, operator, dealer
    finally:
        relay.close()


def test_a_revoked_token_ends_its_open_dealer_stream(database: Engine, mqtt_url: str) -> None:
    with console_api(database, mqtt_url) as (_relay, client, operator, dealer):
        client.post("/v1/operator/tables", json={"id": "R1", "allow_return_over_100": True}, headers=operator)
        client.put("/v1/operator/tables/R1/dealers/pit", headers=operator)
        stream = HeartbeatCount(client, "/v1/tables/R1/dealer/stream", dealer)
        wait_until(lambda: stream.heartbeats > 0, 10, "the dealer's stream to pass a check of its token")
        assert not stream.ended.is_set()  # a heartbeat follows each check the token passed
        renewed = client.post("/v1/operator/players/pit/token", headers=dealer)  # staff reissue their own
        assert renewed.status_code == 200 and renewed.json()["role"] == "dealer"
        before = stream.heartbeats
        assert stream.ended.wait(10), "the stream of a revoked token ends"
        # at the first check that sees the revocation: one check may have read the token just before it
        assert stream.heartbeats - before <= 1, stream.heartbeats - before
        assert client.get("/v1/tables/R1/dealer/stream", headers=dealer).status_code == 401
        new = {"Authorization": f"Bearer {renewed.json()['token']}"}
        with client.stream("GET", "/v1/tables/R1/dealer/stream?changes=1", headers=new) as response:
            assert response.status_code == 200


def test_a_dealer_sees_only_assigned_tables_and_an_unassigned_dealer_s_stream_ends(
    database: Engine, mqtt_url: str
) -> None:
    with console_api(database, mqtt_url) as (relay, client, operator, dealer):
        for table in ("S1", "S2"):
            client.post("/v1/operator/tables", json={"id": table, "allow_return_over_100": True}, headers=operator)
        assert client.put("/v1/operator/tables/S1/dealers/pit", headers=operator).json()["dealers"] == ["pit"]
        refused = client.get("/v1/tables/S2/dealer/stream?changes=1", headers=dealer)
        assert refused.status_code == 403 and refused.json()["code"] == "not_your_table"
        not_a_dealer = client.put("/v1/operator/tables/S2/dealers/op", headers=operator)
        assert not_a_dealer.status_code == 422 and "only dealers" in not_a_dealer.json()["message"]
        ended = stream_in_background(client, "/v1/tables/S1/dealer/stream", dealer)
        wait_until(lambda: len(relay.dealer.feed("S1").clients) == 1, 10, "the dealer's stream")
        assert client.delete("/v1/operator/tables/S1/dealers/pit", headers=operator).json()["dealers"] == []
        assert ended.wait(10), "the stream of a dealer taken off the table ends"
        assert client.get("/v1/tables/S1/dealer/stream?changes=1", headers=dealer).status_code == 403


@pytest.mark.db
def test_under_uvicorn_frames_go_straight_to_each_connection_and_resume_by_id(database: Engine) -> None:
    """The production path: uvicorn serves, the hub writes chunk-encoded frames to the transports itself."""
    import httpx
    import uvicorn

    from tests.conftest import free_port

    app = create_app(database)
    players: PlayerService = app.state.services.players
    operator = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.started, 10, "uvicorn")
        with httpx.Client(base_url=base, timeout=10) as client:
            client.post("/v1/operator/tables", json={"id": "U1", "allow_return_over_100": True}, headers=operator)
            round_id = client.post("/v1/operator/tables/U1/rounds", json={}, headers=operator).json()["round_id"]
            received: list[list[tuple[str, str]]] = []

            def watch() -> None:
                frames: list[tuple[str, str]] = []
                with client.stream("GET", "/v1/tables/U1/state/stream?changes=2") as response:
                    event_id = ""
                    for line in response.iter_lines():
                        if line.startswith("id: "):
                            event_id = line[len("id: ") :]
                        elif line.startswith("data: "):
                            frames.append((event_id, json.loads(line[len("data: ") :])["phase"]))
                received.append(frames)

            watchers = [threading.Thread(target=watch) for _ in range(3)]
            for watcher in watchers:
                watcher.start()
            feed = app.state.services.states.feed("U1")
            wait_until(lambda: len(feed.clients) == 3, 10, "three clients")
            assert all(c.transport is not None for c in feed.clients), "uvicorn's transports are written directly"
            client.post(f"/v1/operator/rounds/{round_id}/close-betting", headers=operator)
            for watcher in watchers:
                watcher.join(10)
            assert [[phase for _, phase in frames] for frames in received] == [["betting", "dealing"]] * 3
            first_id = received[0][0][0]
            headers = {"Last-Event-ID": first_id}
            with client.stream("GET", "/v1/tables/U1/state/stream?changes=1", headers=headers) as response:
                resumed = [json.loads(line[6:])["phase"] for line in response.iter_lines() if line.startswith("data: ")]
            assert resumed == ["dealing"], "a client that had 'betting' gets only what it missed"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.mark.db
def test_a_stopping_api_ends_a_stream_whose_client_reads_nothing_at_once_and_quietly(
    database: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """A viewer whose connection is full (it reads nothing) neither holds the stop up nor ends it in an error."""
    import socket

    from services.api.server import api_server
    from services.rounds.returns import HOUSE_SETTINGS
    from tests.conftest import free_port

    app = create_app(database)
    app.state.services.rounds.create_table("U2", settings=HOUSE_SETTINGS)
    server = api_server(app, "127.0.0.1", free_port(), log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 10, "uvicorn")
    viewer = socket.socket()
    viewer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window, never read
    viewer.connect(("127.0.0.1", server.config.port))
    viewer.sendall(b"GET /v1/tables/U2/state/stream HTTP/1.1\r\nHost: studio\r\n\r\n")
    feed = app.state.services.states.feed("U2")
    wait_until(lambda: len(feed.clients) == 1, 10, "the viewer's stream")
    (client,) = feed.clients
    sent = 0

    def full() -> bool:  # more than the kernel's buffers take: the rest waits in the server for a read never made
        nonlocal sent
        sent += 1
        app.state.services.states.publish("U2", {"padding": "x" * 100_000, "n": sent})
        return bool(client.transport.get_write_buffer_size() > 65_536)

    wait_until(full, 10, "a full connection")
    caplog.set_level(logging.ERROR)
    started = time.monotonic()
    server.should_exit = True
    thread.join(10)
    viewer.close()
    assert not thread.is_alive() and time.monotonic() - started < 1.5  # not the 2 s after which requests are cancelled
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
