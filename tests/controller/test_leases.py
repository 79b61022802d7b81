"""One writer per table: leases, the fence on every write, refusal of a live duplicate, takeover from a dead one."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Engine, func, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from services.bus.broker import host_port
from services.bus.client import LoginRefusedError, confirm_login
from services.catalog import STUDIO_GAMES
from services.controller.leases import STANDBY_POLL_S, FencedError, LeaseHeldError, Leases
from services.controller.models import TableLease
from services.db import make_engine, session_factory
from services.rounds.clock import ManualClock, aware
from services.rounds.models import Round
from services.rounds.service import RoundService
from services.shoe.signing import new_key, write_key
from tests.controller.test_controller_kills import subprocess_url
from tests.support import wait_until

TTL = timedelta(seconds=1)
POLL = timedelta(seconds=STANDBY_POLL_S)


@pytest.fixture
def sessions(database: Engine) -> sessionmaker[Session]:
    return session_factory(database)


class Polls(threading.Event):
    """The ``stop`` of an ``acquire`` on a manual clock, never set: each wait between two of its polls moves the clock
    on by the time asked for, then lets ``between`` happen (what the holder does meanwhile). Too many polls fail the
    test rather than hang it."""

    def __init__(self, clock: ManualClock, between: Callable[[], object] = lambda: None, limit: int = 100) -> None:
        super().__init__()
        self.clock, self.between, self.limit, self.count = clock, between, limit, 0

    def wait(self, timeout: float | None = None) -> bool:
        self.count += 1
        assert timeout is not None and self.count <= self.limit, f"acquire still polling after {self.limit} polls"
        self.clock.advance(seconds=timeout)
        self.between()
        return self.is_set()


def test_a_second_controller_refuses_a_table_whose_live_holder_renews_it(sessions: sessionmaker[Session]) -> None:
    clock = ManualClock()
    first, second = Leases(sessions, "first", clock, TTL), Leases(sessions, "second", clock, TTL)
    assert first.try_acquire("T1") is None and first.held == {"T1": 1}
    runs_out = first.expires["T1"]
    with pytest.raises(LeaseHeldError, match="being written by controller first.*--standby"):
        second.acquire("T1", standby=False, stop=Polls(clock, first.renew))  # the holder renews between polls
    assert clock.now() < runs_out and second.held == {}  # refused on seeing it renewed, not by waiting it out
    assert first.held == {"T1": 1} and first.lost == {}


def test_a_dead_holders_table_is_taken_over_and_its_late_writes_are_fenced(
    database: Engine, sessions: sessionmaker[Session]
) -> None:
    service = RoundService(sessions, games=STUDIO_GAMES)
    service.create_table("T1", "THB", allow_return_over_100=True)
    clock = ManualClock()
    first, second = Leases(sessions, "first", clock, TTL), Leases(sessions, "second", clock, TTL)
    first.try_acquire("T1")
    runs_out = first.expires["T1"]
    service.fence = first
    round_id = service.open_round("T1")  # the holder writes
    assert second.acquire("T1", standby=False, stop=Polls(clock))  # first never renews: it is dead
    taken_at = clock.now()  # the clock stands still after the poll that took it
    assert runs_out <= taken_at <= runs_out + POLL and second.held == {"T1": 2}  # once it ran out, within a poll
    # the first one wakes up (a long pause): every write it tries is refused, and it knows it lost the table
    with pytest.raises(FencedError, match="lease \\(epoch 1\\) is gone; the table is held by second \\(epoch 2\\)"):
        service.void(round_id, "paused controller", "first")
    assert "T1" in first.lost and first.held == {}
    with sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None and round_.phase == "betting" and round_.voided_at is None
    first.renew()  # nothing left to renew
    service.fence = second
    service.void(round_id, "the new holder writes", "second")


def test_the_round_locked_for_a_write_holds_the_lease_until_the_write_commits(
    database: Engine, sessions: sessionmaker[Session]
) -> None:
    """The fence is read in the statement that locks the round, under a shared lock on the lease row: a takeover
    (which updates that row) cannot commit between the check and the write's own commit. (PostgreSQL: SQLite takes
    the whole database's write lock at BEGIN, which orders every writer.)"""
    if database.dialect.name != "postgresql":
        pytest.skip("row locks: PostgreSQL (SQLite serializes writers at BEGIN)")
    service = RoundService(sessions, games=STUDIO_GAMES)
    service.create_table("T1", "THB", allow_return_over_100=True)
    leases = Leases(sessions, "first")
    assert leases.try_acquire("T1") is None
    service.fence = leases
    round_id = service.open_round("T1")
    takeover = "UPDATE table_leases SET owner = 'second', epoch = epoch + 1 WHERE table_id = 'T1'"
    with sessions() as writing, writing.begin():
        assert service.locked_round(writing, round_id).id == round_id  # the write's transaction, still open
        with sessions() as other, other.begin():
            other.execute(text("SET LOCAL lock_timeout = '200ms'"))
            with pytest.raises(OperationalError, match="lock timeout"):
                other.execute(text(takeover))
            other.rollback()
    with sessions() as other, other.begin():  # once the write committed, the takeover goes through
        other.execute(text(takeover))
    with pytest.raises(FencedError, match="held by second \\(epoch 2\\)"):
        service.void(round_id, "after the takeover", "first")


