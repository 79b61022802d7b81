"""One writer per table: a controller's lease on each of its tables, and the fence on its writes.

A controller takes a table's lease in the database (owner, epoch, expiry) before it writes the
table, renews it every ``RENEW_S``, and hands it back when it stops. Every write it makes checks,
inside the write's own transaction, that it still holds the lease at its epoch (the fence: a ``Leases`` is
called with the write's session, or read in the statement that locks the round, ``epoch_in``): a
controller that lost the table — paused past its expiry, cut off from the database, or a second
copy started by mistake — writes nothing more to it, whatever it still believes.

A controller finding a table's lease held by another watches it: a live holder renews it within
``RENEW_S`` (the newcomer refuses to start, or with ``standby`` waits), a dead one does not (the
newcomer takes the table over once the lease runs out — a crashed controller's restart resumes
within ``TTL_S``). A standby takes over within ``STANDBY_POLL_S`` of the expiry.

Expiry is judged on each controller's own clock: controllers of one table must keep their clocks
within a fraction of ``TTL_S`` of each other (NTP does).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import ScalarSelect, select, update
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from services.controller.errors import LeaseHeldError
from services.controller.models import TableLease
from services.db.unit_of_work import UNAVAILABLE, run_transaction
from services.observability import metrics
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.errors import FencedError

log = logging.getLogger("studio.controller.leases")
TTL_S = 5.0
RENEW_S = 1.0
STANDBY_POLL_S = 0.5


def owner_name(controller: str) -> str:
    """This process as a lease owner: the controller, the host, the process and this run."""
    return f"{controller}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:128]


@dataclass
class Leases:
    sessions: sessionmaker[Session]
    owner: str
    clock: Clock = field(default_factory=SystemClock)
    ttl: timedelta = timedelta(seconds=TTL_S)
    held: dict[str, int] = field(default_factory=dict)  # table -> the epoch this controller holds it at
    lost: dict[str, str] = field(default_factory=dict)  # table -> why it is no longer ours
    expires: dict[str, datetime] = field(default_factory=dict)  # table -> when our lease runs out, as last set
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- taking and keeping ------------------------------------------------------------

    def try_acquire(self, table: str) -> tuple[str, datetime] | None:
        """Take the table if its lease is free or expired; else the holder and its expiry."""

        now = self.clock.now()

        def work(session: Session) -> int | tuple[str, datetime]:
            row = session.get(TableLease, table, with_for_update=True)
            if row is None:
                session.add(TableLease(table_id=table, owner=self.owner, epoch=1, expires_at=now + self.ttl))
                return 1
            if row.owner != self.owner and aware(row.expires_at) > now:
                return row.owner, aware(row.expires_at)
            if row.owner != self.owner:
                log.warning("table %s: taking over from %s (its lease was handed back or ran out)", table, row.owner)
                row.owner, row.epoch = self.owner, row.epoch + 1
            row.expires_at = now + self.ttl
            return row.epoch

        taken = run_transaction(self.sessions, work)
        if isinstance(taken, tuple):
            return taken
        self._took(table, taken, now)
        return None

    def acquire(self, table: str, standby: bool, stop: threading.Event) -> bool:
        """Hold the table: at once, after its dead holder's lease runs out, or (``standby``) whenever it is free;
        the leases already held are renewed while it waits.

        Raises ``LeaseHeldError`` when a live controller holds it and this one is no standby; False if stopped, or if
        a table already held was lost meanwhile (``lost`` says which and why).
        """
        seen: tuple[str, datetime] | None = None
        away = False  # the database's absence was logged (once a spell, not at each try)
        metrics.LEASE_HELD.labels(table).set(0)
        while not stop.is_set():
            try:
                holder = self.try_acquire(table)
            except UNAVAILABLE as error:  # the database is away: a controller waits for it as it waits for a lease
                if not away:
                    away = True
                    why = " ".join(str(error).split())[:200]
                    log.warning("table %s: could not read its lease (waiting for the database): %s", table, why)
                if not self._kept():
                    return False
                stop.wait(STANDBY_POLL_S)
                continue
            away = False
            if holder is None:
                return True
            if seen is not None and holder != seen and not standby:
                raise LeaseHeldError(
                    f"table {table} is being written by controller {holder[0]} (its lease is renewed; it runs out "
                    f"at {holder[1].isoformat()} unless renewed): stop it first, or start this one with --standby"
                )
            if seen is None or seen[0] != holder[0]:  # said once per holder, not at each of its renewals
                how = "waiting as a standby" if standby else "waiting to see whether it is renewed"
                log.info("table %s: held by %s until %s; %s", table, holder[0], holder[1].isoformat(), how)
            seen = holder
            if not self._kept():
                return False
            stop.wait(STANDBY_POLL_S)
        return False

    def _kept(self) -> bool:
        """While a table is waited for: the tables taken before it renewed; False once one of them is lost."""
        self.renew()
        return not self.lost

    def renew(self) -> None:
        """Extend every held lease in one transaction; a table whose lease is gone (or ran out unrenewed) is lost."""
        if not self.held:
            return
        now = self.clock.now()
        held = dict(self.held)
        try:
            with metrics.LEASE_RENEW_SECONDS.time():
                kept = run_transaction(self.sessions, partial(self._extend, held=held, until=now + self.ttl))
        except Exception as error:  # the database is away: each lease holds until it runs out
            metrics.LEASE_RENEW_FAILURES.inc()
            log.warning("could not renew the leases: %s", " ".join(str(error).split())[:200])
            for table in held:
                if now >= self.expires.get(table, now):
                    self._lose(table, f"table {table}: its lease ran out before it could be renewed")
            return
        for table in held:
            if table in kept:
                self.expires[table] = now + self.ttl
            else:
                self._lose(table, f"table {table}: another controller took its lease")

    def release(self) -> None:
        """Hand every held lease back (a clean stop): a standby takes the tables over at once."""
        now = self.clock.now()
        for table, epoch in list(self.held.items()):
            try:
                run_transaction(self.sessions, partial(self._expire, table=table, epoch=epoch, at=now))
            except Exception as error:  # it runs out by itself
                log.warning("table %s: could not release the lease: %s", table, error)
            metrics.LEASE_HELD.labels(table).set(0)
        self.held.clear()

    # ---- the fence ---------------------------------------------------------------------

    def __call__(self, session: Session, table: str) -> None:
        """Refuse the write (inside its transaction) unless this controller still holds the table's lease.

        The lease row is read under a shared lock, so a takeover cannot commit between this check and
        the write's own commit.
        """
        epoch = self.held.get(table)
        row = session.execute(
            select(TableLease.owner, TableLease.epoch).where(TableLease.table_id == table).with_for_update(read=True)
        ).first()
        if epoch is None or row is None or (row.owner, row.epoch) != (self.owner, epoch):
            holder = f"{row.owner} (epoch {row.epoch})" if row is not None else "nobody"
            why = f"table {table}: this controller's lease (epoch {epoch}) is gone; the table is held by {holder}"
            self._lose(table, why)
            raise FencedError(why)

    def epoch_in(self, table: InstrumentedAttribute[str]) -> ScalarSelect[int]:
        """The fence as a sub-select of the statement that locks what a write changes (``services.rounds.fence``)."""
        mine = (TableLease.table_id == table) & (TableLease.owner == self.owner)
        return select(TableLease.epoch).where(mine).with_for_update(read=True).scalar_subquery()

    def holds(self, table: str, epoch: int | None) -> bool:
        return epoch is not None and self.held.get(table) == epoch

    # ---- internals ---------------------------------------------------------------------

    def _extend(self, session: Session, held: dict[str, int], until: datetime) -> set[str]:
        """Extend the leases still ours at the epoch we hold them; the tables whose lease was extended."""
        session.execute(
            update(TableLease)
            .where(TableLease.owner == self.owner, TableLease.table_id.in_(sorted(held)))
            .values(expires_at=until)
        )
        rows = session.execute(
            select(TableLease.table_id, TableLease.epoch).where(TableLease.owner == self.owner)
        ).all()
        return {table for table, epoch in rows if held.get(table) == epoch}

    def _expire(self, session: Session, table: str, epoch: int, at: datetime) -> None:
        session.execute(
            update(TableLease)
            .where(TableLease.table_id == table, TableLease.owner == self.owner, TableLease.epoch == epoch)
            .values(expires_at=at)
        )

    def _took(self, table: str, epoch: int, now: datetime) -> None:
        with self._lock:
            self.held[table] = epoch
            self.expires[table] = now + self.ttl
            self.lost.pop(table, None)
        metrics.LEASE_HELD.labels(table).set(1)
        metrics.LEASE_EPOCH.labels(table).set(epoch)

    def _lose(self, table: str, why: str) -> None:
        with self._lock:
            if self.held.pop(table, None) is not None or table not in self.lost:
                log.error("table %s: %s", table, why)
            self.lost[table] = why
        metrics.LEASE_HELD.labels(table).set(0)
