"""The round service: the one place that changes a round and moves its money.

The API, operator tools and the round controller all call it; each call is one database
transaction (``run_transaction``) that verifies the input against the Pok Deng engine, appends
it to the round's command log, moves money through the ledger, and returns the engine's events.
Bets serialize with the close of betting on the round row: bets take a shared lock, the close
an exclusive one, so a bet is either fully in before the close or refused after it.

A bet slip is the hot path (every player, many times a round): it runs prebuilt Core statements
on the session's connection, with no ORM objects, and keeps the players' account ids across
requests (ids never change; an id enters the cache only once the transaction that found it
committed).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, Row, Table, bindparam, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from services.cards import Card
from services.db.unit_of_work import run_transaction
from services.games.pokdeng import Phase, PokDengRound, Position, Side, TableSettings
from services.games.pokdeng import events as ev
from services.games.pokdeng.transcript import result_to_dict
from services.ledger import AccountKind, Ledger, StakeResult, idempotency, settle_round
from services.ledger.ledger import Locked, validate_currency
from services.observability import metrics
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.engines import RECALCULATE, EngineCache, corrected
from services.rounds.errors import (
    BettingClosedError,
    NotFoundError,
    RecalculationRefusedError,
    RoundError,
    WindowClosedError,
)
from services.rounds.models import GameTable, Round, RoundLogEntry, ThresholdChange, Wager

T = TypeVar("T")
INSURANCE = "insurance:"  # hold/stake id prefix of a player's insurance in a round
SETTINGS_CACHE = 1024  # rounds whose parsed settings are kept
ACCOUNT_CACHE = 200_000  # (currency, kind, owner) account ids kept; cleared when full
ACCOUNT_IDS = "account_ids"  # session.info key: ids found in the transaction, cached after it commits

ROUNDS = cast(Table, Round.__table__)
WAGERS = cast(Table, Wager.__table__)
BETTING_ROUND = (
    select(ROUNDS.c.phase, ROUNDS.c.betting_closes_at, ROUNDS.c.table_id, ROUNDS.c.settings)
    .where(ROUNDS.c.id == bindparam("round_id"))
    .with_for_update(read=True)
)
OWN_WAGERS = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player == bindparam("player"))
    .order_by(WAGERS.c.seq)
)
NEW_WAGERS = insert(WAGERS)
RAISE_WAGERS = (
    update(WAGERS)
    .where(WAGERS.c.id == bindparam("wager_id"))
    .values(stake=WAGERS.c.stake + bindparam("add"), updated_at=bindparam("now"))
)


@dataclass(frozen=True, slots=True)
class Bet:
    side: Side
    seat: Position
    stake: int


@dataclass
class Slip:
    """A bet slip worked out against the player's own wagers: what to write, what to hold, what to answer."""

    new: dict[str, dict[str, Any]]  # wager id -> the row to insert, in order of first placement
    raises: dict[str, int]  # wager id -> stake added to an existing wager
    wagers: dict[str, tuple[str, str, int]]  # wager id -> (side, seat, stake after the slip)
    holds: list[tuple[str, int]]  # (wager id, amount to hold), one per bet

    def answer(self) -> list[dict[str, Any]]:
        """The slip's wagers, each once in order of the bets, with its stake after the slip."""
        return [
            {"wager_id": w, "side": self.wagers[w][0], "seat": self.wagers[w][1], "stake": self.wagers[w][2]}
            for w in dict.fromkeys(wager_id for wager_id, _ in self.holds)
        ]


@dataclass
class Applied:
    """What one service call did: the round after it, and the engine events it caused."""

    round_id: str
    phase: str
    events: list[ev.Event]
    engine: PokDengRound
    log_length: int  # the round's log after the call
    window_closes_at: datetime | None
    finished_at: datetime | None  # settled or voided

    @classmethod
    def of(cls, round_: Round, events: list[ev.Event], engine: PokDengRound) -> Applied:
        return cls(
            round_.id, round_.phase, events, engine, round_.log_length, round_.window_closes_at,
            round_.settled_at or round_.voided_at,
        )  # fmt: skip