def renewed_until_it_dies(
    sessions: sessionmaker[Session], table: str
) -> tuple[ManualClock, Leases, Leases, datetime, Callable[[], None]]:
    """A holder of ``table`` and a standby on one manual clock; ``holder()`` (called between the standby's polls)
    renews the holder's lease until ``dies_at``, 3 leases' worth from now."""
    clock = ManualClock()
    first, second = Leases(sessions, "first", clock, TTL), Leases(sessions, "second", clock, TTL)
    first.try_acquire(table)
    dies_at = clock.now() + 3 * TTL

    def holder() -> None:
        if clock.now() < dies_at:
            first.renew()

    return clock, first, second, dies_at, holder


def test_a_standby_takes_over_when_the_holder_stops_renewing_and_a_release_hands_over_at_once(
    sessions: sessionmaker[Session],
) -> None:
    clock, first, second, dies_at, holder = renewed_until_it_dies(sessions, "T1")
    assert second.acquire("T1", standby=True, stop=Polls(clock, holder))
    taken_at, runs_out = clock.now(), first.expires["T1"]  # the standby's take; the end of the last renewed lease
    assert dies_at < runs_out <= taken_at, "a standby waits while the holder renews, and until its last lease ran out"
    assert taken_at <= runs_out + POLL and second.held == {"T1": 2}  # then it takes over within a poll
    first.renew()
    assert first.lost["T1"].endswith("another controller took its lease") and first.held == {}
    second.release()  # a clean stop: the lease runs out now (the clock does not move)
    third = Leases(sessions, "third", clock, TTL)
    assert third.try_acquire("T1") is None and third.held == {"T1": 3}


def test_a_standby_of_several_tables_keeps_those_it_holds_while_it_waits_for_the_others(
    sessions: sessionmaker[Session],
) -> None:
    clock, _other, standby, _dies_at, holder = renewed_until_it_dies(sessions, "T2")
    runs_on: list[bool] = []  # at each poll for T2: T1's lease has not run out

    def polled() -> None:
        holder()
        with sessions() as session:
            until = session.scalar(select(TableLease.expires_at).where(TableLease.table_id == "T1"))
        runs_on.append(until is not None and aware(until) > clock.now())

    stop = Polls(clock, polled)
    assert standby.acquire("T1", standby=True, stop=stop)
    took_t1 = clock.now()
    assert standby.acquire("T2", standby=True, stop=stop)
    assert clock.now() - took_t1 > 2 * TTL  # it waited for T2 longer than a lease of T1 lasts unrenewed...
    assert runs_on and all(runs_on)  # ...and T1's lease ran on all along
    standby.renew()
    assert standby.lost == {} and set(standby.held) == {"T1", "T2"}


def test_a_standby_that_loses_a_table_while_it_waits_for_another_stops_waiting_and_says_which(
    sessions: sessionmaker[Session],
) -> None:
    clock, _other, standby, _dies_at, holder = renewed_until_it_dies(sessions, "T2")
    intruder = Leases(sessions, "intruder", clock, TTL)

    def polled() -> None:
        holder()
        if "T1" not in intruder.held:  # T1's lease run out behind the standby's back (a database away too long)
            with sessions.begin() as session:
                session.execute(text("UPDATE table_leases SET expires_at = :past WHERE table_id = 'T1'"),
                                {"past": clock.now() - TTL})  # fmt: skip
            assert intruder.try_acquire("T1") is None

    assert standby.acquire("T1", standby=True, stop=Polls(clock, lambda: None))
    assert not standby.acquire("T2", standby=True, stop=Polls(clock, polled))  # it does not wait on, for nothing
    assert standby.lost["T1"].endswith("another controller took its lease") and "T2" not in standby.held


