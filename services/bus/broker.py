"""The embedded broker (amqtt) for the default setup, and how other processes find a broker.

Port 1883 may already belong to a Mosquitto on the machine, so the embedded broker takes the
port it is given, or a free one (port 0), and writes its URL to a file that the other studio
processes read. ``STUDIO_MQTT_URL`` overrides all of this (production: Mosquitto or EMQX).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from amqtt.broker import Broker
from amqtt.errors import BrokerError

from services.bus.access import ADMIN, StudioBroker, login, passwords_for, plugin_config, read_passwords
from services.bus.errors import BusError

RUN_DIR = Path(os.environ.get("STUDIO_RUN_DIR", ".studio"))
URL_FILE = "broker.url"
SHUTDOWN_S = 10.0  # an embedded broker's orderly shutdown; past it, its tasks are cancelled
log = logging.getLogger("studio.broker")


class BrokerNotFoundError(BusError):
    """No broker where the settings say (no URL, or an embedded one that is not running)."""

    code = "broker_not_found"


class BrokerStartError(BusError):
    """The broker cannot listen where it was asked to (a host that does not resolve, a port in use…)."""

    code = "broker_start"


def _no_startup_traceback(record: logging.LogRecord) -> bool:
    """amqtt logs its failed start with a traceback before raising; ``start_broker`` says it in one line instead."""
    return record.getMessage() != "Broker startup failed"


logging.getLogger("amqtt.broker").addFilter(_no_startup_traceback)


def broker_url(explicit: str | None = None, role: str = ADMIN) -> str:
    """``explicit``, else ``STUDIO_MQTT_URL``, else the embedded broker's URL with ``role``'s login.

    An embedded broker writes its URL and its role passwords (mode 0600) to the run directory when it
    starts; the studio's processes read them there, each logging in as its role.
    """
    if explicit:
        return explicit
    if os.environ.get("STUDIO_MQTT_URL"):
        return os.environ["STUDIO_MQTT_URL"]
    path = RUN_DIR / URL_FILE
    if path.exists():
        return role_url(path.read_text().strip(), role, RUN_DIR)
    raise BrokerNotFoundError(
        f"no MQTT broker: set STUDIO_MQTT_URL or start one with `studio broker` (it writes {path})"
    )


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "tcp") or not parts.hostname:
        raise ValueError(f"invalid MQTT URL {url!r}: expected mqtt://[user:password@]host:port")
    return parts.hostname, parts.port or 1883


def credentials(url: str) -> tuple[str, str] | None:
    """The ``user:password`` of ``mqtt://user:password@host:port``, if given (the broker's role users)."""
    parts = urlsplit(url)
    return (unquote(parts.username), unquote(parts.password or "")) if parts.username else None


_STARTED: dict[tuple[str, int], dict[str, str]] = {}  # role passwords of the brokers this process started


def role_url(url: str, role: str, run_dir: Path | None = None) -> str:
    """``url`` with ``role``'s login, for an embedded broker this process started or whose run directory it
    shares; any other URL (one with a role login already, a production broker) as it is."""
    given = credentials(url)
    if given is not None and given[0] != ADMIN:
        return url
    host, port = host_port(url)
    passwords = _STARTED.get((host, port))
    if passwords is None and run_dir is not None and _advertises(run_dir, host, port):
        passwords = read_passwords(run_dir)
    if not passwords or role not in passwords:
        return url
    return login(host, port, role, passwords[role])


def _advertises(run_dir: Path, host: str, port: int) -> bool:
    """Whether the run directory's broker is the one at ``host:port``."""
    path = run_dir / URL_FILE
    return path.exists() and host_port(path.read_text().strip()) == (host, port)


def redacted(url: str) -> str:
    """``url`` for logs: the password replaced."""
    given = credentials(url)
    if given is None:
        return url
    host, port = host_port(url)
    return f"mqtt://{given[0]}:***@{host}:{port}"


def without_login(url: str) -> str:
    host, port = host_port(url)
    return f"mqtt://{host}:{port}"


def public_feed_url(url: str) -> str:
    """``url`` with the embedded broker's read-only public-feed login (overlay, players' pages)."""
    return role_url(url, "public", RUN_DIR)


def _config(host: str, port: int, passwords: dict[str, str]) -> dict[str, Any]:
    return {"listeners": {"default": {"type": "tcp", "bind": f"{host}:{port}"}}, "plugins": plugin_config(passwords)}


class SnapshotSubscriptions(dict[str, Any]):
    """amqtt's subscription table, iterated over a snapshot.

    ``Broker._run_broadcast`` (amqtt 0.12) iterates the table and awaits inside the loop; a client that
    subscribes meanwhile changes the dict, the loop raises ``RuntimeError: dictionary changed size during
    iteration`` and the rest of that message's deliveries are dropped (seen at start-up, when the studio's
    processes subscribe while the first retained views go out). Iterating a copy delivers each message to
    every subscriber that existed when its broadcast began.
    """

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return list(super().items())

    def __iter__(self) -> Iterator[str]:
        return iter(list(super().keys()))


