"""Small helpers shared by the tests that run real processes and brokers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def stream_in_background(client: Any, path: str, headers: dict[str, str]) -> threading.Event:
    """Open an SSE stream on a thread and read it to its end; the event is set when the server ends it."""
    ended = threading.Event()

    def watch() -> None:
        with client.stream("GET", path, headers=headers) as response:
            assert response.status_code == 200, response.read()
            for _ in response.iter_lines():
                pass
        ended.set()

    threading.Thread(target=watch, daemon=True).start()
    return ended


def engine_of(controller: Any) -> Any:
    """The engine of a controller's current round, replayed from the database (the controller keeps none)."""
    from services.rounds.pokdeng import pokdeng

    return pokdeng(controller.service).round(controller.current.round_id)


@contextmanager
def studio_command(arguments: list[str], cwd: Path, until: str, timeout: float = 90) -> Iterator[tuple[Any, str]]:
    """``studio ARGUMENTS`` in a process of its own (on its embedded broker and database, whatever the environment
    says), its output read until a line holding ``until``: (the process, that output). Killed at the end if still up."""
    env = {k: v for k, v in os.environ.items() if k not in ("STUDIO_MQTT_URL", "STUDIO_DATABASE_URL")}
    command = [sys.executable, "-m", "services.cli", *arguments]
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while not any(until in line for line in lines) and time.monotonic() < deadline:
            lines.append(process.stdout.readline())
        yield process, "".join(lines)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@contextmanager
def cdn(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on a free port with CORS open, as a video CDN serves a stream; yields its URL."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(timeout=5)
