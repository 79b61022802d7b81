"""HTTP/1.1 to the operator's wallet from the event loop: a few kept-alive connections (plain or TLS) and h11 for the
protocol — what a betting window's debits need, and no more.

A general async client's machinery per request (its pool's bookkeeping, cancellation shields, a look for which async
library runs it) cost ~2 ms of CPU a call in the API process, more than the whole bet around it; this costs ~0.1 ms.
Each call is one ``POST`` with a ``Content-Length`` body; the answer may come sized or chunked. A connection goes back
to the pool only when both sides finished the exchange cleanly; any trouble closes it. A kept-alive connection the
wallet had closed while idle (servers close idle ones after a few seconds) fails before a byte of the answer comes:
that call is sent once more at once on a new connection — safe, since the protocol applies a transaction id once.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import NamedTuple
from urllib.parse import urlsplit

import h11

from services.wallet.errors import WalletError

IDLE_S = 4.0  # a connection idle longer is not reused (servers commonly close theirs after 5 s)
MAX_ANSWER_BYTES = 64 * 1024


class WireError(WalletError):
    """No answer came over the connection (refused, closed, timed out, not HTTP): the call's outcome is unknown."""

    code = "wallet_unavailable"


class Headers(dict[str, str]):
    """An answer's headers by lower-case name; ``get`` takes any case."""

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(name.lower(), default)


class Answered(NamedTuple):
    """What the caller reads of an answer (as of an ``httpx.Response``)."""

    status_code: int
    headers: Headers
    content: bytes


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.protocol = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_ANSWER_BYTES)
        self.used_at = time.monotonic()
        self.heard = False  # a byte of an answer came (a failure after it is not a stale connection's)

    async def exchange(self, request: h11.Request, body: bytes) -> Answered:
        protocol = self.protocol
        self.heard = False
        self.writer.write(
            protocol.send(request) + protocol.send(h11.Data(data=body)) + protocol.send(h11.EndOfMessage())
        )
        await self.writer.drain()
        status, headers, content, size = 0, Headers(), [], 0
        while True:
            event = protocol.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(65536)
                self.heard = self.heard or bool(data)
                protocol.receive_data(data)  # b"": the wallet closed the connection
            elif isinstance(event, h11.Response):
                status = event.status_code
                headers = Headers((name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers)
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > MAX_ANSWER_BYTES:
                    raise WireError(f"the answer is longer than {MAX_ANSWER_BYTES} bytes")
                content.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise WireError("the wallet closed the connection without an answer")
        self.used_at = time.monotonic()
        return Answered(status, headers, b"".join(content))

    @property
    def reusable(self) -> bool:
        return self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE

    def close(self) -> None:
        self.writer.close()


class Wire:
    """Kept-alive connections to one wallet's address, used from one event loop; at most ``size`` at once."""

    def __init__(self, base_url: str, timeout_s: float, size: int) -> None:
        parts = urlsplit(base_url)
        secure = parts.scheme == "https"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WireError(f"not an http:// or https:// address: {base_url!r}")
        self.host, self.port = parts.hostname, parts.port or (443 if secure else 80)
        self.authority = parts.netloc.rpartition("@")[2]
        self.tls = ssl.create_default_context() if secure else None
        self.timeout_s = timeout_s
        self._slots = asyncio.Semaphore(size)
        self._idle: list[_Connection] = []

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answered:
        """``POST`` the body to ``url`` (on this wallet's address): the answer, or ``WireError``."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request = h11.Request(method="POST", target=target, headers=[
            ("Host", self.authority), ("Content-Length", str(len(body))), *headers.items()])  # fmt: skip
        async with self._slots:
            try:
                async with asyncio.timeout(self.timeout_s):
                    return await self._sent(request, body)
            except TimeoutError:
                raise WireError(f"no answer within {self.timeout_s:g} s") from None

    async def _sent(self, request: h11.Request, body: bytes) -> Answered:
        connection, reused = self._kept()
        if connection is None:
            connection = await self._connect()
        try:
            answer = await connection.exchange(request, body)
        except (OSError, h11.ProtocolError, WireError) as failure:
            connection.close()
            if not reused or connection.heard:
                raise WireError(f"{type(failure).__name__}: {failure}") from None
            connection = await self._connect()  # a kept-alive connection the wallet had closed: once more, anew
            try:
                answer = await connection.exchange(request, body)
            except (OSError, h11.ProtocolError, WireError) as again:
                connection.close()
                raise WireError(f"{type(again).__name__}: {again}") from None
        except BaseException:  # cancelled or timed out mid-exchange: the connection's state is unknown
            connection.close()
            raise
        if connection.reusable:
            connection.protocol.start_next_cycle()
            self._idle.append(connection)
        else:
            connection.close()
        return answer

    def _kept(self) -> tuple[_Connection | None, bool]:
        """The most recently used idle connection still fresh enough (older ones closed), if any."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if now - connection.used_at < IDLE_S:
                return connection, True
            connection.close()
        return None, False

    async def _connect(self) -> _Connection:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, ssl=self.tls)
        except OSError as failure:
            raise WireError(f"cannot connect to {self.authority}: {failure}") from None
        return _Connection(reader, writer)

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()
