"""In-memory fan-out of round views to Server-Sent Events clients.

Each API process keeps one ``Hub`` per feed (the public round state, the dealer console view). A
source — the process's one MQTT subscription to the controllers' retained views, or, for an API
running without a broker, one database poller per watched table — publishes each table's value
into the hub from any thread. The hub encodes the SSE frame once per change and writes it to every
client of the table in one pass on the event loop: no task wakes per client, no database read.

Under uvicorn (``StudioAPI`` hands the server's own ``send`` down in the scope) a frame goes straight
to each client's transport, chunk-encoded once per change for all of them; a client whose unsent
bytes pass ``SLOW_CLIENT_BYTES`` is ended — it reconnects with ``Last-Event-ID`` and gets what it
missed. Elsewhere (the test client, another server) each frame goes through the client's ASGI
``send``, which almost always completes at once; when it cannot, that one send finishes in a task
of its own, the pass goes on to the others, and the slow client catches up once it completes.

Frames carry ids ``<epoch>.<seq>``; a client that reconnects with ``Last-Event-ID`` gets the frames
it missed while they are still among the last ``RESUME_FRAMES`` (else the latest value), nothing
again that it already had. A comment line goes to every client each ``heartbeat_s`` so proxies keep
the connection; a stream with ``still_allowed`` (a login) is asked then too and ends when it says no.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from services.observability import metrics

RESUME_FRAMES = 32
HEARTBEAT_S = 15.0
HEARTBEAT = b": heartbeat\n\n"
IDLE_TICKS = 4  # a poller stops after this many reads with no client
SLOW_CLIENT_BYTES = 256 * 1024  # a client with this much unsent is ended (it reconnects and resumes)
RAW_SEND = "studio.raw_send"  # scope["extensions"] key: the server's own send (see StudioAPI)
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]


@dataclass(eq=False)
class Client:
    send: Send
    seen: int  # the seq of the last frame it has
    remaining: int  # data frames still to send before the stream ends
    closed: asyncio.Future[None]
    still_allowed: Callable[[], Awaitable[bool]] | None = None
    busy: asyncio.Task[None] | None = None  # a send that could not complete at once
    transport: Any = None  # uvicorn's transport of a chunk-encoded response: frames are written to it directly

    def close(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


@dataclass
class Feed:
    """One table's frames (the last few, newest last) and the clients streaming it."""

    key: str
    frames: deque[tuple[int, bytes]] = field(default_factory=lambda: deque(maxlen=RESUME_FRAMES))
    value: Any = None
    seq: int = 0
    clients: set[Client] = field(default_factory=set)


