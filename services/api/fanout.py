"""In-memory fan-out of round views to Server-Sent Events clients.

Each API process keeps one ``Hub`` per feed (the public round state, the dealer console view). A
source — the process's one MQTT subscription to the controllers' retained views, or, for an API
running without a broker, one database poller per watched table — publishes each table's value
into the hub from any thread. The hub encodes the SSE frame once per change and wakes every client
of that table; a client costs no database read and no broker subscription.

Frames carry ids ``<epoch>.<seq>``; a client that reconnects with ``Last-Event-ID`` gets the frames
it missed while they are still among the last ``RESUME_FRAMES`` (else the latest value), nothing
again that it already had. A comment line is sent every ``heartbeat_s`` so proxies keep the
connection and dead clients are found.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi.responses import StreamingResponse

RESUME_FRAMES = 32
HEARTBEAT_S = 15.0
HEARTBEAT = b": heartbeat\n\n"
IDLE_TICKS = 4  # a poller stops after this many reads with no client


@dataclass
class Feed:
    """One table's frames: the last few, newest last, and the event its clients wait on."""

    frames: deque[tuple[int, bytes]] = field(default_factory=lambda: deque(maxlen=RESUME_FRAMES))
    value: Any = None
    seq: int = 0
    clients: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def wake(self) -> None:
        """On the event loop: wake every waiting client, then wait on a fresh event."""
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class Hub:
    """Latest values by key (a table), published from any thread and streamed on the event loop."""

    def __init__(self) -> None:
        self.epoch = uuid.uuid4().hex[:8]
        self._lock = threading.Lock()
        self._feeds: dict[str, Feed] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def feed(self, key: str) -> Feed:
        with self._lock:
            return self._feeds.setdefault(key, Feed())

    def value(self, key: str) -> Any:
        with self._lock:
            found = self._feeds.get(key)
            return None if found is None else found.value

    def publish(self, key: str, value: Any) -> None:
        """A new value for ``key`` (any thread); an unchanged value sends nothing."""
        with self._lock:
            feed = self._feeds.setdefault(key, Feed())
            if value == feed.value:
                return
            feed.seq += 1
            data = json.dumps(value, separators=(",", ":"))
            feed.frames.append((feed.seq, f"id: {self.epoch}.{feed.seq}\ndata: {data}\n\n".encode()))
            feed.value = value
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(feed.wake)

    def missed(self, key: str, seen: int) -> tuple[int, list[bytes]]:
        """The frames after ``seen`` (all of them, or just the latest if ``seen`` is too old), and the seq now."""
        with self._lock:
            feed = self._feeds.get(key)
            if feed is None or not feed.frames or seen == feed.seq:
                return seen, []
            oldest = feed.frames[0][0]
            if seen and oldest - 1 <= seen < feed.seq:  # 0: a new client, which starts from the latest
                return feed.seq, [frame for seq, frame in feed.frames if seq > seen]
            return feed.seq, [feed.frames[-1][1]]

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
        heartbeat_s: float = HEARTBEAT_S,
        still_allowed: Callable[[], Awaitable[bool]] | None = None,
    ) -> StreamingResponse:
        """SSE of ``key``: what the client missed (or the latest value), then every change.

        Ends after ``changes`` data frames, when the client goes away (Starlette cancels the
        generator), or when ``still_allowed()`` — asked at every heartbeat — answers False.
        """
        self._loop = asyncio.get_running_loop()
        feed = self.feed(key)
        seen = self.resume_point(last_event_id)

        async def frames() -> AsyncIterator[bytes]:
            nonlocal seen
            sent = 0
            feed.clients += 1
            try:
                while True:
                    changed = feed.changed  # taken before looking, so a change after the look wakes us
                    seen, fresh = self.missed(key, seen)
                    for frame in fresh[: changes - sent]:
                        yield frame
                        sent += 1
                    if sent >= changes:
                        return
                    if fresh:
                        continue
                    try:
                        async with asyncio.timeout(heartbeat_s):  # no task per wait, unlike wait_for
                            await changed.wait()
                    except TimeoutError:
                        if still_allowed is not None and not await still_allowed():
                            return
                        yield HEARTBEAT
            finally:
                feed.clients -= 1

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )


class Poller:
    """The source for an API without a broker: one database read per watched key every ``interval_s``.

    The read runs while the key has clients, whatever their number; it stops with the last one.
    """

    def __init__(self, hub: Hub, read: Callable[[str], Any], interval_s: float) -> None:
        self.hub = hub
        self.read = read
        self.interval_s = interval_s
        self._running: set[str] = set()

    def watch(self, key: str) -> None:
        """Start polling ``key`` on the running loop, unless it is polled already."""
        if key in self._running:
            return
        self._running.add(key)
        asyncio.get_running_loop().create_task(self._poll(key))

    async def _poll(self, key: str) -> None:
        feed = self.hub.feed(key)
        idle = 0
        try:
            while True:
                await asyncio.sleep(self.interval_s)
                idle = idle + 1 if feed.clients == 0 else 0
                if idle >= IDLE_TICKS:  # a client just let in may not have started reading yet
                    return
                try:
                    value = await asyncio.to_thread(self.read, key)
                except Exception:  # a failed read is retried at the next tick; the clients keep the last value
                    continue
                self.hub.publish(key, value)
        finally:
            self._running.discard(key)
