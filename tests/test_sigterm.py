"""Every long-running ``studio`` process ends cleanly on SIGTERM within a few seconds: exit status 0, no traceback.

(``studio up`` is covered by ``test_up.py``; ``demo`` runs ``up``'s assembly.)
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from services.controller.models import TableLease
from services.db import make_engine, session_factory
from services.shoe.signing import new_key, write_key
from tests.conftest import free_port
from tests.support import wait_until

STOP_WITHIN_S = 5.0


def studio(*arguments: str, cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("STUDIO_MQTT_URL", "STUDIO_DATABASE_URL")}
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", *arguments], cwd=cwd, env=env, stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def stop(process: subprocess.Popen[bytes], log: Path) -> None:
    process.send_signal(signal.SIGTERM)
    started = time.monotonic()
    try:
        code = process.wait(timeout=STOP_WITHIN_S + 5)
    finally:
        if process.poll() is None:
            process.kill()
    took = time.monotonic() - started
    output = log.read_text(errors="replace")
    assert code == 0, f"{log.name}: exit status {code}\n{output[-2000:]}"
    assert took < STOP_WITHIN_S, f"{log.name}: {took:.1f} s to stop"
    assert "Traceback" not in output, f"{log.name}:\n{output[-2000:]}"


def watching(port: int, path: str) -> http.client.HTTPResponse:
    """An open Server-Sent Events stream of the API, its first frame read."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=STOP_WITHIN_S + 5)
    connection.request("GET", path, headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.status == 200 and response.readline().startswith(b"id: ")
    return response


def told(logs: dict[str, Path]) -> str:
    """What each process has printed so far (a wait that timed out says it: CI once waited 60 s on the shoe)."""
    return "".join(
        f"\n--- {name}.log ---\n{log.read_text(errors='replace')[-1500:]}" for name, log in logs.items() if log.exists()
    )


def test_the_broker_shoe_controller_and_api_each_stop_cleanly_on_sigterm(tmp_path: Path) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("broker", "shoe", "controller", "api")}

    def waited(condition: Callable[[], bool], timeout: float, what: str) -> None:
        try:
            wait_until(condition, timeout, what)
        except TimeoutError as error:
            raise TimeoutError(f"{error}{told(logs)}") from None

    broker = studio("broker", cwd=tmp_path, log=logs["broker"])
    processes = [broker]
    try:
        url_file = tmp_path / ".studio" / "broker.url"
        waited(url_file.exists, 20, "the broker's URL")
        database = f"sqlite:///{tmp_path / 'studio.db'}"
        key = write_key(tmp_path / ".studio" / "keys", new_key("S1-shoe"))  # the controller reads it there
        shoe = studio("shoe", "--table", "S1", "--device", "sim://serial", "--key", str(key), cwd=tmp_path,
                      log=logs["shoe"])  # fmt: skip
        controller = studio("controller", "--tables", "S1", "--database", database, "--create-database",
                            cwd=tmp_path, log=logs["controller"])  # fmt: skip
        processes += [shoe, controller]
        # The shoe says when the broker took its login. (A test subscriber to its status waited 60 s for nothing in
        # two CI runs out of many while the shoe kept publishing; what the test needs is the shoe up, not that.)
        waited(lambda: b"connected to the broker" in logs["shoe"].read_bytes(), 60, "the shoe's connection")
        sessions = session_factory(make_engine(database))

        def leased() -> bool:
            with sessions() as session:
                try:
                    return session.scalar(select(TableLease.owner).where(TableLease.table_id == "S1")) is not None
                except OperationalError:  # the controller has created the file but not yet migrated it
                    return False

        waited(lambda: os.path.exists(tmp_path / "studio.db") and leased(), 60, "the controller's lease")
        port = free_port()  # the API after the database exists (it refuses to start on none: "no database at")
        api = studio("api", "--port", str(port), "--database", database, cwd=tmp_path, log=logs["api"])
        processes.append(api)
        waited(lambda: answers(f"http://127.0.0.1:{port}/healthz"), 60, "the API")
        viewer = watching(port, "/v1/tables/S1/state/stream")  # a stream never ends by itself: the stop ends it
        for process, name in ((shoe, "shoe"), (controller, "controller"), (api, "api"), (broker, "broker")):
            assert process.poll() is None, f"{name} ended early:\n{logs[name].read_text()[-2000:]}"
            stop(process, logs[name])
        rest = viewer.read()  # to the end: the API ended the open stream (a hang would time out here)
        assert rest == b"" or rest.endswith(b"\n\n"), rest  # whole frames, then the end (its client reconnects)
        viewer.close()
        assert not url_file.exists()  # the broker took its URL back
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(10)