async def start_broker(
    host: str = "127.0.0.1", port: int = 0, passwords: dict[str, str] | None = None
) -> tuple[Broker, str]:
    """Start amqtt on ``host:port`` (0: a free port) with the studio's roles; returns the broker and its URL
    (without a login: ``role_url`` adds one)."""
    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(logging.WARNING)
    passwords = passwords or passwords_for(None)
    broker = StudioBroker(_config(host, port, passwords))
    broker._subscriptions = SnapshotSubscriptions()  # see SnapshotSubscriptions: amqtt keeps its table here
    try:
        await broker.start()
    except BrokerError as error:
        raise BrokerStartError(f"cannot listen on {host}:{port}: {_reason(error)}") from error
    bound = broker._servers["default"].instance.sockets[0].getsockname()[1]  # amqtt keeps its servers here
    _STARTED[(host, bound)] = passwords
    return broker, f"mqtt://{host}:{bound}"


def _reason(error: BaseException) -> str:
    """Why the broker did not start, in words: the operating system's, where it gave an error number."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return " ".join(str(error).split())
    if isinstance(cause.errno, int) and cause.errno > 0:
        return os.strerror(cause.errno)
    return str(cause.strerror or cause)


def write_url(url: str, run_dir: Path | None = None) -> Path:
    directory = run_dir or RUN_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / URL_FILE
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # its own: two processes may write
    temporary.write_text(url + "\n")
    temporary.replace(path)
    return path


async def serve(host: str, port: int, run_dir: Path | None = None, stop: asyncio.Event | None = None) -> None:
    """Run the broker until ``stop`` (or forever), advertising its URL and role passwords in the run directory."""
    broker, url = await start_broker(host, port, passwords_for(run_dir or RUN_DIR))
    path = write_url(url, run_dir)
    print(f"broker: {url} (written to {path})", flush=True)
    try:
        await (stop or asyncio.Event()).wait()
    finally:
        path.unlink(missing_ok=True)
        await broker.shutdown()


@contextmanager
def embedded_broker(host: str = "127.0.0.1", port: int = 0, run_dir: Path | None = None) -> Iterator[str]:
    """An amqtt broker on its own thread and event loop for as long as the block runs; yields its URL with the
    local superuser's login (``role_url`` gives each process its role's). With ``run_dir``, its URL and role
    passwords are advertised there for the studio's other processes."""
    ready: dict[str, Any] = {}
    started = threading.Event()
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            passwords = passwords_for(run_dir)  # kept in run_dir, if given
            ready["broker"], ready["url"] = loop.run_until_complete(start_broker(host, port, passwords))
        except Exception as error:  # reported to the caller below
            ready["error"] = error
        started.set()
        if "broker" in ready:
            loop.run_forever()

    thread = threading.Thread(target=run, name="embedded-broker", daemon=True)
    thread.start()
    started.wait(timeout=30)
    if "url" not in ready:
        if "error" in ready:  # the thread is ending: its loop never ran
            thread.join(timeout=30)
            loop.close()
        if isinstance(ready.get("error"), BrokerStartError):
            raise ready["error"]
        raise RuntimeError(f"the embedded broker did not start: {ready.get('error', 'timeout')}")
    if run_dir is not None:
        write_url(str(ready["url"]), run_dir)
    try:
        yield role_url(str(ready["url"]), ADMIN)
    finally:
        _stop(ready["broker"], loop, thread)


def _stop(broker: Broker, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """Shut the broker down in order; one that hangs (a client's session that never closes) has its tasks
    cancelled, so whoever embedded it never waits on it for long."""
    shutdown = asyncio.run_coroutine_threadsafe(broker.shutdown(), loop)
    try:
        shutdown.result(timeout=SHUTDOWN_S)
    except TimeoutError:
        log.warning("the embedded broker did not shut down within %g s: its tasks are cancelled", SHUTDOWN_S)
        shutdown.cancel()
        loop.call_soon_threadsafe(lambda: [task.cancel() for task in asyncio.all_tasks(loop)])
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=SHUTDOWN_S)
    if not thread.is_alive():
        loop.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m services.bus.broker [--host H] [--port P]``: a standalone broker process."""
    import argparse

    parser = argparse.ArgumentParser(prog="studio broker", description="run the embedded MQTT broker (amqtt)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    parser.add_argument("--run-dir", type=Path, default=None, help=f"where to write {URL_FILE} (default {RUN_DIR})")
    args = parser.parse_args(argv)

    async def until_signalled() -> None:
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):  # a clean stop: the URL file goes, clients are closed
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await serve(args.host, args.port, args.run_dir, stop)

    try:
        with suppress(KeyboardInterrupt):
            asyncio.run(until_signalled())
    except BrokerStartError as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
