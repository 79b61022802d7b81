"""The wallet's wire (``services.wallet.wire``) against servers it did not come with: the standard library's HTTP
server in both protocol versions, uvicorn with either of its parsers, and a scripted server for what real wallets and
their proxies do at the edges (chunked answers, answers ended by closing, idle connections closed, silence, garbage)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import Engine

from services.wallet.models import STAKE
from services.wallet.reference import OperatorWallet, serving
from services.wallet.seamless import new_call
from services.wallet.wire import MAX_ANSWER_BYTES, Wire, WireError
from tests.wallet.test_seamless import studio_side

JSON = {"Content-Type": "application/json"}


@contextmanager
def stdlib_server(version: str) -> Iterator[tuple[str, list[bytes]]]:
    """``http.server`` echoing each body back as ``{"got": body}``, speaking ``version`` (1.0: one answer a
    connection)."""
    received: list[bytes] = []

    class Echo(BaseHTTPRequestHandler):
        protocol_version = version

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(body)
            answer = json.dumps({"got": body.decode(), "path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if version == "HTTP/1.1":
                self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("version", ["HTTP/1.0", "HTTP/1.1"])
def test_the_standard_librarys_server_in_either_version(version: str) -> None:
    with stdlib_server(version) as (base, received):

        async def calls() -> list[Any]:
            wire = Wire(base + "/wallet", timeout_s=2, size=4)
            answers = await asyncio.gather(*(wire.post(f"{base}/wallet/debit", f"b{n}".encode(), JSON)
                                             for n in range(20)))  # fmt: skip
            wire.close()
            return [(a.status_code, json.loads(a.content), a.headers.get("CONTENT-TYPE")) for a in answers]

        answers = asyncio.run(calls())
    assert answers == [(200, {"got": f"b{n}", "path": "/wallet/debit"}, "application/json") for n in range(20)]
    assert sorted(received) == sorted(f"b{n}".encode() for n in range(20)), "each sent once"


@pytest.mark.db
@pytest.mark.parametrize("parser", ["h11", "httptools"])
def test_the_reference_wallet_under_uvicorn_with_either_parser(database: Engine, parser: str) -> None:
    """The studio's own calls from the loop (recorded, signed, sent together, answers checked) against uvicorn's two
    HTTP parsers."""
    wallet = OperatorWallet(balances={"ana": 1_000})
    with serving(wallet, http=parser) as url:
        studio = studio_side(database, url)
        records = [studio._record(new_call("debit", "ana", 10, "THB", "T1-1", f"t{n}", "bet"), STAKE, False)
                   for n in range(5)]  # fmt: skip

        async def debits() -> list[Any]:
            return await asyncio.gather(*(studio.call_soon(record) for record in records))

        answers = asyncio.run(debits())
    assert [(answer.status, tries) for answer, tries, _ in answers] == [("ok", 1)] * 5
    assert wallet.balances["ana"] == 950 and all(wallet.applications[f"t{n}"] == 1 for n in range(5))


# ---- a scripted server: what wallets and proxies do at the edges ----------------------------------

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def with_server(script: Script, work: Callable[[str], Awaitable[Any]]) -> tuple[Any, list[int]]:
    """Run ``work(base)`` against a server whose connection ``n`` (from 0) is handled by ``script``; also the number
    of requests each connection read."""
    requests: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requests.append(0)
        try:
            await script(reader, writer, len(requests) - 1)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await work(f"http://127.0.0.1:{port}"), requests
    finally:
        server.close()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return await reader.readexactly(length)


def test_a_chunked_answer_and_one_ended_by_closing_are_read_whole() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        body = await read_request(reader)
        if n == 0:  # chunked, kept alive: the next request comes on this connection
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n" +
                         f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")  # fmt: skip
            await writer.drain()
            body = await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nend:" + body)  # ended by closing
        await writer.drain()

    async def work(base: str) -> list[bytes]:
        wire = Wire(base, 2, 4)
        first = await wire.post(f"{base}/debit", b"one", JSON)
        second = await wire.post(f"{base}/debit", b"two", JSON)
        third = await wire.post(f"{base}/debit", b"three", JSON)
        return [first.content, second.content, third.content]

    answers, requests = asyncio.run(with_server(script, work))
    assert answers == [b"abcone", b"end:two", b"end:three"]
    assert len(requests) == 2, "the chunked answer's connection was reused, the closed one not"


def test_an_interim_answer_is_passed_over_and_the_connection_stays_in_step() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for _ in range(2):
            body = await read_request(reader)
            writer.write(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            )
            await writer.drain()

    async def work(base: str) -> list[bytes]:
        wire = Wire(base, 2, 4)
        return [(await wire.post(f"{base}/debit", body, JSON)).content for body in (b"one", b"two")]

    answers, requests = asyncio.run(with_server(script, work))
    assert answers == [b"one", b"two"] and len(requests) == 1, "each call read its own answer on one connection"


def test_an_idle_connection_the_wallet_closed_is_replaced_without_losing_the_call() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        body = await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        # then, as a server's keep-alive timeout does, it closes the connection while the client thinks it idle

    async def work(base: str) -> list[bytes]:
        wire = Wire(base, 2, 4)
        first = await wire.post(f"{base}/debit", b"one", JSON)
        await asyncio.sleep(0.05)
        second = await wire.post(f"{base}/debit", b"two", JSON)
        return [first.content, second.content]

    answers, requests = asyncio.run(with_server(script, work))
    assert answers == [b"one", b"two"] and len(requests) == 2


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (b"", "closed the connection without a whole answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "closed the connection without a whole answer"),
        (b"SMTP ready\r\n\r\n", "HttpParserError"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (MAX_ANSWER_BYTES + 1) + b"x" * (MAX_ANSWER_BYTES + 1),
            "longer than",
        ),
        (None, "no answer within 0.2 s"),
        (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", "Upgrade"),
    ],
    ids=["closed", "cut short", "not HTTP", "too long", "silent", "upgraded"],
)
def test_a_call_without_a_whole_answer_fails_saying_why(answer: bytes | None, words: str) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await read_request(reader)
        if answer is None:
            await asyncio.sleep(1)
            return
        writer.write(answer)
        await writer.drain()

    async def work(base: str) -> str:
        with pytest.raises(WireError) as failed:
            await Wire(base, 0.2, 4).post(f"{base}/debit", b"x", JSON)
        return str(failed.value)

    said, requests = asyncio.run(with_server(script, work))
    assert words in said
    assert len(requests) == 1, "a fresh connection's failure is not sent again"


def test_nothing_listening_and_a_header_with_a_line_break_are_refused() -> None:
    async def work() -> list[str]:
        said = []
        for url, headers in (("http://127.0.0.1:9/debit", JSON), ("http://127.0.0.1:9/debit", {"X-A": "1\r\nX-B: 2"})):
            with pytest.raises(WireError) as failed:
                await Wire("http://127.0.0.1:9", 1, 4).post(url, b"x", headers)
            said.append(str(failed.value))
        return said

    connect, header = asyncio.run(work())
    assert "cannot connect to 127.0.0.1:9" in connect and "line break" in header
    with pytest.raises(WireError, match="not an http"):
        Wire("ftp://wallet", 1, 4)
