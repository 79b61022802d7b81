"""Small helpers shared by the tests that run real processes and brokers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
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
