"""One writer per table: leases, the fence on every write, refusal of a live duplicate, takeover from a dead one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from services.bus.broker import host_port
from services.bus.client import LoginRefusedError, confirm_login
from services.controller.leases import FencedError, LeaseHeldError, Leases
from services.controller.models import TableLease
from services.db import session_factory
from services.rounds.models import Round
from services.rounds.service import RoundService
from services.shoe.signing import new_key, write_key
from tests.controller.test_controller_kills import subprocess_url
from tests.support import wait_until

TTL = timedelta(seconds=1)


@pytest.fixture
def sessions(database: Engine) -> sessionmaker[Session]:
    return session_factory(database)


def renewing(leases: Leases, stop: threading.Event) -> threading.Thread:
    """A live controller: renews its leases every 0.2 s until ``stop``."""

    def run() -> None:
        while not stop.wait(0.2):
            leases.renew()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_second_controller_refuses_a_table_whose_live_holder_renews_it(sessions: sessionmaker[Session]) -> None:
    first, second = Leases(sessions, "first", ttl=TTL), Leases(sessions, "second", ttl=TTL)
    assert first.try_acquire("T1") is None and first.held == {"T1": 1}
    stop = threading.Event()
    renewing(first, stop)
    try:
        started = time.monotonic()
        with pytest.raises(LeaseHeldError, match="being written by controller first.*--standby"):
            second.acquire("T1", standby=False, stop=threading.Event())
        assert time.monotonic() - started < 5 and second.held == {}
    finally:
        stop.set()


def test_a_dead_holders_table_is_taken_over_and_its_late_writes_are_fenced(
    database: Engine, sessions: sessionmaker[Session]
) -> None:
    service = RoundService(sessions)
    service.create_table("T1", "THB", allow_return_over_100=True)
    first, second = Leases(sessions, "first", ttl=TTL), Leases(sessions, "second", ttl=TTL)
    first.try_acquire("T1")
    service.fence = first.fence
    round_id = service.open_round("T1")  # the holder writes
    started = time.monotonic()
    assert second.acquire("T1", standby=False, stop=threading.Event())  # first never renews: it is dead
    assert 0.5 < time.monotonic() - started < 3 and second.held == {"T1": 2}
    # the first one wakes up (a long pause): every write it tries is refused, and it knows it lost the table
    with pytest.raises(FencedError, match="lease \\(epoch 1\\) is gone; the table is held by second \\(epoch 2\\)"):
        service.void(round_id, "paused controller", "first")
    assert "T1" in first.lost and first.held == {}
    with sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None and round_.phase == "betting" and round_.voided_at is None
    first.renew()  # nothing left to renew
    service.fence = second.fence
    service.void(round_id, "the new holder writes", "second")


def test_a_standby_takes_over_when_the_holder_stops_renewing_and_a_release_hands_over_at_once(
    sessions: sessionmaker[Session],
) -> None:
    first, second = Leases(sessions, "first", ttl=TTL), Leases(sessions, "second", ttl=TTL)
    first.try_acquire("T1")
    stop_first = threading.Event()
    renewing(first, stop_first)
    took = threading.Event()
    threading.Thread(target=lambda: second.acquire("T1", True, threading.Event()) and took.set(), daemon=True).start()
    assert not took.wait(2), "a standby waits while the holder renews"
    stop_first.set()  # the holder dies
    killed_at = time.monotonic()
    assert took.wait(5) and time.monotonic() - killed_at < TTL.total_seconds() + 1.5
    first.renew()
    assert first.lost["T1"].endswith("another controller took its lease") and first.held == {}
    second.release()  # a clean stop: the lease runs out now
    third = Leases(sessions, "third", ttl=TTL)
    assert third.try_acquire("T1") is None and third.held == {"T1": 3}


@pytest.fixture
def controller_env(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    table = f"L{uuid.uuid4().hex[:8]}"
    write_key(tmp_path / "keys", new_key(f"{table}-shoe"))  # its shoe signs: the controller holds its key
    command = [
        sys.executable, "-m", "services.cli", "controller", "--tables", table, "--manual", "--broker", mqtt_url,
        "--database", subprocess_url(database), "--lease-seconds", "2", "--shoe-keys", str(tmp_path / "keys"),
    ]  # fmt: skip
    yield command, tmp_path


def test_a_controller_whose_broker_login_is_refused_says_so_and_takes_no_lease(
    database: Engine, mqtt_url: str, controller_env: tuple[list[str], Path]
) -> None:
    """Found in review: with a wrong password the controller took its tables' leases and said nothing while paho
    retried — the real controller, started next, was locked out of the tables."""
    command, _directory = controller_env
    table = command[command.index("--tables") + 1]
    host, port = host_port(mqtt_url)
    wrong = f"mqtt://controller:not-its-password@{host}:{port}"
    try:
        confirm_login(wrong, threading.Event(), f"probe-{uuid.uuid4().hex[:8]}")
    except LoginRefusedError:
        pass
    else:  # CI's Mosquitto lets anyone in (its default configuration): there is no refused login to answer
        pytest.skip(f"the broker at {host}:{port} accepts any password")
    done = subprocess.run(
        [*command[: command.index("--broker") + 1], wrong, *command[command.index("--broker") + 2 :]],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"studio controller: the broker at mqtt://{host}:{port} refused the login of controller")
    assert "not-its-password" not in done.stderr
    with session_factory(database)() as session:
        assert session.get(TableLease, table) is None


def test_a_standby_process_takes_over_within_seconds_of_the_writer_being_killed(
    database: Engine, controller_env: tuple[list[str], Path]
) -> None:
    command, directory = controller_env
    table = command[command.index("--tables") + 1]
    sessions = session_factory(database)

    def owner() -> str:
        with sessions() as session:
            return session.scalar(select(TableLease.owner).where(TableLease.table_id == table)) or ""

    logs = {name: (directory / f"{name}.log").open("wb") for name in ("writer", "standby", "duplicate")}
    env = os.environ.copy()
    writer = subprocess.Popen(command, stdout=logs["writer"], stderr=subprocess.STDOUT, env=env)
    standby = None
    try:
        wait_until(lambda: f":{writer.pid}:" in owner(), 30, "the writer's lease")
        duplicate = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert duplicate.returncode == 1, duplicate.stderr
        last = duplicate.stderr.strip().splitlines()[-1]  # after its JSON log lines: one line, no traceback
        assert last.startswith(f"studio controller: table {table} is being written by controller")
        assert "Traceback" not in duplicate.stderr
        standby = subprocess.Popen([*command, "--standby"], stdout=logs["standby"], stderr=subprocess.STDOUT, env=env)
        time.sleep(3)
        assert f":{writer.pid}:" in owner() and standby.poll() is None  # waiting, writing nothing
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
        killed_at = time.monotonic()
        wait_until(lambda: f":{standby.pid}:" in owner(), 10, "the standby to take the table")  # type: ignore[union-attr]
        assert time.monotonic() - killed_at < 5
        with sessions() as session:
            assert session.scalar(select(func.max(TableLease.epoch)).where(TableLease.table_id == table)) == 2
        standby.send_signal(signal.SIGTERM)
        assert standby.wait(10) == 0  # a clean stop hands the lease back
        with sessions() as session:
            lease = session.get(TableLease, table)
            assert lease is not None and lease.expires_at.timestamp() <= time.time()
    finally:
        for process in (writer, standby):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)
