"""HTTP/1.1 to the operator's wallet from the event loop: a few kept-alive connections (plain or TLS), the request
written as bytes and the answer read by httptools (llhttp, the parser uvicorn uses) — what a betting window's debits
need, and no more.

A general async client's machinery per request (its pool's bookkeeping, cancellation shields, a look for which async
library runs it) cost ~2 ms of CPU a call in the API process, more than the whole bet around it; this, a few tens of
microseconds. Each call is one ``POST`` with a ``Content-Length`` body; the answer may come sized, chunked or until
the connection closes. A connection goes back to the pool only when the answer ended cleanly and the wallet keeps it
alive; any trouble closes it. A kept-alive connection the wallet had closed while idle (servers close idle ones after a
few seconds) fails before a byte of the answer comes: that call is sent once more at once on a new connection — safe,
since the protocol applies a transaction id once.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import NamedTuple
from urllib.parse import urlsplit

import httptools

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


class _Answer:
    """The parser's callbacks: one answer as it comes."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.headers = Headers()
        self.content: list[bytes] = []
        self.size = 0
        self.messages = 0
        self.headed = False
        self.keep_alive = False
        self.done = False

    def on_message_begin(self) -> None:
        self.messages += 1  # (a second one: bytes the wallet should not have sent; the connection is not reused)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.headed = True
        self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size <= MAX_ANSWER_BYTES:  # (beyond it, ``exchange`` refuses the answer: the parser would hide why)
            self.content.append(body)

    def on_message_complete(self) -> None:
        if self.parser.get_status_code() < 200:  # an interim answer (100 Continue, 103 …): the answer follows it
            self.headers, self.content, self.size, self.headed, self.messages = Headers(), [], 0, False, 0
            return
        self.done = True

    @property
    def until_closed(self) -> bool:
        """A body that ends where the connection does (no length, not chunked)."""
        return "content-length" not in self.headers and "chunked" not in (self.headers.get("transfer-encoding") or "")


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.used_at = time.monotonic()
        self.heard = False  # a byte of an answer came (a failure after it is not a stale connection's)
        self.reusable = False

    async def exchange(self, request: bytes) -> Answered:
        self.heard = self.reusable = False
        self.writer.write(request)
        answer = _Answer()
        while not answer.done:
            data = await self.reader.read(65536)
            if not data:  # the wallet closed the connection: the end of a body sent until then, or no answer
                if answer.headed and answer.until_closed:
                    break
                raise WireError("the wallet closed the connection without a whole answer")
            self.heard = True
            answer.parser.feed_data(data)
            if answer.size > MAX_ANSWER_BYTES:
                raise WireError(f"the answer is longer than {MAX_ANSWER_BYTES} bytes")
        self.reusable = answer.done and answer.keep_alive and answer.messages == 1
        self.used_at = time.monotonic()
        return Answered(answer.parser.get_status_code(), answer.headers, b"".join(answer.content))

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
        self._heads: dict[str, str] = {}  # each address's request line and host
        self._closed = False

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answered:
        """``POST`` the body to ``url`` (on this wallet's address): the answer, or ``WireError`` — within
        ``timeout_s`` in all, the wait for a free connection included."""
        request = self._request(url, body, headers)
        try:
            async with asyncio.timeout(self.timeout_s), self._slots:
                return await self._sent(request)
        except TimeoutError:
            raise WireError(f"no answer within {self.timeout_s:g} s") from None

    def _request(self, url: str, body: bytes, headers: dict[str, str]) -> bytes:
        """The request's bytes: its line, the host, the length, the caller's headers (checked: no line breaks)."""
        head = self._heads.get(url)
        if head is None:
            parts = urlsplit(url)
            if any(c in url for c in "\r\n "):
                raise WireError(f"not an address a request can be sent to: {url!r}")
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            head = self._heads[url] = f"POST {target} HTTP/1.1\r\nHost: {self.authority}\r\n"
        if any("\r" in text or "\n" in text for pair in headers.items() for text in pair):
            raise WireError("a header of the call holds a line break")
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return f"{head}Content-Length: {len(body)}\r\n{lines}\r\n".encode("latin-1") + body

    async def _sent(self, request: bytes) -> Answered:
        """The exchange on a kept connection, or a new one; on a kept one that fails before a byte of the answer
        came (the wallet had closed it), once more on a new one. A connection goes back to the pool only after a
        whole answer the wallet keeps the connection open after; any other end closes it."""
        connection, reused = self._kept()
        try:
            if connection is None:
                connection = await self._connect()
            try:
                answer = await connection.exchange(request)
            except Exception as failure:
                connection.close()
                if not reused or connection.heard:
                    raise _failed(failure) from None
                connection = await self._connect()
                try:
                    answer = await connection.exchange(request)
                except Exception as again:
                    raise _failed(again) from None
        except BaseException:  # failed, cancelled or timed out mid-exchange: the connection's state is unknown
            if connection is not None:
                connection.close()
            raise
        if connection.reusable and not self._closed:
            self._idle.append(connection)
        else:
            connection.close()
        return answer

    def _kept(self) -> tuple[_Connection | None, bool]:
        """The most recently used idle connection still open, if any; those idle too long (the oldest, at the
        bottom of the pool) or closed by the wallet are closed and dropped."""
        stale = time.monotonic() - IDLE_S
        while self._idle and self._idle[0].used_at < stale:
            self._idle.pop(0).close()
        while self._idle:
            connection = self._idle.pop()
            if not connection.reader.at_eof():
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
        """Close the idle connections, and each busy one once its call ends."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()


def _failed(failure: Exception) -> WireError:
    """What went wrong on the connection, as the caller's one kind of failure (a parser's, the socket's, ours)."""
    return failure if isinstance(failure, WireError) else WireError(f"{type(failure).__name__}: {failure}")
