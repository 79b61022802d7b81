"""The deterministic studio simulation: shoe → feed → controller → round service → ledger, under a seeded scheduler.

Only the clock (``SimClock``), the scheduling (``Scheduler``) and the transport (``Network``) are
simulated; everything else is the production code on the real database: the round controller's
``Writer`` and ``TableController``, the shoe inlet's ordering and signature checks, table leases,
the round service (a controller process's own and the API's), the ledger. The seed decides every
human delay and every fault; simulated time jumps from one event to the next, so nothing sleeps,
and a run is reproduced exactly by its seed and options.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker

from services.bus.messages import ResendRequest
from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.controller.runner import Writer
from services.db import session_factory
from services.games.base import FINISHED, PUBLIC
from services.games.shuffle import Shuffle
from services.ledger.wallets import WalletService
from services.rounds.models import Round
from services.rounds.players import PlayerService
from services.rounds.service import Applied, RoundService
from services.shoe.signing import KeyRing, new_key, sign
from services.sim.actors import REFUSALS, Operator, Players
from services.sim.actors import new_key as request_key
from services.sim.checks import Checker
from services.sim.dealer import Camera, Dealer
from services.sim.process import WAKES, ControllerProcess, DatabaseFaults, Killed
from services.sim.rooms import ROOMS, RoomPlayers, room_deal
from services.sim.runs import Report, SimSettings, Violation
from services.sim.transport import Network, NetworkFaults, Scheduler, SimClock, SimShoe

DRAIN = timedelta(minutes=1)  # after the last round: the time the shoes' last messages have to reach the controller
STUCK = timedelta(minutes=10)  # a round not ended after this much simulated time is a violation
SPIN = 200  # the controller's wakes in a row with nothing else between them: it spins
ROUTINE = ("shoe heartbeat", "shoe status", WAKES, "waits for the lease", "feed checks its gap")
TRACE = 400  # the steps kept per table for a violation's trace
PREFIX = {"baccarat": "B", "dragontiger": "D", "maubinh": "M", "tienlen": "L"}  # a table's name: prefix and number
log = logging.getLogger("studio.sim")


class Simulation:
    def __init__(self, settings: SimSettings, engine: Engine, tag: str = "") -> None:
        self.settings, self.engine, self.tag = settings, engine, tag
        self.rng = random.Random(settings.seed)
        self.clock = SimClock()
        self.scheduler = Scheduler(self.clock)
        self.database = DatabaseFaults(engine)
        sessions = session_factory(engine)
        self.checker = Checker(sessionmaker(engine, expire_on_commit=False), STUDIO_GAMES)
        self.api = RoundService(sessions, self.clock, games=STUDIO_GAMES)  # the API process's
        self.shuffles = random.Random(f"shuffles:{settings.seed}")  # online rooms' decks: the seed's, as all else
        self.api.shuffle = self.shuffle
        self.wallets = WalletService(sessions, "THB")
        faulty = "network" in settings.faults
        self.network = Network(
            self.scheduler, random.Random(self.rng.random()),
            NetworkFaults(0.03, 0.05, 0.05, 0.01) if faulty else NetworkFaults(),
        )  # fmt: skip
        self.tables = [f"{tag}T{n}" for n in range(1, settings.tables + 1)]
        self.games = {table: "pokdeng" for table in self.tables} | {
            f"{tag}{PREFIX[game]}{n}": game for game, count in settings.others().items() for n in range(1, count + 1)
        }
        self.tables = list(self.games)
        keys = {table: new_key(f"{table}-shoe") for table in self.tables}
        self.keys = KeyRing(keys=list(keys.values()))
        self.shoes = {
            table: SimShoe(table, f"{table}-shoe", keys[table], f"boot-{settings.seed}-{table}", self.clock)
            for table in self.tables
        }
        self.checker.shoes = {table: shoe.shoe_id for table, shoe in self.shoes.items()}
        self.cameras: dict[str, SimShoe] = {}  # the overhead cameras, witnesses of the shoes (fault "camera")
        self.verify = {table: "off" for table in self.tables}
        if "camera" in settings.faults:  # their own random numbers: the rest of a seed's run draws as before
            chance = random.Random(f"cameras:{settings.seed}")
            for table in self.tables:
                key = new_key(f"{table}-camera")
                self.cameras[table] = SimShoe(table, key.shoe_id, key, f"cam-{settings.seed}-{table}", self.clock)
                self.verify[table] = chance.choice(("warn", "hold"))
            self.keys = KeyRing(keys=[*keys.values(), *(camera.key for camera in self.cameras.values() if camera.key)])
        self.opening = True
        self.counts: Counter[str] = Counter()
        self.steps = 0
        self._hash = hashlib.sha256()
        self._trace: dict[str, deque[str]] = {table: deque(maxlen=TRACE) for table in [*self.tables, ""]}
        self._latest: dict[str, dict[str, Any]] = {}  # table -> its latest public view, as published
        self._since: dict[str, tuple[str, datetime]] = {}  # table -> (unfinished round, since when)
        self._ended: set[str] = set()
        self._generation = 0
        self._crash_before: dict[str, Applied | None] = {}
        self._drain_until: datetime | None = None
        self.controller: ControllerProcess | None = None
        self._setup(tag)

    def _setup(self, tag: str) -> None:
        s, limits = self.settings, {"min_stake": 10, "max_stake": 2_000}
        rules = {"baccarat": (coup := {"betting_ms": s.betting_ms, **limits}), "dragontiger": coup, "pokdeng": {
                 "betting_window_ms": s.betting_ms,
                 "insurance_window_ms": s.insurance_ms, "decision_window_ms": s.decision_ms, **limits}}  # fmt: skip
        rules |= ROOMS
        registry = PlayerService(self.api.sessions)
        for table in self.tables:  # the checker counts each card up to the table's decks
            game = self.games[table]
            number = int(table.removeprefix(tag)[1:])  # a room is named by its game's letter and its number
            settings = rules[game] | ({"deal": room_deal(number, s.seed)} if game in ROOMS else {})
            self.api.create_table(table, "THB", settings, game=game, allow_return_over_100=True,
                                  verify=self.verify[table])  # fmt: skip
            self.checker.decks[table] = self.api.decks(table)
        self.checker.rooms = {table: game for table, game in self.games.items() if game in ROOMS}
        self.dealers = {table: Dealer(self, table) for table in self.tables}
        self.watchers = {table: Camera(self, table) for table in self.cameras}
        self.players: dict[str, Players] = {}
        for table in self.tables:
            names = [f"{tag}{table}p{n}" for n in range(1, self.settings.players + 1)]
            for name in names:
                registry.register(name)
                self.wallets.deposit(name, self.rng.choice((300, 2_000, 20_000, 100_000)), request_key(self.rng), "sim")
            self.players[table] = (RoomPlayers if self.games[table] in ROOMS else Players)(self, table, names)
        self.operator = Operator(self)
        self.start_controller()
        for table in self.tables:
            self._heartbeat(table)
        self._plan_faults()

    # ---- running ---------------------------------------------------------------------------

    def run(self) -> Report:
        report = Report(self.settings)
        wakes = 0
        try:
            while not self._done():
                step = self.scheduler.next()
                if step is None:
                    raise Violation("nothing left to happen, yet rounds have not ended")
                self.steps += 1
                wakes = wakes + 1 if step.what == WAKES else 0
                if wakes > SPIN:  # nothing else happens: a deadline stays due, and the controller spins
                    raise Violation(f"the controller woke {SPIN} times in a row with nothing else happening: it spins")
                line = f"{self.steps} +{self.clock.seconds():.3f}s {step.what}"
                self._hash.update(line.replace(self.tag, "").encode() if self.tag else line.encode())
                self._trace[step.table].append(line)
                commits = self.database.commits
                try:
                    step.run()
                except Killed:
                    pass  # the controller died inside the step; its restart is planned
                except Violation:
                    raise
                except Exception as error:  # a process would have died of it, with a traceback
                    log.exception("step %s: %s", self.steps, step.what)
                    raise Violation(f"{step.what}: an unexpected {type(error).__name__}: {error}") from error
                if self.database.commits != commits:
                    with self.database.held():
                        self._ended.update(self.checker.after_step())
            with self.database.held():
                self.checker.after_step()
                self.checker.final(self.tables, {t: (s.shoe_id, s.boot_id, s.seq) for t, s in self.shoes.items()})
        except Violation as violation:
            report.violation, report.step = str(violation), self.steps
            report.trace = self._trace_of(str(violation))
        report.steps, report.checks = self.steps, self.checker.checks
        report.rounds = self._rounds_ended()
        report.simulated_s = self.clock.seconds()
        self.counts.update(messages_lost=self.network.lost, statements_failed=self.database.failures)
        report.counts = dict(sorted(self.counts.items()))
        report.digest = self._hash.hexdigest()[:16]
        return report

    def _done(self) -> bool:
        opened = sum(int(view.get("number") or 0) for view in self._latest.values())
        if self.opening and opened >= self.settings.rounds:
            self.opening = False
            if self.controller is not None:
                for controller in self.controller.writer.tables.values():
                    controller.settings = replace(controller.settings, auto_open=False)
        if self.opening or self.controller is None or not self.controller.running:
            return False
        if not (all(self._latest.get(t, {}).get("phase") in FINISHED for t in self.tables) and self._quiet()):
            return False
        # the rounds are over: the shoes' last messages (the dealer's slips) still reach the controller
        if self._drain_until is None:
            self._drain_until = self.clock.now() + DRAIN
        inlets = self.controller.inlets
        taken = all((inlets[t].feed.next_seq or 1) > shoe.seq for t, shoe in self.shoes.items())
        return taken or self.clock.now() >= self._drain_until

    def _quiet(self) -> bool:
        """Every table's latest round in the database has ended too (the views may lag behind)."""
        with self.database.held():
            latest = {table: self.api.latest(table) for table in self.tables}
        return all(applied is not None and applied.phase in FINISHED for applied in latest.values())

    def _rounds_ended(self) -> int:
        return sum(int(view.get("number") or 0) for view in self._latest.values())

    def _trace_of(self, violation: str) -> list[str]:
        """The steps of the table the violation names (else of every table), oldest first, without the routine
        ones (heartbeats, timer wakes) unless the violation is about them."""
        named = [table for table in self.tables if table in violation]
        lines = [line for table in (named or self.tables) for line in self._trace[table]] + list(self._trace[""])
        lines.sort(key=lambda line: int(line.split(" ", 1)[0]))
        telling = [line for line in lines if not any(routine in line for routine in ROUTINE)]
        return (lines if "spins" in violation else telling)[-60:]

    # ---- what the actors use -----------------------------------------------------------------

    def shuffle(self) -> Shuffle:
        """An online room's committed shuffle, drawn from the seed (whichever process opens the round)."""
        return Shuffle.drawn(self.shuffles)

    def later(self, ms: float, what: str, run: Callable[[], None], table: str = "") -> None:
        self.scheduler.after(ms, what, run, table)

    def note(self, what: str) -> None:
        self._trace[""].append(f"{self.steps} +{self.clock.seconds():.3f}s {what}")

    def count(self, name: str) -> None:
        self.counts[name] += 1

    def fault(self, name: str, probability: float) -> bool:
        """Whether the fault ``name`` strikes now (never when the run leaves it out)."""
        if name not in self.settings.faults or self.rng.random() >= probability:
            return False
        self.count(f"fault_{name}")
        return True

    def faults_on(self, name: str) -> bool:
        return name in self.settings.faults

    def key(self) -> str:
        return request_key(self.rng)

    def player_view(self, table: str, player: str) -> dict[str, Any]:
        """A player's own view through the API (``/v1/tables/{t}/me``): checked for hidden cards too."""
        try:
            view = self.api.player_view(table, player)
        except DBAPIError:
            self.count("answered_503")
            return {}
        self.checker.view(f"{player}'s own", table, view)
        return view

    def seat_view(self, table: str, seat: str, player: str) -> dict[str, Any]:
        """A seated player's own view through the API (``/v1/tables/{t}/seats/{seat}/stream``): their hand, and
        none of the others' before the round shows them."""
        try:
            view = self.api.seat_view(table, seat, player)
        except DBAPIError:
            self.count("answered_503")
            return {}
        except REFUSALS:  # the seat is no longer theirs (they left, or the round moved on)
            return {}
        own = {str(code) for code in ((view.get("hands") or {}).get(seat) or {}).get("cards", []) if code}
        self._hidden_now(table, str(view.get("round_id")))
        self.checker.view(f"{player}'s seat {seat}", table, view, own=own)
        return view

    def _hidden_now(self, table: str, round_id: str) -> None:
        """The checker learns the face-down cards as the database has them (the controller hears of a play late)."""
        try:
            with self.api.sessions() as session:
                round_ = session.get(Round, round_id)
                if round_ is not None and round_.phase not in FINISHED:
                    with self.api.reading(session, round_) as engine:
                        self.checker.hidden(table, round_id, self.api.game_of(session, round_).hidden(engine, PUBLIC))
        except DBAPIError:
            self.count("answered_503")

    def latest_view(self, table: str) -> dict[str, Any]:
        """The table's latest public state, as published."""
        return self._latest.get(table, {})

    def round_cards(self, round_id: str) -> list[str]:
        """The round's cards, as the operator reads them off the video."""
        with self.database.held(), self.api.sessions() as session:
            round_ = session.get(Round, round_id)
            if round_ is None:
                return []
            port = self.api.game_of(session, round_)
            with self.api.reading(session, round_) as engine:
                return [str(card) for card in port.cards(engine)]

    def changed(self, table: str) -> None:
        """The API moved a round: it tells the table's controller (``…/round/commands``)."""
        self.network.send(f"{table} round changed", lambda: self._to_controller(lambda c: c.command(table)), table)

    # ---- the shoe side -----------------------------------------------------------------------

    def send_card(self, table: str, payload: bytes) -> None:
        self.network.send(f"{table} shoe message", lambda: self._to_controller(lambda c: c.card(table, payload)), table)

    def send_alarm(self, table: str, payload: bytes) -> None:
        self.network.send(f"{table} shoe alarm", lambda: self._to_controller(lambda c: c.alarm(table, payload)), table)

    def send_sighting(self, table: str, payload: bytes) -> None:
        deliver = lambda: self._to_controller(lambda c: c.sighting(table, payload))  # noqa: E731
        self.network.send(f"{table} camera sighting", deliver, table)

    def resend(self, table: str, request: ResendRequest) -> None:
        self.count("resends")
        for payload in self.shoes[table].resend(request):
            self.send_card(table, payload)

    def foreign_card(self, table: str, card: Card) -> bytes:
        """A card in another shoe's name, or in this shoe's name under a key the table does not hold."""
        shoe = self.shoes[table]
        if self.rng.random() < 0.5:
            stray = SimShoe(table, f"{table}-stray", None, "stray", self.clock)
            stray.seq = shoe.seq
            return stray.card(card)
        forged = shoe.card(card)
        shoe.seq -= 1  # the forger copies the real shoe's stamp: it must not take the real message's place
        shoe.outbox.pop(shoe.seq + 1)
        return sign(forged, new_key(shoe.shoe_id))

    def _heartbeat(self, table: str) -> None:
        payload = self.shoes[table].status()
        self.network.send(
            f"{table} shoe status", lambda: self._to_controller(lambda c: c.status(table, payload)), table
        )
        self.later(2_000, f"{table} shoe heartbeat", lambda: self._heartbeat(table), table)

    def _to_controller(self, deliver: Callable[[ControllerProcess], None]) -> None:
        if self.controller is not None:
            deliver(self.controller)

    # ---- the controller's life -----------------------------------------------------------------

    def start_controller(self) -> None:
        self._generation += 1
        self.controller = ControllerProcess(self, self._generation)
        self.later(0, f"controller {self._generation} starts", self.controller.boot)

    def crash(self) -> None:
        controller = self.controller
        if controller is None or not controller.running:
            return
        with self.database.held():  # what the dead process believed, as its own engines had it
            self._crash_before = {table: controller.service.latest(table) for table in self.tables}
        controller.die("crashed (fault)")

    def recovered(self, controller: ControllerProcess) -> None:
        """After a restart: each table as recovered from the database equals the replay of its log."""
        with self.database.held():
            for table, table_controller in controller.writer.tables.items():
                current = table_controller.current
                reference = self.api.latest(table)
                self._same(table, "the API's engine", current, reference)
                before = self._crash_before.pop(table, None)
                if before is not None and current is not None and before.log_length == current.log_length:
                    self._same(table, "the crashed process's engine", current, before)

    def _same(self, table: str, what: str, recovered: Applied | None, reference: Applied | None) -> None:
        def shape(applied: Applied | None) -> Any:
            if applied is None:
                return None
            return (applied.round_id, applied.phase, applied.log_length, applied.public, applied.views["dealer"],
                    applied.expecting, applied.cards, applied.hidden)  # fmt: skip

        if shape(recovered) != shape(reference):
            raise Violation(
                f"table {table}: the controller recovered a state other than {what} "
                f"({shape(recovered)} ≠ {shape(reference)})"
            )

    def watch_stuck(self, writer: Writer) -> None:
        now = self.clock.now()
        for table, controller in writer.tables.items():
            current = controller.current
            if current is None or current.phase in FINISHED:
                self._since.pop(table, None)
                continue
            round_id, since = self._since.get(table, (current.round_id, now))
            if round_id != current.round_id:
                round_id, since = current.round_id, now
            self._since[table] = (round_id, since)
            if now - since > STUCK:
                waiting = current.expecting.text if current.expecting else "nothing"
                raise Violation(f"table {table}: round {round_id} has not ended after {STUCK} (waiting for {waiting})")

    # ---- what the screens show --------------------------------------------------------------------

    def show(self, table: str, name: str, view: dict[str, Any]) -> None:
        if name == "dealer":
            self.dealers[table].on_view(view)
            if table in self.watchers:
                self.watchers[table].on_view(view)
                self.operator.on_checks(table, view)
            return
        number = view.get("number") or 0
        if number >= int(self._latest.get(table, {}).get("number") or 0):
            self._latest[table] = view
        if "roads" in view:  # a coup's roads as shown live: rebuilt from the log at the end, they must be the same
            self.checker.roads[str(view.get("round_id"))] = (str(view.get("phase")), view["roads"])
        self.players[table].on_view(view)
        self.operator.on_view(table, view)

    # ---- the faults of the whole studio ------------------------------------------------------------

    def _plan_faults(self) -> None:
        """The next studio-wide fault: a crash, a broker outage or a database failure, at a random moment."""
        chosen = [name for name in ("crash", "broker", "database") if name in self.settings.faults]
        if not chosen:
            return
        self.later(self.rng.expovariate(1 / 20_000), "fault", self._fault)

    def _kill(self) -> None:
        """SIGKILL: between two steps, before one of its statements (in the middle of a transaction), or after a
        commit, before it publishes what changed."""
        moment = self.rng.choice(("now", "in a transaction", "after a commit"))
        controller = self.controller
        self.note(f"the controller process is killed ({moment})")
        if moment == "now":
            self.crash()
        elif controller is not None and controller.running:
            if moment == "in a transaction":
                self.database.kill = (controller, self.rng.randint(1, 12))
            else:
                controller.kill_on_publish = True

    def _fault(self) -> None:
        name = self.rng.choice([n for n in ("crash", "broker", "database") if n in self.settings.faults])
        self.count(f"fault_{name}")
        if name == "crash":
            self._kill()
        elif name == "broker":
            ms = self.rng.uniform(500, 8_000)
            self.note(f"the broker goes away for {ms:.0f} ms")
            self.network.outage(ms)
        else:
            statements = self.rng.randint(1, 40)
            invalidated = self.rng.random() < 0.5
            self.note(f"the database fails statement {statements} from now ({'lost' if invalidated else 'refused'})")
            self.database.arm(statements, invalidated)
        self._plan_faults()