class RoundService:
    def __init__(self, sessions: sessionmaker[Session], clock: Clock | None = None) -> None:
        self.sessions = sessions
        self.clock = clock or SystemClock()
        self.engines = EngineCache()
        self._currencies: dict[str, str] = {}
        self._round_settings: dict[str, TableSettings] = {}
        self._account_ids: dict[tuple[str, str, str], int] = {}  # (currency, kind, owner) -> committed id

    # ---- tables and rounds -----------------------------------------------------------

    def create_table(self, table_id: str, currency: str = "THB", settings: dict[str, Any] | None = None) -> None:
        table_settings = TableSettings.from_mapping(settings or {})
        validate_currency(currency)

        def work(session: Session) -> None:
            if session.get(GameTable, table_id) is not None:
                raise RoundError(f"table {table_id!r} already exists")
            session.add(
                GameTable(id=table_id, game="pokdeng", currency=currency, settings=json.dumps(table_settings.to_dict()))
            )

        run_transaction(self.sessions, work)

    def open_round(self, table_id: str, video_ref: str = "") -> str:
        def work(session: Session) -> str:
            table = session.get(GameTable, table_id, with_for_update=True)
            if table is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            unfinished = session.scalar(
                select(Round.id).where(Round.table_id == table_id, Round.phase.not_in([Phase.SETTLED, Phase.VOID]))
            )
            if unfinished is not None:
                raise BettingClosedError(f"table {table_id}: round {unfinished} is not finished yet")
            number = (
                session.scalar(
                    select(Round.number).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1)
                )
                or 0
            ) + 1
            now = self.clock.now()
            window = TableSettings.from_mapping(json.loads(table.settings)).betting_window_ms
            round_id = f"{table_id}-{number}"
            session.add(
                Round(
                    id=round_id,
                    table_id=table_id,
                    number=number,
                    phase=Phase.BETTING,
                    settings=table.settings,
                    opened_at=now,
                    betting_closes_at=now + timedelta(milliseconds=window),
                    window_closes_at=now + timedelta(milliseconds=window),
                    video_ref=video_ref,
                    log_length=0,
                )
            )
            return round_id

        return run_transaction(self.sessions, work)

    # ---- bets -------------------------------------------------------------------------

    def place_bets(self, player: str, round_id: str, bets: Sequence[Bet], key: str) -> dict[str, Any]:
        """Place or raise wagers on one side of the round; all are in, with their holds, or none."""
        request = {
            "op": "bets",
            "round": round_id,
            "bets": [[str(b.side), str(b.seat), b.stake] for b in bets],
        }

        def work(session: Session) -> dict[str, Any]:
            stored = idempotency.begin(session, key, player, request)
            if stored is not None:
                return stored
            connection = session.connection()
            round_, now = self._betting_round(connection, round_id)
            if not bets:
                raise BettingClosedError("a bet slip needs at least one bet")
            settings = self._settings(round_id, round_.settings)
            ledger = Ledger(session, self._currency(session, round_.table_id))
            wallet, locked = self._lock_player(session, ledger, player)
            own = connection.execute(OWN_WAGERS, {"round_id": round_id, "player": player}).all()
            slip = _plan_slip(settings, player, round_id, own, bets, now)
            holds = ledger.place_holds(player, round_id, slip.holds, locked)
            _write_wagers(connection, slip, now)
            response = {"round_id": round_id, "wagers": slip.answer(), "balance": holds.balances[wallet]}
            return idempotency.finish(session, key, response)

        return self._run(work)

    def close_betting(self, round_id: str, actor: str = "controller") -> Applied:
        """Close betting: the round's wagers enter its log in order of first placement."""

        def work(session: Session) -> Applied:
            round_ = self._round(session, round_id)
            if round_.phase != Phase.BETTING:
                raise BettingClosedError(f"round {round_id}: betting is already closed (phase {round_.phase})")
            wagers = session.scalars(select(Wager).where(Wager.round_id == round_id).order_by(Wager.seq)).all()
            engine = self.engines.take(session, round_)
            events: list[ev.Event] = []
            for wager in wagers:
                command = ev.PlaceWager(wager.id, wager.player, Side(wager.side), Position(wager.seat), wager.stake)
                events += self._append(session, round_, engine, command, actor)
            thresholds = self._thresholds(session, {w.player for w in wagers}, aware(round_.opened_at))
            events += self._append(session, round_, engine, ev.CloseBetting(thresholds), actor)
            return Applied.of(round_, events, engine)

        return self._run(work)

    # ---- the deal, windows and decisions ----------------------------------------------

    def deal(
        self, round_id: str, card: Card, actor: str = "shoe", also: Callable[[Session], None] | None = None
    ) -> Applied:
        """Deal the next card; ``also(session)`` writes in the same transaction (the controller's journal)."""
        return self._command(round_id, ev.DealCard(card), actor, also=also)

    def close_insurance(self, round_id: str, actor: str = "controller") -> Applied:
        return self._command(round_id, ev.CloseInsurance(), actor)

    def decision_timeout(self, round_id: str, seat: Position, actor: str = "controller") -> Applied:
        return self._command(round_id, ev.DecisionTimeout(seat), actor)

    def decide(self, player: str, round_id: str, seat: Position, draw: bool) -> Applied:
        return self._command(round_id, ev.Decide(seat, draw, player), player, window=True)

    def buy_insurance(self, player: str, round_id: str, amount: int, key: str) -> dict[str, Any]:
        """Insurance is held like a wager (1 × its amount) and settles with the round."""
        request = {"op": "insurance", "round": round_id, "amount": amount}

        def work(session: Session) -> dict[str, Any]:
            stored = idempotency.begin(session, key, player, request)
            if stored is not None:
                return stored
            round_ = self._round(session, round_id)
            engine = self.engines.take(session, round_)
            self._check_window(round_, engine)
            command = ev.BuyInsurance(player, amount)
            engine.verify(command)
            ledger = self._ledger(session, round_)
            ledger.hold(player, amount, round_id, INSURANCE + player)
            self._append(session, round_, engine, command, player)
            response = {"round_id": round_id, "insurance": amount, "balance": ledger.wallet(player)}
            return idempotency.finish(session, key, response)

        return self._run(work)

    # ---- operator corrections ---------------------------------------------------------

    def void(self, round_id: str, reason: str, actor: str) -> Applied:
        """Void: every pending hold goes back; a settled round's results are reversed by adjustments."""

        def work(session: Session) -> Applied:
            round_ = self._round(session, round_id)
            engine = self.engines.take(session, round_)
            was_settled = engine.result
            events = self._append(session, round_, engine, ev.VoidRound(reason), actor)
            ledger = self._ledger(session, round_)
            ledger.void_holds(round_id)
            if was_settled is not None:
                for player, net in sorted(was_settled.player_nets().items()):
                    ledger.adjust(player, -net, round_id, f"void: {reason}")
            round_.voided_at = self.clock.now()
            return Applied.of(round_, events, engine)

        return self._run(work)

    def recalculate(self, round_id: str, cards: dict[int, Card], video_ref: str, actor: str) -> dict[str, int]:
        """Correct misread cards of a settled round from the video; post the difference only.

        ``cards`` maps the index of a dealt card (0-based, shoe order) to the card the video shows.
        A correction that would have changed the deal flow is refused: such a round must be voided.
        Returns each player's adjustment.
        """

        def work(session: Session) -> dict[str, int]:
            round_ = self._round(session, round_id)
            old = self.engines.take(session, round_)
            if old.result is None:
                raise RecalculationRefusedError(f"round {round_id} is not settled (phase {old.phase})")
            dealt = len(old.cards)
            bad = [index for index in cards if not 0 <= index < dealt]
            if bad:
                raise RecalculationRefusedError(f"round {round_id}: no dealt card at index {bad[0]} (0–{dealt - 1})")
            codes = {str(index): str(card) for index, card in cards.items()}
            try:
                new = PokDengRound.replay(corrected(old.commands, codes), old.settings)
            except ValueError as error:
                raise RecalculationRefusedError(
                    f"round {round_id}: the correction changes the deal ({error}); void it"
                ) from None
            if new.result is None or _flow(new) != _flow(old):
                raise RecalculationRefusedError(
                    f"round {round_id}: the correction changes who draws, insurance or early settlement; void it"
                )
            assert old.result is not None
            before, after = old.result.player_nets(), new.result.player_nets()
            ledger = self._ledger(session, round_)
            changes = {p: after.get(p, 0) - before.get(p, 0) for p in sorted(set(before) | set(after))}
            for player, delta in changes.items():
                ledger.adjust(player, delta, round_id, f"recalculated from video {video_ref}")
            self._log(session, round_, {"type": RECALCULATE, "cards": codes, "video_ref": video_ref}, actor)
            round_.result = json.dumps(result_to_dict(new.result) | {"early": new.result.early})
            self._store_nets(session, new)
            session.info.setdefault("engines", {})[round_.id] = (round_.log_length, new)
            return {p: d for p, d in changes.items() if d}

        return self._run(work)

    # ---- players ----------------------------------------------------------------------

    def set_threshold(self, player: str, threshold: int) -> None:
        """A new auto-draw threshold applies from the next round the player joins."""
        if type(threshold) is not int or not 1 <= threshold <= 5:
            raise RecalculationRefusedError(f"threshold must be a whole number 1–5, got {threshold!r}")

        def work(session: Session) -> None:
            session.execute(
                insert(ThresholdChange).values(player=player, threshold=threshold, changed_at=self.clock.now())
            )

        run_transaction(self.sessions, work)

    def threshold(self, player: str) -> int:
        with self.sessions() as session:
            return self._thresholds(session, {player}, self.clock.now() + timedelta(microseconds=1)).get(player, 4)

    # ---- internals --------------------------------------------------------------------

    def _run(self, work: Callable[[Session], T]) -> T:
        """One transaction; the engines it advanced and the account ids it found are cached only after the commit."""
        advanced: dict[str, tuple[int, PokDengRound]] = {}
        found: dict[tuple[str, str, str], int] = {}

        def attempt(session: Session) -> T:
            advanced.clear()
            found.clear()
            value = work(session)
            advanced.update(session.info.pop("engines", {}))
            found.update(session.info.pop(ACCOUNT_IDS, {}))
            return value

        value = run_transaction(self.sessions, attempt)
        for round_id, (length, engine) in advanced.items():
            self.engines.give_back(round_id, length, engine)
        if found:
            if len(self._account_ids) + len(found) > ACCOUNT_CACHE:
                self._account_ids.clear()
            self._account_ids.update(found)
        return value

    def _command(
        self,
        round_id: str,
        command: ev.Command,
        actor: str,
        window: bool = False,
        also: Callable[[Session], None] | None = None,
    ) -> Applied:
        def work(session: Session) -> Applied:
            round_ = self._round(session, round_id)
            engine = self.engines.take(session, round_)
            if window:
                self._check_window(round_, engine)
            events = self._append(session, round_, engine, command, actor)
            if also is not None:
                also(session)
            return Applied.of(round_, events, engine)

        return self._run(work)

    def _append(
        self, session: Session, round_: Round, engine: PokDengRound, command: ev.Command, actor: str
    ) -> list[ev.Event]:
        """Apply to the engine, log it, and follow its consequences (windows, settlement)."""
        events = engine.apply(command)
        self._log(session, round_, ev.command_to_dict(command), actor)
        session.info.setdefault("engines", {})[round_.id] = (round_.log_length, engine)
        round_.phase = str(engine.phase)
        settings = engine.settings
        now = self.clock.now()
        for event in events:
            if isinstance(event, ev.InsuranceOffered):
                round_.window_closes_at = now + timedelta(milliseconds=settings.insurance_window_ms)
            elif isinstance(event, ev.DecisionWindowOpened):
                round_.window_closes_at = now + timedelta(milliseconds=settings.decision_window_ms)
            elif isinstance(event, ev.InsuranceClosed | ev.DrawDecided | ev.BettingClosed | ev.RoundVoided):
                round_.window_closes_at = None
            elif isinstance(event, ev.RoundSettled):
                self._settle(session, round_, engine)
        return events

    def _settle(self, session: Session, round_: Round, engine: PokDengRound) -> None:
        result = engine.result
        assert result is not None
        stakes = [StakeResult(i.wager.player, i.wager.wager_id, i.net, i.commission) for i in result.wagers]
        stakes += [StakeResult(i.player, INSURANCE + i.player, i.net) for i in result.insurance]
        with metrics.SETTLEMENT_SECONDS.time():
            settle_round(self._ledger(session, round_), round_.id, stakes)
        round_.settled_at = self.clock.now()
        round_.result = json.dumps(result_to_dict(result) | {"early": result.early})
        self._store_nets(session, engine)

    def _store_nets(self, session: Session, engine: PokDengRound) -> None:
        assert engine.result is not None
        rows = [{"wager_id": item.wager.wager_id, "net": item.net} for item in engine.result.wagers]
        if rows:
            table = cast(Table, Wager.__table__)
            statement = update(table).where(table.c.id == bindparam("wager_id")).values(net=bindparam("net"))
            session.connection().execute(statement, rows)

    def _log(self, session: Session, round_: Round, entry: dict[str, Any], actor: str) -> None:
        round_.log_length += 1
        session.add(
            RoundLogEntry(
                round_id=round_.id, seq=round_.log_length, command=json.dumps(entry), actor=actor,
                created_at=self.clock.now(),
            )
        )  # fmt: skip
        session.flush()

    def _round(self, session: Session, round_id: str) -> Round:
        round_ = session.scalar(select(Round).where(Round.id == round_id).with_for_update())
        if round_ is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        return round_

    def _betting_round(self, connection: Connection, round_id: str) -> tuple[Row[Any, Any, Any, Any], datetime]:
        """The round's row under a shared lock (the close of betting takes it exclusively), if betting is open."""
        round_ = connection.execute(BETTING_ROUND, {"round_id": round_id}).first()
        if round_ is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        now = self.clock.now()
        if round_.phase != Phase.BETTING or now >= aware(round_.betting_closes_at):
            raise BettingClosedError(f"round {round_id}: betting is closed (phase {round_.phase})")
        return round_, now

    def _ledger(self, session: Session, round_: Round) -> Ledger:
        return Ledger(session, self._currency(session, round_.table_id))

    def _currency(self, session: Session, table_id: str) -> str:
        """The table's currency (it never changes, so it is looked up once)."""
        currency = self._currencies.get(table_id)
        if currency is None:
            currency = str(session.scalar(select(GameTable.currency).where(GameTable.id == table_id)))
            self._currencies[table_id] = currency
        return currency

    def _settings(self, round_id: str, raw: str) -> TableSettings:
        """The settings the round opened with (fixed for its life, so parsed once per round)."""
        settings = self._round_settings.get(round_id)
        if settings is None:
            settings = TableSettings.from_mapping(json.loads(raw))
            if len(self._round_settings) >= SETTINGS_CACHE:
                self._round_settings.clear()
            self._round_settings[round_id] = settings
        return settings

    def _lock_player(self, session: Session, ledger: Ledger, player: str) -> tuple[int, dict[int, Locked]]:
        """Lock the player's wallet and escrow: the wallet id and both rows as read under the lock.

        Serializes one player's own requests (the both-sides rule needs to see every earlier bet);
        the balances read here are the ones the holds are checked against.
        """
        kinds = (AccountKind.WALLET, AccountKind.HOLD)
        keys = [(ledger.currency, str(kind), player) for kind in kinds]
        known = [self._account_ids.get(key) for key in keys]
        for kind, account_id in zip(kinds, known, strict=True):
            if account_id is not None:
                ledger.know(kind, player, account_id)
        ids = [ledger.account(kind, player) for kind in kinds]
        if None in known:
            session.info.setdefault(ACCOUNT_IDS, {}).update(zip(keys, ids, strict=True))
        return ids[0], ledger.lock(ids)

    def _check_window(self, round_: Round, engine: PokDengRound) -> None:
        deadline = round_.window_closes_at
        if deadline is not None and self.clock.now() >= aware(deadline):
            raise WindowClosedError(f"round {round_.id}: the window closed at {aware(deadline).isoformat()}")

    def _thresholds(self, session: Session, players: set[str], before: datetime) -> dict[str, int]:
        """Each player's threshold as it stood at ``before`` (changes apply from the next round)."""
        rows = session.execute(
            select(ThresholdChange.player, ThresholdChange.threshold)
            .where(ThresholdChange.player.in_(sorted(players)), ThresholdChange.changed_at < before)
            .order_by(ThresholdChange.changed_at, ThresholdChange.id)
        )
        return {player: threshold for player, threshold in rows}


