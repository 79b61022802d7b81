"""The round service: the one place that changes a round and moves its money, for every game.

The API, operator tools and the round controller all call it; each call is one database
transaction (``run_transaction``) on one command path: the game's engine verifies the command,
the command is appended to the round's log, the engine applies it, and when the engine says the
round is settled its payouts go through the ledger. What a game adds (its player actions, what
the end of a window means, what it stores at settlement) is its ``Adapter``
(``services.rounds.adapters``); the engine itself is reached only through the game port
(``services.games.base``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from services.cards import Card
from services.controller.models import DECK_HELD, DeckReport
from services.db.unit_of_work import run_transaction
from services.games.base import (
    DEALER,
    FINISHED,
    PUBLIC,
    VOID,
    CardWanted,
    Expecting,
    Game,
    NotExpectedError,
    Window,
    viewer,
)
from services.games.base import game as game_named
from services.games.shuffle import Shuffle
from services.ledger import Ledger, StakeResult, settle_round
from services.ledger.ledger import validate_currency
from services.ledger.locks import AccountIds
from services.observability import metrics
from services.rounds import checks
from services.rounds.adapters import Adapter, adapter
from services.rounds.adapters import every as every_adapter
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.engines import RECALCULATE, EngineCache, corrected
from services.rounds.errors import (
    BettingClosedError,
    FlowChangedError,
    ForbiddenError,
    NotFoundError,
    RecalculationRefusedError,
    RoundError,
    TableHeldError,
    WindowClosedError,
)
from services.rounds.models import GameTable, Round, RoundLogEntry, locked_table
from services.rounds.returns import check_returns
from services.rounds.video import checked_template
from services.wallet.outbox import SeamlessWallet
from services.wallet.seamless import INTERNAL, OPERATOR, WALLETS, pay_out, roll_back_stakes, take_back

T = TypeVar("T")
SETTINGS_CACHE = 1024  # rounds whose parsed settings are kept
ADVANCED = "engines"  # session.info key: engines this transaction advanced, cached after it commits


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What never changes about a table: its game, its currency and whose wallet holds its players' money."""

    game: str
    currency: str
    wallet: str = INTERNAL


@dataclass
class Applied:
    """A round after a service call: what changed, what it expects, and its views (computed once here).

    ``engine`` is the service's own engine object: read it at once, never keep or change it.
    """

    round_id: str
    game: str
    phase: str
    events: list[Any]
    log_length: int  # the round's log after the call
    window_closes_at: datetime | None
    finished_at: datetime | None  # settled or voided
    expecting: Expecting
    cards: tuple[Card, ...]  # dealt, in shoe order
    hidden: frozenset[Card]  # dealt cards the public may not see yet
    header: dict[str, Any]  # the public state's round fields
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # "public" and "dealer"
    engine: Any = None
    verify: str = checks.OFF  # the round's shoe + camera cross-check
    verify_window_ms: int = 0
    checks: tuple[checks.OpenCheck, ...] = ()  # its checks not yet settled (pending, or waiting for an operator)

    @property
    def public(self) -> dict[str, Any]:
        return self.header | self.views["public"] | _held(self.phase)


Along = Callable[[Session, Round], None]  # work done in an operator action's own transaction, before it


def stored_round(session: Session, round_id: str) -> Round:
    """The round, or ``NotFoundError`` naming it."""
    round_ = session.get(Round, round_id)
    if round_ is None:
        raise NotFoundError(f"round {round_id!r} does not exist")
    return round_