class Hub:
    """Latest values by key (a table), published from any thread and streamed on the event loop."""

    def __init__(self, heartbeat_s: float = HEARTBEAT_S, name: str = "state") -> None:
        self.epoch = uuid.uuid4().hex[:8]
        self.name = name  # the stream's name in ``studio_sse_clients``
        self.heartbeat_s = heartbeat_s
        self._lock = threading.Lock()
        self._feeds: dict[str, Feed] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self.ended = False  # the server stops: a stream opened from now on ends after its first delivery
        self._listeners: list[Callable[[str], None]] = []

    def listen(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(key)`` after each change of a key's value (on the publishing thread)."""
        self._listeners.append(listener)

    def feed(self, key: str) -> Feed:
        with self._lock:
            return self._feeds.setdefault(key, Feed(key))

    def value(self, key: str) -> Any:
        with self._lock:
            found = self._feeds.get(key)
            return None if found is None else found.value

    def values(self) -> dict[str, Any]:
        """Every key's latest value (those with one)."""
        with self._lock:
            return {key: feed.value for key, feed in self._feeds.items() if feed.value is not None}

    def publish(self, key: str, value: Any) -> None:
        """A new value for ``key`` (any thread); an unchanged value sends nothing."""
        with self._lock:
            feed = self._feeds.setdefault(key, Feed(key))
            if value == feed.value:
                return
            feed.seq += 1
            data = json.dumps(value, separators=(",", ":"))
            feed.frames.append((feed.seq, f"id: {self.epoch}.{feed.seq}\ndata: {data}\n\n".encode()))
            feed.value = value
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._broadcast, feed)
        for listener in self._listeners:
            listener(key)

    def end(self) -> None:
        """End every open stream, and every one opened from now on after its first delivery (on the event loop):
        a stopping server's streams finish like any other response, and their clients reconnect."""
        self.ended = True
        with self._lock:
            clients = [client for feed in self._feeds.values() for client in feed.clients]
        for client in clients:
            client.close()

    def resume_point(self, last_event_id: str | None) -> int:
        """The seq a client already has, from its ``Last-Event-ID`` (0: nothing, or another process's id)."""
        epoch, _, seq = (last_event_id or "").partition(".")
        return int(seq) if epoch == self.epoch and seq.isdigit() else 0

    def stream(
        self,
        key: str,
        *,
        last_event_id: str | None = None,
        changes: int = 1_000_000,
        still_allowed: Callable[[], Awaitable[bool]] | None = None,
    ) -> Response:
        """SSE of ``key``: what the client missed (or the latest value), then every change.

        Ends after ``changes`` data frames, when the client goes away, or when ``still_allowed()``
        — asked at every heartbeat — answers False.
        """
        return _FeedResponse(self, key, self.resume_point(last_event_id), changes, still_allowed)

    # --- on the event loop ------------------------------------------------------------------

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        with self._lock:
            self._loop = loop
            self.ended = False
            for feed in self._feeds.values():
                feed.clients.clear()  # clients of a loop that has ended
        self._heartbeat = loop.create_task(self._heartbeats(loop))  # kept: the loop holds tasks weakly

    def _broadcast(self, feed: Feed) -> None:
        with self._lock:
            seq, latest = feed.seq, feed.frames[-1][1] if feed.frames else b""
        shared = _chunk(latest)  # the one new frame, chunk-encoded once for every client up to date
        for client in list(feed.clients):
            direct = client.transport is not None and client.busy is None and client.remaining > 0
            if direct and client.seen == seq - 1 and not client.closed.done():
                client.seen = seq
                client.remaining -= 1
                self._write(client, shared)
                if client.remaining <= 0:
                    client.close()
            else:
                self._deliver(feed, client)

    def _deliver(self, feed: Feed, client: Client) -> None:
        if client.busy is not None or client.closed.done():
            return  # it catches up when its pending send completes
        with self._lock:
            client.seen, frames = _missed(feed, client.seen)
        frames = frames[: client.remaining]
        if not frames:
            return
        client.remaining -= len(frames)
        self._send(feed, client, b"".join(frames))
        if client.remaining <= 0:
            client.close()

    def _write(self, client: Client, chunk: bytes) -> None:
        transport = client.transport
        if transport.is_closing() or transport.get_write_buffer_size() > SLOW_CLIENT_BYTES:
            client.close()
        else:
            transport.write(chunk)

    def _send(self, feed: Feed, client: Client, body: bytes) -> None:
        """Send ``body`` now; if the send must wait, let it finish in a task and catch up afterwards."""
        if client.transport is not None:
            self._write(client, _chunk(body))
            return
        sending = client.send({"type": "http.response.body", "body": body, "more_body": True})
        if isinstance(sending, Coroutine):
            try:
                waiting_on = sending.send(None)
            except StopIteration:
                return
            except Exception:  # the connection is gone: its request ends
                client.close()
                return
            client.busy = asyncio.get_running_loop().create_task(_finish(sending, waiting_on))
        else:
            client.busy = asyncio.ensure_future(_awaited(sending))

        def done(task: asyncio.Task[None]) -> None:
            client.busy = None
            if task.cancelled() or task.exception() is not None:
                client.close()
            else:
                self._deliver(feed, client)

        client.busy.add_done_callback(done)

    async def _heartbeats(self, loop: asyncio.AbstractEventLoop) -> None:
        while self._loop is loop:
            await asyncio.sleep(self.heartbeat_s)
            with self._lock:
                feeds = list(self._feeds.values())
            clients = [(feed, client) for feed in feeds for client in list(feed.clients)]
            await asyncio.gather(*(_check(c, c.still_allowed) for _, c in clients if c.still_allowed is not None))
            for feed, client in clients:
                if client.busy is None and not client.closed.done():
                    self._send(feed, client, HEARTBEAT)


def _chunk(body: bytes) -> bytes:
    """``body`` as one chunk of HTTP/1.1 chunked transfer encoding."""
    return b"%x\r\n%s\r\n" % (len(body), body)


def _server_transport(scope: Scope) -> Any:
    """uvicorn's transport for this response, if the response is chunk-encoded by uvicorn; else None."""
    cycle = getattr(scope.get("extensions", {}).get(RAW_SEND), "__self__", None)
    if (
        not type(cycle).__module__.startswith("uvicorn.protocols.http.")
        or getattr(cycle, "chunked_encoding", 0) is not True
    ):
        return None
    transport = getattr(cycle, "transport", None)
    needed = ("write", "is_closing", "get_write_buffer_size")
    return transport if all(hasattr(transport, name) for name in needed) else None