LOG_TIME_CUT = timedelta(milliseconds=1)  # the JSON logs' times are cut to the millisecond


def lease_log(path: Path, pattern: str) -> list[tuple[datetime, re.Match[str]]]:
    """The lease lines of a controller's JSON log that match ``pattern``: when each was logged, and the match."""
    found = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:  # not a log line, or one still being written
            continue
        if isinstance(entry, dict) and (match := re.search(pattern, str(entry.get("message", "")))):
            found.append((datetime.fromisoformat(entry["ts"]), match))
    return found


def found_held(path: Path, holder: int) -> list[tuple[datetime, datetime]]:
    """When a standby said it found the lease held by the process ``holder``, and until when the lease ran then."""
    lines = lease_log(path, rf"held by \S*:{holder}:\S* until (\S+);")
    return [(at, datetime.fromisoformat(match[1])) for at, match in lines]


def took_over(path: Path, holder: int) -> list[datetime]:
    """When a standby logged taking the lease over from the process ``holder``."""
    return [at for at, _ in lease_log(path, rf"taking over from \S*:{holder}:")]


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
        standby_log = directory / "standby.log"

        wait_until(lambda: found_held(standby_log, writer.pid), 30, "the standby to see the writer's lease")
        [(_, first_seen_until)] = found_held(standby_log, writer.pid)  # said once, not at each renewal
        wait_until(lambda: datetime.now(UTC) > first_seen_until + timedelta(seconds=1), 30, "that lease to run out")
        assert f":{writer.pid}:" in owner() and standby.poll() is None  # renewed: the standby waits, writing nothing
        assert len(found_held(standby_log, writer.pid)) == 1, "a standby says each holder once, not each renewal"
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
        with sessions() as session:  # the end of the dead writer's last lease (a standby takes it only after)
            runs_out = aware(session.scalars(select(TableLease.expires_at).where(TableLease.table_id == table)).one())
        wait_until(lambda: f":{standby.pid}:" in owner(), 10, "the standby to take the table")  # type: ignore[union-attr]
        with sessions() as session:
            assert session.scalar(select(func.max(TableLease.epoch)).where(TableLease.table_id == table)) == 2
        [taken_at] = took_over(standby_log, writer.pid)
        assert taken_at > runs_out - LOG_TIME_CUT, (taken_at, runs_out)  # not before it ran out
        standby.send_signal(signal.SIGTERM)
        assert standby.wait(10) == 0  # a clean stop hands the lease back: a newcomer takes the table at once
        third = Leases(sessions, "third")
        assert third.try_acquire(table) is None and third.held == {table: 3}
    finally:
        for process in (writer, standby):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)


def test_a_controller_waiting_for_a_lease_waits_out_a_database_that_is_away(
    database: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """The database away (nothing answers at its address): the wait goes on, says so once, and reports nothing held
    (``studio_lease_held`` 0, which the lease-lost alert reads); it ends when told to, never with an error."""
    nowhere = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    away = Leases(session_factory(nowhere), "waiter")
    table = f"A{uuid.uuid4().hex[:6]}"
    stop = threading.Event()
    timer = threading.Timer(3 * STANDBY_POLL_S, stop.set)
    timer.start()
    with caplog.at_level("WARNING", logger="studio.controller.leases"):
        assert away.acquire(table, standby=True, stop=stop) is False
    timer.cancel()
    nowhere.dispose()
    said = [r.getMessage() for r in caplog.records if "waiting for the database" in r.getMessage()]
    assert len(said) == 1, said  # tried at each poll, said once
    assert away.held == {} and REGISTRY.get_sample_value("studio_lease_held", {"table": table}) == 0
    back = Leases(session_factory(database), "waiter")  # the database back: the same wait takes the table
    assert back.acquire(table, standby=True, stop=threading.Event()) is True
    assert REGISTRY.get_sample_value("studio_lease_held", {"table": table}) == 1
    assert REGISTRY.get_sample_value("studio_lease_epoch", {"table": table}) == 1