class RoundService:
    def __init__(self, sessions: sessionmaker[Session], clock: Clock | None = None) -> None:
        self.sessions = sessions
        self.clock = clock or SystemClock()
        self.engines = EngineCache()
        self.accounts = AccountIds()
        self._tables: dict[str, TableInfo] = {}
        self._round_settings: dict[str, Any] = {}
        self._round_games: dict[str, str] = {}  # round id -> its table's game (never changes)
        self._lock = threading.Lock()
        # a table's one writer (the controller) refuses its own writes once it lost the table's lease
        self.fence: Callable[[Session, str], None] | None = None
        # the operator's wallet, for the stakes of ``wallet: operator`` tables (the API process's; payouts need none)
        self.wallet: SeamlessWallet | None = None

    # ---- tables and rounds -----------------------------------------------------------

    def create_table(
        self,
        table_id: str,
        currency: str = "THB",
        settings: dict[str, Any] | None = None,
        game: str = "pokdeng",
        video_url_template: str = "",
        allow_return_over_100: bool = False,
        wallet: str = INTERNAL,
        verify: str = checks.OFF,
        verify_window_ms: int = 3000,
        manual_cards: bool = False,
    ) -> None:
        """A new table. Settings that let a house bet return 100 % or more are refused unless
        ``allow_return_over_100`` (``services.rounds.returns``). ``wallet``: ``internal`` (the studio's ledger) or
        ``operator`` (the operator's wallet: ``services.wallet.seamless``), fixed for the table's life. ``verify``: the
        shoe + camera cross-check (``services.rounds.checks``; a room dealt online has no shoe to check)."""
        port = game_named(game)
        checks.checked_setting(verify, verify_window_ms)
        table_settings = port.settings(settings or {})
        validate_currency(currency)
        template = checked_template(video_url_template)
        if wallet not in WALLETS:
            raise RoundError(f"wallet must be one of {', '.join(WALLETS)}, got {wallet!r}")
        if wallet == OPERATOR and not adapter(game).operator_wallet:
            raise RoundError(
                f"a {game} table cannot use the operator's wallet: its players can lose more than they staked"
            )
        check_returns(table_id, game, table_settings, allow_return_over_100)

        def work(session: Session) -> None:
            if session.get(GameTable, table_id) is not None:
                raise RoundError(f"table {table_id!r} already exists")
            raw = json.dumps(port.settings_dict(table_settings))
            session.add(
                GameTable(
                    id=table_id, game=game, currency=currency, settings=raw, video_url_template=template,
                    allow_return_over_100=allow_return_over_100, wallet=wallet, verify=verify,
                    verify_window_ms=verify_window_ms, manual_cards=manual_cards,
                )
            )  # fmt: skip

        run_transaction(self.sessions, work)

    def change_settings(
        self, table_id: str, settings: dict[str, Any] | None, allow_return_over_100: bool | None = None
    ) -> None:
        """New settings for the table's next rounds (a round keeps the settings it opened with), and/or the return
        override; checked as at creation."""

        def work(session: Session) -> None:
            table = locked_table(session, table_id)
            port = game_named(table.game)
            table_settings = port.settings(json.loads(table.settings) if settings is None else settings)
            allow = table.allow_return_over_100 if allow_return_over_100 is None else allow_return_over_100
            check_returns(table_id, table.game, table_settings, allow)
            table.settings = json.dumps(port.settings_dict(table_settings))
            table.allow_return_over_100 = allow

        run_transaction(self.sessions, work)

    def set_video_url_template(self, table_id: str, video_url_template: str) -> None:
        """Where operators watch the table's video from now on (no money or round depends on it)."""
        template = checked_template(video_url_template)

        def work(session: Session) -> None:
            table = locked_table(session, table_id)
            table.video_url_template = template

        run_transaction(self.sessions, work)

    def set_manual_cards(self, table_id: str, allowed: bool) -> None:
        """Whether a card the shoe cannot read may be entered by hand, on two operators' word
        (``services.rounds.manual``)."""

        def work(session: Session) -> None:
            locked_table(session, table_id).manual_cards = allowed

        run_transaction(self.sessions, work)

    def open_round(self, table_id: str, video_ref: str = "") -> str:
        def work(session: Session) -> str:
            table = locked_table(session, table_id)
            self.fenced(session, table_id)
            held = session.scalar(
                select(DeckReport.id).where(DeckReport.table_id == table_id, DeckReport.status == DECK_HELD).limit(1)
            )
            if held is not None:
                raise TableHeldError(
                    f"table {table_id} is held: its last deck was not whole (deck report #{held}); an operator "
                    f"acknowledges the report first (POST /v1/operator/decks/{held}/acknowledge)"
                )
            unfinished = session.scalar(
                select(Round.id).where(Round.table_id == table_id, Round.phase.not_in(FINISHED))
            )
            if unfinished is not None:
                raise BettingClosedError(f"table {table_id}: round {unfinished} is not finished yet")
            number = (
                session.scalar(
                    select(Round.number).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1)
                )
                or 0
            ) + 1
            port = game_named(table.game)
            settings = port.settings(json.loads(table.settings))
            engine = port.new_round(settings)
            first = port.expecting(engine)
            now = self.clock.now()
            window = now + timedelta(milliseconds=first.ms) if isinstance(first, Window) else None
            round_id = round_id_of(table_id, number)
            round_ = Round(
                id=round_id, table_id=table_id, number=number, phase=port.phase(engine),
                settings=table.settings, opened_at=now, betting_closes_at=window or now,
                window_closes_at=window, video_ref=video_ref, log_length=0,
                verify=checks.OFF if port.deals_online(settings) else table.verify,
                verify_window_ms=table.verify_window_ms,
            )  # fmt: skip
            if port.deals_online(settings):  # the deck is fixed, and its commitment public, before anyone acts
                shuffle = Shuffle.new()
                round_.shuffle_commitment = shuffle.commitment()
                round_.shuffle_deck = ",".join(str(card) for card in shuffle.deck)
                round_.shuffle_salt = shuffle.salt
            session.add(round_)
            session.flush()
            adapter(port.name).opened(self, session, round_, engine)
            return round_id

        return run_transaction(self.sessions, work)

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

    def table_info(self, table_id: str) -> TableInfo:
        """``table`` outside a transaction: from the cache, a session opened only on the first look-up."""
        info = self._tables.get(table_id)
        if info is not None:
            return info
        with self.sessions() as session:
            return self.table(session, table_id)

    def game_of(self, session: Session, round_: Round) -> Game[Any, Any]:
        return game_named(self.table(session, round_.table_id).game)

    def adapter_of(self, session: Session, round_: Round) -> Adapter:
        return adapter(self.table(session, round_.table_id).game)

    def most_cards(self, table_id: str) -> int:
        """The most cards one round of the table's game takes from the shoe (none when it deals online)."""
        port, settings = self._table_settings(table_id)
        return 0 if port.deals_online(settings) else port.most_cards(settings)

    def decks(self, table_id: str) -> int:
        """How many decks the table's shoe holds (its game says, from the table's settings)."""
        port, settings = self._table_settings(table_id)
        return port.decks(settings)

    def deals_online(self, table_id: str) -> bool:
        """The table's rooms are dealt from a committed server shuffle: no shoe."""
        port, settings = self._table_settings(table_id)
        return port.deals_online(settings)

    def _table_settings(self, table_id: str) -> tuple[Game[Any, Any], Any]:
        with self.sessions() as session:
            table = session.get(GameTable, table_id)
            if table is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            port = game_named(table.game)
            return port, port.settings(json.loads(table.settings))

    # ---- the one command path ---------------------------------------------------------

    def deal(
        self,
        round_id: str,
        card: Card,
        actor: str = "shoe",
        also: Callable[[Session], None] | None = None,
        along: Along | None = None,
    ) -> Applied:
        """Deal the next card; ``also(session)`` writes in the same transaction (the controller's journal), ``along``
        runs first with the round locked (a proposal's decision)."""
        return self.command(round_id, lambda port: port.deal(card), actor, also=also, along=along)

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
            round_ = self.locked_round(session, round_id)
            if along is not None:
                along(session, round_)
            port = self.game_of(session, round_)
            engine = self.engines.take(session, round_, port)
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
        public = port.view(engine, PUBLIC)
        advanced(session, round_, engine, port, public)
        return Applied(
            round_.id, port.name, round_.phase, events, round_.log_length, round_.window_closes_at,
            round_.settled_at or round_.voided_at, port.expecting(engine), tuple(port.cards(engine)),
            port.hidden(engine, PUBLIC), state_header(round_), {"public": public, "dealer": port.view(engine, DEALER)},
            engine, round_.verify, round_.verify_window_ms,
            checks.open_of(session, round_.id) if round_.verify != checks.OFF else (),
        )  # fmt: skip

    def act(self, player: str, round_id: str, name: str, body: Any, key: str | None) -> Any:
        """A player's action ``name`` in the round, as the round's game defines it."""
        game = self._round_games.get(round_id)
        if game is None:
            with self.sessions() as session:
                game = session.scalar(
                    select(GameTable.game).join(Round, Round.table_id == GameTable.id).where(Round.id == round_id)
                )
            if game is None:
                raise NotFoundError(f"round {round_id!r} does not exist")
            if len(self._round_games) >= SETTINGS_CACHE:
                self._round_games.clear()
            self._round_games[round_id] = game
        action = next((a for a in adapter(game).actions if a.name == name), None)
        if action is None:
            raise NotFoundError(f"round {round_id} is a {game} round: it has no action {name!r}")
        return action.run(self, player, round_id, body, key)

    def profile(self, player: str) -> dict[str, Any]:
        """A player's settings in every game (``/v1/me``)."""
        profile: dict[str, Any] = {}
        for each in every_adapter():
            profile |= each.profile(self, player)
        return profile

    def set_profile(self, player: str, values: dict[str, Any]) -> None:
        """Change a player's settings; each goes to the game that has it."""
        for name, value in values.items():
            owner = next((a for a in every_adapter() if name in a.profile_settings), None)
            if owner is None:
                raise RoundError(f"no game has a player setting {name!r}")
            owner.set_profile(self, player, name, value)

    # ---- reading a round --------------------------------------------------------------

    def latest(self, table_id: str) -> Applied | None:
        """The table's latest round as the database has it (the controller's view of it)."""

        def work(session: Session) -> Applied | None:
            round_ = session.scalar(
                select(Round).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1)
            )
            if round_ is None:
                return None
            engine = self.engines.take(session, round_, self.game_of(session, round_))
            return self.applied(session, round_, [], engine)

        return self.run(work)

    def seat_view(self, table_id: str, seat: str, player_id: str) -> dict[str, Any]:
        """``player_id``'s own view of the table's current round, with their hidden cards, if they hold ``seat``."""
        with self.sessions() as session:
            round_ = self._current(session, table_id)
            if round_ is None:
                raise ForbiddenError(f"table {table_id} has no round yet: seat {seat} is nobody's")
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                if port.seats(engine).get(seat) != player_id:
                    raise ForbiddenError(f"seat {seat} of round {round_.id} is not {player_id}'s")
                return as_seen(round_, {"seat": seat} | port.view(engine, viewer(player_id)))

    def seats(self, round_id: str) -> dict[str, str]:
        """Who holds each seat of the round (games with seats; seat -> player)."""
        with self.sessions() as session:
            round_ = stored_round(session, round_id)
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                return port.seats(engine)

    def player_view(self, table_id: str, player_id: str) -> dict[str, Any]:
        """What of the table's current round is ``player_id``'s own (their wagers, offers, the choice that is
        theirs to make), from the round's game adapter; no card the public may not see."""
        with self.sessions() as session:
            round_ = self._current(session, table_id)
            if round_ is None:
                return {"v": 1, "round_id": None, "table_id": table_id, "phase": None, "you": {}}
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                you = adapter(port.name).yours(self, session, round_, engine, player_id)
                return as_seen(round_, {"phase": port.phase(engine), "you": you})

    def _current(self, session: Session, table_id: str) -> Round | None:
        """The table's latest round; None before its first (an unknown table is a ``NotFoundError``)."""
        round_ = session.scalar(select(Round).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1))
        if round_ is None:
            self.table(session, table_id)
        return round_

    @contextmanager
    def reading(self, session: Session, round_: Round) -> Iterator[Any]:
        """The cached engine of ``round_`` to read (never change) inside the block."""
        port = self.game_of(session, round_)
        engine = self.engines.take(session, round_, port)
        try:
            yield engine
        finally:
            self.engines.give_back(round_.id, round_.log_length, engine, port)

    # ---- operator corrections ---------------------------------------------------------

    def void(self, round_id: str, reason: str, actor: str, along: Along | None = None) -> Applied:
        """Void: every pending hold goes back; a settled round's results are reversed by adjustments.

        ``along(session, round)`` runs first in the same transaction, the round locked (a proposal's decision)."""

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            if along is not None:
                along(session, round_)
            port = self.game_of(session, round_)
            engine = self.engines.take(session, round_, port)
            was_settled = port.nets(engine) if round_.settled_at is not None else None
            events = self.append(session, round_, engine, port.void(reason), actor)
            ledger = self.ledger(session, round_.table_id)
            ledger.void_holds(round_id)
            owed = {}
            for player, net in sorted((was_settled or {}).items()):
                owed[player] = ledger.adjust(player, -net, round_id, f"void: {reason}")
            if self.table(session, round_.table_id).wallet == OPERATOR:
                if was_settled is None:
                    roll_back_stakes(session, ledger, round_id, f"void: {reason}")
                else:
                    self._mirror_adjustments(session, ledger, round_, owed, "void", f"void: {reason}")
            round_.voided_at = self.clock.now()
            return self.applied(session, round_, events, engine)

        return self.run(work)

    def recalculate(
        self, round_id: str, cards: dict[int, Card], video_ref: str, actor: str, along: Along | None = None
    ) -> dict[str, int]:
        """Correct misread cards of a settled round from the video; post the difference only.

        ``cards`` maps the index of a dealt card (0-based, shoe order) to the card the video shows.
        A correction that would have changed the flow of the round is refused: such a round must be voided.
        Returns each player's adjustment. ``along`` as for ``void``.
        """

        def work(session: Session) -> dict[str, int]:
            round_ = self.locked_round(session, round_id)
            if along is not None:
                along(session, round_)
            port = self.game_of(session, round_)
            old = self.engines.take(session, round_, port)
            new, codes = self._corrected(round_, port, old, cards)
            before, after = port.nets(old), port.nets(new)
            ledger = self.ledger(session, round_.table_id)
            changes = {p: after.get(p, 0) - before.get(p, 0) for p in sorted(set(before) | set(after))}
            memo = f"recalculated from video {video_ref}"
            owed = {player: ledger.adjust(player, delta, round_id, memo) for player, delta in changes.items()}
            self._log(session, round_, {"type": RECALCULATE, "cards": codes, "video_ref": video_ref}, actor)
            if self.table(session, round_.table_id).wallet == OPERATOR:
                cause = f"correction{round_.log_length}"
                self._mirror_adjustments(session, ledger, round_, owed, cause, memo)
            round_.result = stored_result(port, new)
            self.adapter_of(session, round_).settled(self, session, round_, new)
            advanced(session, round_, new, port)
            return {p: d for p, d in changes.items() if d}

        return self.run(work)

    def preview_correction(self, round_id: str, cards: dict[int, Card]) -> dict[str, Any]:
        """What ``recalculate`` would change, without changing anything: the result before and after, and per player
        the round's net before and after and the adjustment. Refused as ``recalculate`` would refuse it."""
        with self.sessions() as session:
            round_ = stored_round(session, round_id)
            port = self.game_of(session, round_)
            with self.reading(session, round_) as old:
                new, _codes = self._corrected(round_, port, old, cards, dealt_only=round_.phase == checks.VERIFYING)
                before, after = port.nets(old), port.nets(new)
                result_before = port.result(old)
            players = {}
            for player in sorted(set(before) | set(after)):
                was, now = before.get(player, 0), after.get(player, 0)
                players[player] = {"before": was, "after": now, "adjustment": now - was}
            return {"result_before": result_before, "result_after": port.result(new), "players": players}

    def _corrected(
        self, round_: Round, port: Game[Any, Any], old: Any, cards: dict[int, Card], dealt_only: bool = False
    ) -> tuple[Any, dict[str, str]]:
        """The settled round replayed with ``cards`` (shoe index → card), and the codes as logged; refused when the
        round is not settled (``dealt_only``: not dealt to its end), an index names no dealt card, or the correction
        would change the deal's flow."""
        round_id = round_.id
        if port.payouts(old) is None or (round_.settled_at is None and not dealt_only):
            raise RecalculationRefusedError(f"round {round_id} is not settled (phase {round_.phase})")
        dealt = len(port.cards(old))
        bad = [index for index in cards if not 0 <= index < dealt]
        if bad:
            raise RecalculationRefusedError(f"round {round_id}: no dealt card at index {bad[0]} (0–{dealt - 1})")
        codes = {str(index): str(card) for index, card in cards.items()}
        settings = self.round_settings(round_id, round_.settings, port)
        try:
            new = port.replay(corrected(port, list(port.commands(old)), codes), settings)
        except ValueError as error:
            raise FlowChangedError(f"round {round_id}: the correction changes the deal ({error}); void it") from None
        if port.payouts(new) is None or port.flow(new) != port.flow(old):
            raise FlowChangedError(
                f"round {round_id}: the correction changes who draws, insurance or early settlement; void it"
            )
        return new, codes

    # ---- the shoe + camera cross-check (``services.rounds.checks``) -------------------

    def change_verify(self, table_id: str, verify: str | None, window_ms: int | None = None) -> None:
        """The table's cross-check (off, warn, hold) and window from its next round on."""
        run_transaction(self.sessions, lambda session: checks.change_setting(session, table_id, verify, window_ms))

    def camera_saw(
        self, round_id: str, position: int, card: Card | None, confidence: float | None = None, crop: bytes = b""
    ) -> Applied:
        """The controller's outcome of a pending check: the camera saw ``card`` (None: nothing within the window).
        A held round whose every check is now settled is settled in the same transaction."""

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            check = checks.locked(session, round_id, position)
            if check.status != checks.PENDING:
                raise checks.CheckError(f"round {round_id}: the card at position {position} is {check.status} already")
            check.checked_at = self.clock.now()
            if card is None:
                check.status = checks.UNSEEN
            else:
                check.status = checks.AGREED if str(card) == check.card else checks.MISMATCH
                check.camera_card, check.camera_confidence, check.camera_crop = str(card), confidence, crop or None
            return self._after_check(session, round_, None)

        return self.run(work)

    def confirm_read(self, round_id: str, position: int, read: str, actor: str, reason: str) -> Applied:
        """An operator's word on a card the camera did not confirm: which read is right (``shoe`` or ``camera``), who
        and why, in the round's log. The camera's read replaces the shoe's as a correction of the dealt round (one
        that would change the deal's flow is refused: void the round instead)."""
        if read not in checks.READS:
            raise checks.VerifySettingError(f"read must be shoe or camera, got {read!r}")
        if not reason.strip():
            raise checks.VerifySettingError("say why (reason): what the video shows")

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            check = checks.locked(session, round_id, position)
            where = f"round {round_id}: the card at position {position}"
            if check.status in checks.SETTLED_BY_CHECKS:
                by = f" by {check.confirmed_by}" if check.confirmed_by else " by the camera"
                raise checks.CheckError(f"{where} is {check.status} already{by}")
            if check.status == checks.PENDING:
                raise checks.CheckError(f"{where} is still being checked (until {aware(check.due_at).isoformat()})")
            if round_.voided_at is not None:
                raise checks.CheckError(f"{where}: the round is void, nothing to confirm")
            port = self.game_of(session, round_)
            engine = self.engines.take(session, round_, port)
            entry = {"type": checks.VERIFIED, "position": position, "shoe": check.card, "camera": check.camera_card,
                     "read": read, "reason": reason}  # fmt: skip
            correction: dict[int, Card] = {}
            if read == "camera":
                if check.camera_card is None:
                    raise checks.CheckError(f"{where}: the camera saw none; confirm the shoe's read or void the round")
                if round_.settled_at is not None or round_.voided_at is not None:
                    raise checks.CheckError(f"{where}: the round is over; correct it with a proposal (four eyes)")
                if port.payouts(engine) is None:
                    raise checks.CheckError(f"{where}: the round is still dealt; confirm the camera once it is dealt")
                correction = {position: Card.from_code(check.camera_card)}
            self._log(session, round_, entry, actor)
            if correction:
                engine, codes = self._corrected(round_, port, engine, correction, dealt_only=True)
                self._log(session, round_, {"type": RECALCULATE, "cards": codes, "video_ref": "camera check"}, actor)
                advanced(session, round_, engine, port)
            check.status, check.confirmed_read, check.confirmed_by = checks.CONFIRMED, read, actor
            check.confirmed_why, check.confirmed_at = reason, self.clock.now()
            return self._after_check(session, round_, engine)

        return self.run(work)

    def _after_check(self, session: Session, round_: Round, engine: Any) -> Applied:
        port = self.game_of(session, round_)
        engine = self.engines.take(session, round_, port) if engine is None else engine
        if round_.phase == checks.VERIFYING:
            self._settle_when_checked(session, round_, engine, port)
        return self.applied(session, round_, [], engine)

    def check_crop(self, round_id: str, position: int) -> bytes:
        with self.sessions() as session:
            return checks.crop(session, round_id, position)

    # ---- helpers for adapters ---------------------------------------------------------

    def run(self, work: Callable[[Session], T]) -> T:
        """One transaction; the engines it advanced and the account ids it found are cached only after the commit."""
        advanced: dict[str, tuple[int, Any, Game[Any, Any], dict[str, Any] | None]] = {}
        found: dict[tuple[str, str, str], int] = {}

        def attempt(session: Session) -> T:
            advanced.clear()
            found.clear()
            value = work(session)
            advanced.update(session.info.pop(ADVANCED, {}))
            found.update(self.accounts.pending(session))
            return value

        value = run_transaction(self.sessions, attempt)
        for round_id, (length, engine, port, view) in advanced.items():
            self.engines.give_back(round_id, length, engine, port, view)
        self.accounts.remember(found)
        return value

    def locked_round(self, session: Session, round_id: str) -> Round:
        round_ = session.scalar(select(Round).where(Round.id == round_id).with_for_update())
        if round_ is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        self.fenced(session, round_.table_id)
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

    # ---- internals --------------------------------------------------------------------

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
        round_.log_length += 1
        session.add(
            RoundLogEntry(
                round_id=round_.id, seq=round_.log_length, command=json.dumps(entry), actor=actor,
                created_at=self.clock.now(),
            )
        )  # fmt: skip
        session.flush()


