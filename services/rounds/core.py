"""The round service's core: the one command path every change to a round takes, and what the topics share.

Each call is one database transaction (``run``): the game's engine verifies the command, the command is appended to
the round's log, the engine applies it, and when the engine says the round is settled its payouts go through the
ledger. The topics (``tables``, ``commands``, ``reads``, ``corrections``, ``card_checks``) build on it; the
``RoundService`` is all of them (``services.rounds.service``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import Select, Table, bindparam, insert, select, update
from sqlalchemy import inspect as inspected
from sqlalchemy.orm import Session, sessionmaker

from services.cards import Card
from services.db.unit_of_work import run_transaction
from services.games.base import PUBLIC, VOID, CardWanted, Game, NotExpectedError, Window
from services.games.shuffle import Shuffle
from services.ledger import Ledger, StakeResult, settle_round
from services.ledger.locks import AccountIds
from services.observability import metrics
from services.rounds import checks
from services.rounds.adapters import Adapter, Catalog
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.engines import EngineCache, corrected
from services.rounds.errors import (
    BettingClosedError,
    FlowChangedError,
    NotFoundError,
    RecalculationRefusedError,
    WindowClosedError,
)
from services.rounds.fence import Fence
from services.rounds.models import GameTable, Round, RoundLogEntry
from services.rounds.records import (
    ADVANCED,
    SETTINGS_CACHE,
    Along,
    Applied,
    TableInfo,
    advanced,
    state_header,
    stored_result,
)
from services.wallet.outbox import SeamlessWallet
from services.wallet.seamless import OPERATOR, pay_out, take_back

if TYPE_CHECKING:
    from services.rounds.slips import SlipWriter

T = TypeVar("T")
LOG_INSERT = insert(cast(Table, RoundLogEntry.__table__))
LOCKED_ROUND = select(Round).where(Round.id == bindparam("round_id")).with_for_update()
# what a round's commands change on its row (the rest is fixed when it opens): written by Core, not by the flush
CHANGING = frozenset(("phase", "window_closes_at", "settled_at", "voided_at", "result", "log_length", "video_ref"))
_ROUNDS = cast(Table, Round.__table__)
ROUND_UPDATE = update(_ROUNDS).where(_ROUNDS.c.id == bindparam("round_id"))  # SET: the columns given


class RoundCore:
    """The table look-ups, the command path, the transaction and the caches every topic of the service uses."""

    def __init__(self, sessions: sessionmaker[Session], clock: Clock | None = None, *, games: Catalog) -> None:
        self.sessions = sessions
        self.games = games  # the studio's games and their adapters (``services.catalog``)
        self.clock = clock or SystemClock()
        self.engines = EngineCache()
        self.accounts = AccountIds()
        self._tables: dict[str, TableInfo] = {}
        self._round_settings: dict[str, Any] = {}
        self._round_games: dict[str, str] = {}  # round id -> its table's game (never changes)
        self._lock = threading.Lock()
        self._fence: Fence | None = None
        self._locked: Select[Any] = LOCKED_ROUND  # the statement that locks a round (with the fence, once set)
        # the operator's wallet, for the stakes of ``wallet: operator`` tables (the API process's; payouts need none)
        self.wallet: SeamlessWallet | None = None
        # the API's writer of bet slips in batches (``services.rounds.slips``); None: each slip its own transaction
        self.slip_writer: SlipWriter | None = None
        # where an online room's committed shuffle comes from (the operating system's randomness; a simulation's seed)
        self.shuffle: Callable[[], Shuffle] = Shuffle.new

    def table(self, session: Session, table_id: str) -> TableInfo:
        """The table's game, currency and wallet (they never change, so each is looked up once)."""
        info = self._tables.get(table_id)
        if info is None:
            row = session.execute(
                select(GameTable.game, GameTable.currency, GameTable.wallet).where(GameTable.id == table_id)
            ).first()
            if row is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            info = TableInfo(row.game, row.currency, row.wallet)
            self._tables[table_id] = info
        return info

    def known_table(self, table_id: str) -> TableInfo | None:
        """``table`` if this process has looked it up before (no database)."""
        return self._tables.get(table_id)

    def table_info(self, table_id: str) -> TableInfo:
        """``table`` outside a transaction: from the cache, a session opened only on the first look-up."""
        info = self._tables.get(table_id)
        if info is not None:
            return info
        with self.sessions() as session:
            return self.table(session, table_id)

    def game_of(self, session: Session, round_: Round) -> Game[Any, Any]:
        return self.games.game(self.table(session, round_.table_id).game)

    def adapter_of(self, session: Session, round_: Round) -> Adapter:
        return self.games.adapter(self.table(session, round_.table_id).game)

    def most_cards(self, table_id: str) -> int:
        """The most cards one round of the table's game takes from the shoe (none when it deals online)."""
        port, settings = self._table_settings(table_id)
        return 0 if port.deals_online(settings) else port.most_cards(settings)

    def decks(self, table_id: str) -> int:
        """How many decks the table's shoe holds (its game says, from the table's settings)."""
        port, settings = self._table_settings(table_id)
        return port.decks(settings)

    def burn_rule(self, table_id: str) -> Callable[[Card], int] | None:
        """How the table's game burns at a new shoe (the count after the first card), or None: it burns none."""
        port, settings = self._table_settings(table_id)
        return port.burn(settings)

    def deals_online(self, table_id: str) -> bool:
        """The table's rooms are dealt from a committed server shuffle: no shoe."""
        port, settings = self._table_settings(table_id)
        return port.deals_online(settings)

    def _table_settings(self, table_id: str) -> tuple[Game[Any, Any], Any]:
        with self.sessions() as session:
            table = session.get(GameTable, table_id)
            if table is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            port = self.games.game(table.game)
            return port, port.settings(json.loads(table.settings))

    def close_window(self, round_id: str, actor: str = "controller", kind: str = "", seat: str = "") -> Applied:
        """End the round's open window (of that ``kind`` and ``seat``, when given) as its game says."""

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            port = self.game_of(session, round_)
            engine = self.engines.take(session, round_, port)
            window = port.expecting(engine)
            if not isinstance(window, Window) or (kind and window.kind != kind) or (seat and window.seat != seat):
                phase = port.phase(engine)
                if kind == "betting":
                    raise BettingClosedError(f"round {round_id}: betting is already closed (phase {phase})")
                wanted = " ".join(part for part in (kind, "window", f"of seat {seat}" if seat else "") if part)
                raise NotExpectedError(f"round {round_id}: no {wanted} is open (phase {phase})")
            events = self.adapter_of(session, round_).close(self, session, round_, engine, window, actor)
            return self.applied(session, round_, events, engine)

        return self.run(work)

    def command(
        self,
        round_id: str,
        make: Callable[[Game[Any, Any]], Any],
        actor: str,
        window: bool = False,
        also: Callable[[Session], None] | None = None,
        along: Along | None = None,
    ) -> Applied:
        """Append the command ``make(game)`` to the round (``window``: only before the open window's deadline)."""

        def work(session: Session) -> Applied:
            round_, port, engine = self.taken(session, round_id, along)
            if window:
                self.check_window(round_)
            events = self.append(session, round_, engine, make(port), actor)
            if also is not None:
                also(session)
            return self.applied(session, round_, events, engine)

        return self.run(work)

    def append(self, session: Session, round_: Round, engine: Any, command: Any, actor: str) -> list[Any]:
        """Apply to the engine, log it, and follow its consequences: the window's deadline, settlement."""
        port = self.game_of(session, round_)
        before = port.expecting(engine)
        watched = checks.shown(port, engine) if round_.verify != checks.OFF else None
        events = port.apply(engine, command)
        self._log(session, round_, port.command_to_dict(command), actor)
        advanced(session, round_, engine, port)
        round_.phase = port.phase(engine)
        if watched is not None and round_.phase != VOID:  # a void shows nothing to check
            checks.open_checks(session, round_, port, engine, watched, self.clock.now())
        after = port.expecting(engine)
        if not isinstance(after, Window):
            round_.window_closes_at = None
        elif not isinstance(before, Window) or before.key != after.key:
            round_.window_closes_at = self.clock.now() + timedelta(milliseconds=after.ms)
        if round_.shuffle_deck and isinstance(after, CardWanted):
            events += self._deal_online(session, round_, engine, port)
        elif round_.settled_at is None and round_.voided_at is None:
            self._settle_when_checked(session, round_, engine, port)
        return events

    def _settle_when_checked(self, session: Session, round_: Round, engine: Any, port: Game[Any, Any]) -> None:
        """Settle a round its engine has ended — unless its cross-check holds it for a card not yet confirmed."""
        payouts = port.payouts(engine)
        if payouts is None:
            return
        if round_.verify == checks.HOLD and checks.unresolved(session, round_.id):
            round_.phase = checks.VERIFYING
            return
        round_.phase = port.phase(engine)
        self._settle(session, round_, engine, port, payouts)

    def _deal_online(self, session: Session, round_: Round, engine: Any, port: Game[Any, Any]) -> list[Any]:
        """A room dealt online: the cards it wants now, from its committed shuffle, in deck order."""
        deck = [Card.from_code(code) for code in (round_.shuffle_deck or "").split(",")]
        events: list[Any] = []
        while isinstance(port.expecting(engine), CardWanted):
            events += self.append(session, round_, engine, port.deal(deck[len(port.cards(engine))]), "shuffle")
        return events

    def applied(self, session: Session, round_: Round, events: list[Any], engine: Any) -> Applied:
        """The round after this transaction's commands; its public view also refreshes the readers' cache."""
        port = self.game_of(session, round_)
        views = port.views(engine)
        advanced(session, round_, engine, port, views["public"])
        return Applied(
            round_.id, port.name, round_.phase, events, round_.log_length, round_.window_closes_at,
            round_.settled_at or round_.voided_at, port.expecting(engine), tuple(port.cards(engine)),
            port.hidden(engine, PUBLIC), state_header(round_), views,
            engine, round_.verify, round_.verify_window_ms,
            checks.open_of(session, round_.id) if round_.verify != checks.OFF else (), round_.result_pause_ms,
        )  # fmt: skip

    @contextmanager
    def reading(self, session: Session, round_: Round) -> Iterator[Any]:
        """The cached engine of ``round_`` to read (never change) inside the block."""
        port = self.game_of(session, round_)
        engine = self.engines.take(session, round_, port)
        try:
            yield engine
        finally:
            self.engines.give_back(round_.id, round_.log_length, engine, port)

    def _corrected(
        self, round_: Round, port: Game[Any, Any], old: Any, cards: dict[int, Card], dealt_only: bool = False
    ) -> tuple[Any, dict[str, str]]:
        """The settled round replayed with ``cards`` (shoe index → card), and the codes as logged; refused when the
        round is not settled (``dealt_only``: not dealt to its end), an index names no dealt card, or the correction
        would change the deal's flow."""
        round_id = round_.id
        if port.payouts(old) is None or (round_.settled_at is None and not dealt_only):
            raise RecalculationRefusedError(
                f"round {round_id} is not settled (phase {round_.phase})", reason="not_settled"
            )
        dealt = len(port.cards(old))
        bad = [index for index in cards if not 0 <= index < dealt]
        if bad:
            message = f"round {round_id}: no dealt card at index {bad[0]} (0–{dealt - 1})"
            raise RecalculationRefusedError(
                message, reason="no_dealt_card", params={"index": bad[0], "last": dealt - 1}
            )
        codes = {str(index): str(card) for index, card in cards.items()}
        settings = self.round_settings(round_id, round_.settings, port)
        try:
            new = port.replay(corrected(port, list(port.commands(old)), codes), settings)
        except ValueError as error:
            message = f"round {round_id}: the correction changes the deal ({error}); void it"
            raise FlowChangedError(message, reason="flow_changed") from None
        if port.payouts(new) is None or port.flow(new) != port.flow(old):
            raise FlowChangedError(
                f"round {round_id}: the correction changes who draws, insurance or early settlement; void it",
                reason="flow_changed",
            )
        return new, codes

    def run(self, work: Callable[[Session], T]) -> T:
        """One transaction; the engines it advanced and the account ids it found are cached only after the commit."""
        advanced: dict[str, tuple[int, Any, Game[Any, Any], dict[str, Any] | None]] = {}
        found: dict[tuple[str, str, str], int] = {}

        def attempt(session: Session) -> T:
            advanced.clear()
            found.clear()
            value = work(session)
            written(session)
            advanced.update(session.info.pop(ADVANCED, {}))
            found.update(self.accounts.pending(session))
            return value

        value = run_transaction(self.sessions, attempt)
        for round_id, (length, engine, port, view) in advanced.items():
            self.engines.give_back(round_id, length, engine, port, view)
        self.accounts.remember(found)
        return value

    def taken(self, session: Session, round_id: str, along: Along | None = None) -> tuple[Round, Game[Any, Any], Any]:
        """The round locked for a change (``along`` run first: an operator action's work), its game and its engine."""
        round_ = self.locked_round(session, round_id)
        if along is not None:
            along(session, round_)
        port = self.game_of(session, round_)
        return round_, port, self.engines.take(session, round_, port)

    @property
    def fence(self) -> Fence | None:
        """A table's one writer (the controller) refuses its own writes once it lost the table's lease."""
        return self._fence

    @fence.setter
    def fence(self, fence: Fence | None) -> None:
        self._fence = fence
        self._locked = LOCKED_ROUND
        if fence is not None:  # its lease epoch read in the statement that locks the round
            fenced = select(Round, fence.epoch_in(Round.table_id)).where(Round.id == bindparam("round_id"))
            self._locked = fenced.with_for_update(of=Round)

    def locked_round(self, session: Session, round_id: str) -> Round:
        """The round, locked for this transaction's change, and the writer's fence checked in the same statement."""
        found = session.execute(self._locked, {"round_id": round_id}).first()
        if found is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        round_: Round = found[0]
        if self._fence is not None and not self._fence.holds(round_.table_id, found[1]):
            self._fence(session, round_.table_id)  # refuses, saying who holds the table now
        return round_

    def fenced(self, session: Session, table_id: str) -> None:
        """Inside a write's transaction: refuse it if this service's writer lost the table (see ``fence``)."""
        if self.fence is not None:
            self.fence(session, table_id)

    def engine(self, session: Session, round_: Round) -> Any:
        """The round's engine for a writer in this transaction (handed back to the cache after the commit)."""
        return self.engines.take(session, round_, self.game_of(session, round_))

    def ledger(self, session: Session, table_id: str) -> Ledger:
        return Ledger(session, self.table(session, table_id).currency)

    def round_settings(self, round_id: str, raw: str, port: Game[Any, Any]) -> Any:
        """The settings the round opened with (fixed for its life, so parsed once per round)."""
        settings = self._round_settings.get(round_id)
        if settings is None:
            settings = port.settings(json.loads(raw))
            with self._lock:
                if len(self._round_settings) >= SETTINGS_CACHE:
                    self._round_settings.clear()
                self._round_settings[round_id] = settings
        return settings

    def check_window(self, round_: Round) -> None:
        deadline = round_.window_closes_at
        if deadline is not None and self.clock.now() >= aware(deadline):
            raise WindowClosedError(f"round {round_.id}: the window closed at {aware(deadline).isoformat()}")

    def _settle(self, session: Session, round_: Round, engine: Any, port: Game[Any, Any], payouts: list[Any]) -> None:
        stakes = [StakeResult(p.player, p.stake_id, p.net, p.commission, p.beyond_hold) for p in payouts]
        ledger = self.ledger(session, round_.table_id)
        with metrics.SETTLEMENT_SECONDS.time():
            settle_round(ledger, round_.id, stakes)
            if self.table(session, round_.table_id).wallet == OPERATOR:
                pay_out(session, ledger, round_.id, [p.player for p in payouts], "settlement", "settlement")
        round_.settled_at = self.clock.now()
        round_.result = stored_result(port, engine)
        self.adapter_of(session, round_).settled(self, session, round_, engine)

    @staticmethod
    def _mirror_adjustments(
        session: Session, ledger: Ledger, round_: Round, owed: dict[str, int], cause: str, reason: str
    ) -> None:
        """A correction or void of a settled round on an operator's-wallet table: what it gave back is credited,
        what it took back (recorded as debt) is debited."""
        pay_out(session, ledger, round_.id, [p for p in sorted(owed) if ledger.wallet(p) > 0], cause, reason)
        take_back(session, ledger, round_.id, owed, cause, reason)

    def _log(self, session: Session, round_: Round, entry: dict[str, Any], actor: str) -> None:
        """The command's log row, written at once; the round's own changes are flushed later (at the commit, or by
        the next ORM query): a Core statement after this one must not rely on seeing them."""
        round_.log_length += 1
        session.connection().execute(  # a Core statement: the unit of work's flush costs more than the row
            LOG_INSERT,
            {"round_id": round_.id, "seq": round_.log_length, "command": json.dumps(entry), "actor": actor,
             "created_at": self.clock.now()},
        )  # fmt: skip


def written(session: Session) -> None:
    """Write the rounds this transaction changed, one Core ``UPDATE`` each of the columns it changed, and let the
    session forget them: the unit of work's flush of a round costs more than the row. A round changed in another
    column is left to the flush. Called last in a command's transaction (nothing reads the round through the session
    after it); every command changes a round it locked first (``locked_round``), as the flush assumed too."""
    for instance in list(session.dirty):
        if type(instance) is not Round:
            continue
        changed = inspected(instance).committed_state.keys()
        if not changed or not changed <= CHANGING:
            continue
        values = {name: getattr(instance, name) for name in changed}
        session.connection().execute(ROUND_UPDATE, {"round_id": instance.id, **values})
        session.expunge(instance)