def _plan_slip(
    settings: TableSettings,
    player: str,
    round_id: str,
    own: Sequence[Row[Any, Any, Any, Any]],
    bets: Sequence[Bet],
    now: datetime,
) -> Slip:
    """Check the bets against the player's own wagers (all the betting rules look at) and plan the writes.

    A bet on a (side, seat) the player already has raises that wager; a new one gets a new wager.
    """
    check = PokDengRound(settings)
    wagers: dict[str, tuple[str, str, int]] = {}
    by_key: dict[tuple[str, str], str] = {}
    for wager_id, side, seat, stake in own:
        check.place_wager(wager_id, player, Side(side), Position(seat), stake)
        wagers[wager_id] = (side, seat, stake)
        by_key[(side, seat)] = wager_id
    slip = Slip({}, {}, wagers, [])
    for bet in bets:
        side, seat = str(bet.side), str(bet.seat)
        wager_id = by_key.get((side, seat)) or uuid.uuid4().hex
        by_key[(side, seat)] = wager_id
        check.place_wager(wager_id, player, bet.side, bet.seat, bet.stake)
        slip.holds.append((wager_id, settings.hold_multiple * bet.stake))
        if wager_id not in wagers:
            slip.new[wager_id] = {
                "id": wager_id, "round_id": round_id, "player": player, "side": side, "seat": seat, "stake": 0,
                "net": None, "created_at": now, "updated_at": now,
            }  # fmt: skip
            wagers[wager_id] = (side, seat, 0)
        if wager_id in slip.new:
            slip.new[wager_id]["stake"] += bet.stake
        else:
            slip.raises[wager_id] = slip.raises.get(wager_id, 0) + bet.stake
        wagers[wager_id] = (side, seat, wagers[wager_id][2] + bet.stake)
    return slip


def _write_wagers(connection: Connection, slip: Slip, now: datetime) -> None:
    """Insert the slip's new wagers (``seq`` keeps their order) and raise the existing ones."""
    if slip.new:
        connection.execute(NEW_WAGERS, list(slip.new.values()))
    if slip.raises:
        connection.execute(RAISE_WAGERS, [{"wager_id": w, "add": add, "now": now} for w, add in slip.raises.items()])


def _flow(round_: PokDengRound) -> list[tuple[str, str]]:
    """What happened in the deal, card values aside: insurance, draws, early settlement."""
    steps = []
    for event in round_.events:
        if isinstance(event, ev.InsuranceOffered):
            steps.append(("insurance", ""))
        elif isinstance(event, ev.DrawDecided):
            steps.append((str(event.position), f"{event.draw}:{event.reason}"))
        elif isinstance(event, ev.RoundSettled):
            steps.append(("settled", str(event.result.early)))
    return steps