def advanced(
    session: Session, round_: Round, engine: Any, port: Game[Any, Any], view: dict[str, Any] | None = None
) -> None:
    """Note an engine this transaction holds at the round's log length: the cache gets it after the commit."""
    session.info.setdefault(ADVANCED, {})[round_.id] = (round_.log_length, engine, port, view)


def stored_result(port: Game[Any, Any], engine: Any) -> str:
    """What a settled round keeps for its readers: the game's own result, and each player's net in money (``nets``:
    what a player's history shows, whatever the game's result calls it)."""
    return json.dumps((port.result(engine) or {}) | {"nets": port.nets(engine)})


def result_nets(result: Any) -> dict[str, int]:
    """Each player's net in money from a stored result (``nets``; a Pok Deng round stored before it: ``players``)."""
    if not isinstance(result, dict):
        return {}
    nets: dict[str, int] = result.get("nets") or result.get("players") or {}
    return nets


def round_id_of(table_id: str, number: int) -> str:
    return f"{table_id}-{number}"


def table_of_round(round_id: str) -> str:
    """The table of a round id (``round_id_of``'s inverse: table ids may hold dashes, numbers do not)."""
    return round_id.rsplit("-", 1)[0]


def state_header(round_: Round) -> dict[str, Any]:
    """What the public state says of a round besides its engine's view (the controller publishes the same)."""
    return {
        "v": 1,
        "round_id": round_.id,
        "table_id": round_.table_id,
        "number": round_.number,
        "opened_at": aware(round_.opened_at).isoformat(),
        "betting_closes_at": aware(round_.betting_closes_at).isoformat(),
        "window_closes_at": aware(round_.window_closes_at).isoformat() if round_.window_closes_at else None,
        "video_ref": round_.video_ref,
    } | _shuffle(round_)


def as_seen(round_: Round, view: dict[str, Any]) -> dict[str, Any]:
    """A view of the round's engine under the round's own fields: what every reader of a round is given."""
    return state_header(round_) | view | _held(round_.phase)


def _held(phase: str) -> dict[str, Any]:
    """A round its cross-check holds says so, whatever its engine's phase: its result is not final yet."""
    return {"phase": checks.VERIFYING} if phase == checks.VERIFYING else {}


def _shuffle(round_: Round) -> dict[str, Any]:
    """A room dealt online: the commitment while the round runs, and the deck and salt once it is over."""
    if round_.shuffle_commitment is None:
        return {}
    if round_.settled_at is None and round_.voided_at is None:
        return {"shuffle": {"commitment": round_.shuffle_commitment}}
    deck = (round_.shuffle_deck or "").split(",")
    return {"shuffle": {"commitment": round_.shuffle_commitment, "deck": deck, "salt": round_.shuffle_salt}}