def _missed(feed: Feed, seen: int) -> tuple[int, list[bytes]]:
    """The frames after ``seen`` (all of them, or just the latest if ``seen`` is too old), and the seq now."""
    if not feed.frames or seen == feed.seq:
        return seen, []
    oldest = feed.frames[0][0]
    if seen and oldest - 1 <= seen < feed.seq:  # 0: a new client, which starts from the latest
        return feed.seq, [frame for seq, frame in feed.frames if seq > seen]
    return feed.seq, [feed.frames[-1][1]]


async def _awaited(awaitable: Awaitable[None]) -> None:
    await awaitable


async def _check(client: Client, still_allowed: Callable[[], Awaitable[bool]]) -> None:
    if not await still_allowed():
        client.close()


class _Resumed:
    """An awaitable that goes on with a coroutine already started by hand and now waiting on ``pending``.

    ``Hub._send`` starts each send by hand so that the usual case — done at once — costs no task.
    When a send must wait, its driving task awaits this: it first yields the future the coroutine
    is blocked on (as the coroutine itself would have), then delegates the rest to it.
    """

    def __init__(self, coroutine: Coroutine[Any, Any, None], pending: Any) -> None:
        self.coroutine = coroutine
        self.pending = pending

    def __await__(self) -> Generator[Any, None, None]:
        try:
            yield self.pending
        except BaseException:
            self.coroutine.close()
            raise
        yield from self.coroutine.__await__()


async def _finish(coroutine: Coroutine[Any, Any, None], pending: Any) -> None:
    await _Resumed(coroutine, pending)


async def _until_disconnect(receive: Receive, client: Client) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    client.close()


class _FeedResponse(Response):
    """One client's stream: registered with its feed until it ends, fed by the hub's passes."""

    def __init__(
        self,
        hub: Hub,
        key: str,
        seen: int,
        changes: int,
        still_allowed: Callable[[], Awaitable[bool]] | None,
    ) -> None:
        super().__init__(media_type="text/event-stream")
        self.hub, self.key, self.seen, self.changes, self.still_allowed = hub, key, seen, changes, still_allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub = self.hub
        hub._bind()
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        client = Client(send, self.seen, self.changes, asyncio.get_running_loop().create_future(), self.still_allowed)
        client.transport = _server_transport(scope)
        feed = hub.feed(self.key)
        feed.clients.add(client)
        clients = metrics.SSE_CLIENTS.labels(hub.name)
        clients.inc()
        listener = asyncio.create_task(_until_disconnect(receive, client))
        try:
            hub._deliver(feed, client)
            if hub.ended:  # opened while the server stops (its request was accepted before): this is all it gets
                client.close()
            await client.closed
        finally:
            feed.clients.discard(client)
            clients.dec()
            listener.cancel()
        if client.busy is not None:
            await asyncio.wait([client.busy])
        transport = client.transport
        if transport is not None and transport.get_write_buffer_size() > transport.get_write_buffer_limits()[1]:
            transport.abort()  # a client that reads nothing: the last chunk would wait for it (a stop, for ever)
        with contextlib.suppress(OSError):  # the server ignores a send to a client that left
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class Poller:
    """The source of values kept in the database: one read per watched key every ``interval_s``, and at
    once when something tells it (``wake``) that the keys of a table may have changed.

    The read runs while the key has clients, whatever their number; it stops shortly after the last one.
    """

    def __init__(self, hub: Hub, read: Callable[[str], Any], interval_s: float) -> None:
        self.hub = hub
        self.read = read
        self.interval_s = interval_s
        self._running: dict[str, asyncio.Task[None]] = {}  # kept: the loop holds tasks weakly
        self._wakes: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, key: str) -> None:
        """Start polling ``key`` on the running loop, unless it is polled already."""
        if key in self._running:
            return
        self._loop = asyncio.get_running_loop()
        self._wakes[key] = asyncio.Event()
        self._running[key] = self._loop.create_task(self._poll(key))

    def wake(self, prefix: str) -> None:
        """Read every watched key starting with ``prefix`` now (any thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake, prefix)

    def _wake(self, prefix: str) -> None:
        for key, event in self._wakes.items():
            if key.startswith(prefix):
                event.set()

    async def _poll(self, key: str) -> None:
        feed = self.hub.feed(key)
        woken = self._wakes[key]
        idle = 0
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), self.interval_s)
                woken.clear()
                idle = idle + 1 if not feed.clients else 0
                if idle >= IDLE_TICKS:  # a client just let in may not have started reading yet
                    return
                try:
                    value = await asyncio.to_thread(self.read, key)
                except Exception:  # a failed read is retried at the next tick; the clients keep the last value
                    continue
                self.hub.publish(key, value)
        finally:
            self._running.pop(key, None)
            self._wakes.pop(key, None)
