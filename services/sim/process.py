"""The simulation's controller process and what kills it: a ``TableController`` set per process generation, fed by
the simulated network, and the database faults that strike it inside a statement or a commit (``Killed``).

Only its transport and clock are simulated (the ``Simulation`` that owns it); the writer, controllers, leases, shoe
inlet and round service are the production code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError, OperationalError

from services.bus.feed import ShoeInlet
from services.bus.messages import DealerView, RoundView
from services.catalog import STUDIO_GAMES
from services.controller.leases import Leases
from services.controller.runner import MIN_WAIT_SECONDS, Inbound, Writer
from services.controller.table import ControllerSettings
from services.db import session_factory
from services.rounds.service import RoundService

if TYPE_CHECKING:
    from services.sim.world import Simulation

WAKES = "controller wakes"


class Killed(BaseException):
    """The controller process killed inside a step (SIGKILL): none of its code after that point runs. A
    ``BaseException``, so no ``except Exception`` of the code under test can swallow it."""


class DatabaseFaults:
    """Fails one statement of the engine's, when armed: mid-transaction, as a lost connection or a refusal; or kills
    the controller process before one of its own statements (``kill``)."""

    def __init__(self, engine: Engine) -> None:
        self.countdown: int | None = None
        self.invalidated = False
        self.paused = 0
        self.actor: object | None = None  # the process whose code runs now (a statement's issuer)
        self.kill: tuple[ControllerProcess, int] | None = None  # killed before its n-th statement from now
        self.commits = 0
        self.failures = 0
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "commit", self._commit)

    def arm(self, statements: int, invalidated: bool) -> None:
        self.countdown, self.invalidated = statements, invalidated

    @contextmanager
    def acting(self, process: object) -> Iterator[None]:
        """``process``'s code runs inside: its statements are the ones a ``kill`` counts."""
        before, self.actor = self.actor, process
        try:
            yield
        finally:
            self.actor = before

    @contextmanager
    def held(self) -> Iterator[None]:
        """No failure inside (the simulation's own reads)."""
        self.paused += 1
        try:
            yield
        finally:
            self.paused -= 1

    def _before(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if self.paused:
            return
        if self.kill is not None and self.actor is self.kill[0]:
            process, left = self.kill
            self.kill = (process, left - 1) if left > 1 else None
            if left <= 1:
                process.sim.count("killed_in_a_transaction")
                process.die("killed in the middle of a transaction")
                raise Killed
        if self.countdown is None:
            return
        self.countdown -= 1
        if self.countdown <= 0:
            self.countdown = None
            self.failures += 1
            reason = "the connection was lost" if self.invalidated else "the server refused the statement"
            raise OperationalError(
                statement, parameters, ConnectionError(f"simulated: {reason}"), connection_invalidated=self.invalidated
            )

    def _commit(self, _conn: Any) -> None:
        self.commits += 1


class ControllerProcess:
    """One run of the controller process: its own round service and lease owner; it dies with its memory."""

    def __init__(self, sim: Simulation, generation: int) -> None:
        self.sim, self.generation = sim, generation
        self.service = RoundService(session_factory(sim.engine), sim.clock, games=STUDIO_GAMES)
        self.service.shuffle = sim.shuffle
        self.leases = Leases(self.service.sessions, f"sim-controller-{generation}", sim.clock)
        tables = {
            table: ControllerSettings(
                sim.shoes[table].shoe_id,
                result_pause_ms=800,
                auto_open=sim.opening,
                camera_id=sim.cameras[table].shoe_id if table in sim.cameras else "",
            )
            for table in sim.tables
        }
        self.writer = Writer(self.service, tables, self._publisher, self.leases, sim.clock, sim.keys)
        self.inlets: dict[str, ShoeInlet] = {}
        self.alive = True
        self.kill_on_publish = False
        self._wake_at: datetime | None = None

    @property
    def running(self) -> bool:
        return self.alive and bool(self.inlets)

    def boot(self) -> None:
        if not self.alive:
            return
        try:
            with self.sim.database.acting(self):
                for table in self.sim.tables:
                    holder = self.leases.try_acquire(table)
                    if holder is not None:  # the dead run's lease has not run out yet
                        self.sim.later(500, f"controller {self.generation} waits for the lease", self.boot)
                        return
                self.writer.start()
                self.inlets = {table: self.writer.inlet(table, self.sim.clock.seconds) for table in self.sim.tables}
            for table in self.sim.tables:  # subscribing, it gets the shoe's retained status first
                self.status(table, self.sim.shoes[table].status())
        except DBAPIError:
            self.sim.count("controller_boot_failed")
            self.die("the database failed while it started")
            return
        self.sim.recovered(self)
        self.plan()

    def die(self, why: str) -> None:
        self.alive = False
        self.sim.count("controller_died")
        self.sim.note(f"controller {self.generation} dies: {why}")
        self.sim.later(self.sim.rng.uniform(200, 3_000), "controller restarts", self.sim.start_controller)

    # ---- inputs, through the network ---------------------------------------------------------

    def card(self, table: str, payload: bytes) -> None:
        if not self.running:
            return
        with self.sim.database.acting(self):
            for shoe_event, why in self.inlets[table].card(payload):
                kind, item = ("shoe", shoe_event) if why is None else ("untrusted", (shoe_event, why))
                self.writer.handle(Inbound(table, kind, item))
        self.ask(table)
        self.plan()

    def status(self, table: str, payload: bytes) -> None:
        if self.running:
            with self.sim.database.acting(self):
                for shoe_event in self.inlets[table].status(payload):
                    self.writer.handle(Inbound(table, "shoe", shoe_event))
            self.ask(table)

    def alarm(self, table: str, payload: bytes) -> None:
        self._take(lambda: self.writer.alarm(table, payload))

    def sighting(self, table: str, payload: bytes) -> None:
        self._take(lambda: self.writer.sighting(table, payload))

    def _take(self, decode: Callable[[], Inbound | None]) -> None:
        """A payload the writer decodes (and checks) itself, handled as the real loop would."""
        if self.running:
            item = decode()
            if item is not None:
                with self.sim.database.acting(self):
                    self.writer.handle(item)
            self.plan()

    def command(self, table: str) -> None:
        if self.running:
            with self.sim.database.acting(self):
                self.writer.handle(Inbound(table, "command", None))
            self.plan()

    def ask(self, table: str) -> None:
        """The feed's resend request for a gap, if it has one now (it asks again while the gap stays)."""
        inlet = self.inlets[table]
        request = inlet.gap()
        if request is not None:
            self.sim.network.send(f"{table} resend {request.from_seq}–{request.to_seq}",
                                  lambda: self.sim.resend(table, request), table)  # fmt: skip
        waiting = inlet.feed._waiting or inlet.last_seq >= (inlet.feed.next_seq or 1 << 62)
        if waiting:
            self.sim.later(
                inlet.feed.retry_after * 1000, f"{table} feed checks its gap", lambda: self._recheck(table), table
            )

    def _recheck(self, table: str) -> None:
        if self.running:
            self.ask(table)

    # ---- timers ------------------------------------------------------------------------------

    def plan(self) -> None:
        """Wake at the writer's next deadline (sooner than a wake already planned only)."""
        if not self.running:
            return
        # as the real loop: a deadline that stays due (the database refuses) waits at least MIN_WAIT_SECONDS
        when = max(self.writer.next_deadline(), self.sim.clock.now() + timedelta(seconds=MIN_WAIT_SECONDS))
        if self._wake_at is None or when < self._wake_at:
            self._wake_at = when
            self.sim.scheduler.at(when, WAKES, self.wake)

    def wake(self) -> None:
        if not self.running:
            return
        if self._wake_at is not None and self.sim.clock.now() < self._wake_at:
            return  # an earlier wake's event, superseded
        self._wake_at = None
        with self.sim.database.acting(self):
            stepped = self.writer.step()
        if not stepped:
            self.die("it lost a table's lease")
            return
        self.sim.watch_stuck(self.writer)
        self.plan()

    def _publisher(self, table: str) -> Callable[[str, dict[str, Any]], None]:
        schemas: dict[str, type[RoundView]] = {"state": RoundView, "dealer": DealerView}

        def publish(name: str, view: dict[str, Any]) -> None:
            if not self.alive:
                return
            if self.kill_on_publish:  # its round is committed; what it was about to say is never said
                self.kill_on_publish = False
                self.sim.count("killed_before_publishing")
                self.die("killed after a commit, before publishing it")
                raise Killed
            schemas[name].model_validate(view)
            current = self.writer.tables[table].current
            if current is not None:
                self.sim.checker.hidden(table, current.round_id, current.hidden)
            self.sim.checker.view("dealer" if name == "dealer" else "public", table, view)
            deliver = lambda: self.sim.show(table, name, view)  # noqa: E731
            self.sim.network.send(f"{table} {name} view", deliver, table, retained=f"{table}/{name}")

        return publish
