"""The invariants the simulation checks after every step, each from what the database and the outputs show.

The checker reads the database on its own connection (never through the code under test's
caches) and keeps its own replay of the ledger: every transfer since the last step is applied to
a shadow copy of the balances and of each hold, and both must agree with the rows. A breach raises
``Violation`` naming what broke; the simulation adds the seed, the step and the trace.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Connection, Engine, Table, bindparam, func, select
from sqlalchemy.orm import Session, sessionmaker

from services.cards import FULL_DECK
from services.games.base import FINISHED, PUBLIC
from services.journal.models import DECK_OK, DeckReport, ShoeJournal
from services.journal.table import UNTRUSTED
from services.ledger.models import Account, AccountKind, Hold, HoldResolution, HoldStatus, Transfer
from services.rounds.adapters import Catalog
from services.rounds.engines import load
from services.rounds.models import GameTable, Round, Wager
from services.rounds.service import stored_result
from services.sim.room_checks import room_round
from services.sim.runs import Violation

TRANSFERS = cast(Table, Transfer.__table__)
TOTALS = select(
    Account.currency,
    func.sum(Account.balance),
    func.min(Account.balance).filter(Account.kind.in_([AccountKind.WALLET, AccountKind.HOLD])),
).group_by(Account.currency)
NEW_TRANSFERS = (
    select(
        TRANSFERS.c.id, TRANSFERS.c.debit_account_id, TRANSFERS.c.credit_account_id, TRANSFERS.c.amount,
        TRANSFERS.c.kind, TRANSFERS.c.hold_id, TRANSFERS.c.round_id, TRANSFERS.c.wager_id,
    )
    .where(TRANSFERS.c.id > bindparam("after"))
    .order_by(TRANSFERS.c.id)
)  # fmt: skip
ACCOUNTS_NAMED = select(Account.id, Account.kind, Account.owner).where(Account.id.in_(bindparam("ids", expanding=True)))
BALANCES = select(Account.id, Account.balance).where(Account.id.in_(bindparam("ids", expanding=True)))
HOLDS = select(Hold.id, Hold.amount, Hold.player, Hold.round_id).where(Hold.id.in_(bindparam("ids", expanding=True)))
RESOLUTIONS = (
    select(
        HoldResolution.hold_id, HoldResolution.status, HoldResolution.loss, HoldResolution.win,
        HoldResolution.commission, Hold.round_id, Hold.player, Hold.amount,
    )
    .join(Hold, Hold.id == HoldResolution.hold_id)
    .where(Hold.round_id.in_(bindparam("rounds", expanding=True)))
)  # fmt: skip

SETTLING = ("release", "loss", "win", "commission")  # the kinds a resolution's money moves under
NEW_JOURNAL = (
    select(
        ShoeJournal.id,
        ShoeJournal.table_id,
        ShoeJournal.card,
        ShoeJournal.disposition,
        ShoeJournal.round_id,
        ShoeJournal.shoe_id,
        ShoeJournal.boot_id,
    )
    .where(ShoeJournal.id > bindparam("after"))
    .order_by(ShoeJournal.id)
)
DECK_REPORT = select(DeckReport.seen, DeckReport.missing, DeckReport.doubled, DeckReport.status).where(
    DeckReport.ended_by == bindparam("journal_id")
)
ENDED = select(Round.id).where(Round.id.in_(bindparam("ids", expanding=True)), Round.phase.in_(FINISHED))
CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])[2-9TJQKA][SHDC](?![0-9A-Za-z])")
PLAYER_SIDE = frozenset({AccountKind.WALLET, AccountKind.HOLD})


@dataclass
class _Hold:
    amount: int = 0  # as placed
    placings: int = 0
    resolutions: int = 0
    player: str = ""


@dataclass
class Accepted:
    """What the players were told was accepted in one round."""

    stakes: dict[str, int] = field(default_factory=dict)  # stake id (a wager, a player's insurance) -> amount
    wagers: set[str] = field(default_factory=set)  # the stakes that are wagers (the rest: insurance)


class Checker:
    def __init__(self, sessions: sessionmaker[Session], games: Catalog) -> None:
        self.sessions = sessions
        self.games = games
        self.engine: Engine = sessions.kw["bind"]
        self.checks = 0
        self._transfer_id = 0
        self._journal_id = 0
        self._accounts: dict[int, tuple[str, str]] = {}  # id -> (kind, owner)
        self._balances: dict[int, int] = defaultdict(int)
        self._holds: dict[int, _Hold] = defaultdict(_Hold)
        self._resolved: set[int] = set()  # holds whose resolution the checker has read
        self._escrow: dict[str, int] = defaultdict(int)  # player -> pending holds (as the shadow replay says)
        self._decks: dict[str, Counter[str]] = defaultdict(Counter)  # table -> cards out of its current shoe fill
        self.decks: dict[str, int] = defaultdict(lambda: 1)  # table -> how many decks its shoe holds
        self._cut: set[str] = set()  # tables whose current shoe's cut card came out
        self._out: dict[str, Counter[str]] = defaultdict(Counter)  # table -> its shoe's cards out, refused ones too
        self.shoes: dict[str, str] = {}  # table -> its shoe
        self._round_cards: dict[str, set[str]] = defaultdict(set)
        self.face_down: dict[str, set[str]] = defaultdict(set)  # round -> its cards no one may see yet
        self._alerts_before: dict[str, set[tuple[str, str]]] = {}  # round -> alerts raised before its face-down card
        self._last_alerts: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.accepted: dict[str, Accepted] = defaultdict(Accepted)
        self.verified: set[str] = set()  # rounds whose money was checked at their end
        self.rooms: dict[str, str] = {}  # room table -> its game (players against each other: their own checks)
        self.roads: dict[str, tuple[str, Any]] = {}  # coup round -> (its phase, its roads) as last shown live
        self.views = 0

    # ---- after every step ----------------------------------------------------------------

    def after_step(self) -> list[str]:
        """Every invariant of the money and the cards; the rounds that ended since the last step."""
        self.checks += 1
        with self.engine.connect() as connection:  # Core statements on a bare connection: the cheapest read
            moved = self._money(connection)
            self._cards(connection)
        if not moved:
            return []
        with self.sessions() as session:
            return self._ended(session)

    def _money(self, connection: Connection) -> bool:
        """Whether money moved in the step."""
        for currency, total, lowest in connection.execute(TOTALS):
            if total != 0:
                raise Violation(f"money not conserved: the {currency} balances sum to {total}, not 0")
            if lowest is not None and lowest < 0:
                raise Violation(f"a {currency} wallet or escrow is below zero ({lowest})")
        rows = connection.execute(NEW_TRANSFERS, {"after": self._transfer_id}).all()
        if not rows:
            return False
        self._transfer_id = rows[-1].id
        unknown = {row.debit_account_id for row in rows} | {row.credit_account_id for row in rows}
        unknown -= set(self._accounts)
        if unknown:
            for account_id, kind, owner in connection.execute(ACCOUNTS_NAMED, {"ids": sorted(unknown)}):
                self._accounts[account_id] = (kind, owner)
        placed: set[int] = set()
        moved: Counter[tuple[str, str, str]] = Counter()  # (round, player, kind) -> what resolving holds moved
        for row in rows:
            self._balances[row.debit_account_id] -= row.amount
            self._balances[row.credit_account_id] += row.amount
            self._escrow_movement(row, placed, moved)
        self._resolutions(connection, moved)
        self._compare_balances(
            connection, {row.debit_account_id for row in rows} | {row.credit_account_id for row in rows}
        )
        self._compare_holds(connection, placed)
        return True

    def _escrow_movement(self, row: Any, placed: set[int], moved: Counter[tuple[str, str, str]]) -> None:
        debit_kind, owner = self._accounts[row.debit_account_id]
        credit_kind, credit_owner = self._accounts[row.credit_account_id]
        if row.kind == "hold" and debit_kind == AccountKind.WALLET and credit_kind == AccountKind.HOLD:
            hold = self._holds[row.hold_id]
            hold.placings += 1
            hold.amount += row.amount
            hold.player = owner
            placed.add(row.hold_id)
            self._escrow[owner] += row.amount
            return
        if debit_kind == AccountKind.HOLD:
            self._escrow[owner] -= row.amount
        resolving = debit_kind == AccountKind.HOLD or row.kind in ("win", "commission")  # not a loss past a hold
        if row.kind in SETTLING and resolving and row.round_id is not None:
            player = owner if debit_kind in PLAYER_SIDE else credit_owner
            moved[(row.round_id, player, row.kind)] += row.amount

    def _resolutions(self, connection: Connection, moved: Counter[tuple[str, str, str]]) -> None:
        """The holds resolved in the step: each once, as placed, and the transfers move what their rows say."""
        rounds = sorted({round_id for round_id, _player, _kind in moved})
        if not rounds:
            return
        said: Counter[tuple[str, str, str]] = Counter()
        for line in connection.execute(RESOLUTIONS, {"rounds": rounds}):
            if line.hold_id in self._resolved:
                continue
            self._resolved.add(line.hold_id)
            hold = self._holds.get(line.hold_id)
            where = f"hold {line.hold_id} of round {line.round_id}"
            if hold is None or hold.placings != 1 or hold.amount != line.amount or hold.player != line.player:
                raise Violation(f"{where} was resolved as {line.amount} of {line.player}'s, not as placed")
            hold.resolutions += 1
            if line.status == HoldStatus.VOIDED and (line.loss or line.win):
                raise Violation(f"{where} was voided, yet lost {line.loss} and won {line.win}")
            for kind, amount in zip(
                SETTLING, (line.amount - line.loss, line.loss, line.win, line.commission), strict=True
            ):
                said[(line.round_id, line.player, kind)] += amount
        for key in sorted(set(moved) | set(said)):
            if moved[key] != said[key]:
                round_id, player, kind = key
                raise Violation(
                    f"round {round_id}: {player}'s {kind} transfers moved {moved[key]}, its holds' resolutions "
                    f"say {said[key]} (each hold resolved exactly once)"
                )

    def _compare_balances(self, connection: Connection, accounts: set[int]) -> None:
        for account_id, balance in connection.execute(BALANCES, {"ids": sorted(accounts)}):
            if balance != self._balances[account_id]:
                kind, owner = self._accounts[account_id]
                raise Violation(
                    f"the {kind} account of {owner or 'the house'} holds {balance}, but its transfers sum to "
                    f"{self._balances[account_id]}"
                )
            kind, owner = self._accounts[account_id]
            if kind == AccountKind.HOLD and balance != self._escrow[owner]:
                raise Violation(
                    f"{owner}'s escrow holds {balance}, but their pending holds add up to {self._escrow[owner]}"
                )

    def _compare_holds(self, connection: Connection, placed: set[int]) -> None:
        if not placed:
            return
        for hold_id, amount, player, round_id in connection.execute(HOLDS, {"ids": sorted(placed)}):
            shadow = self._holds[hold_id]
            if shadow.placings != 1 or shadow.amount != amount or shadow.player != player:
                raise Violation(
                    f"hold {hold_id} of round {round_id} ({amount} of {player}'s) was placed {shadow.placings} "
                    f"times, {shadow.amount} in all"
                )

    def _cards(self, connection: Connection) -> None:
        rows = connection.execute(NEW_JOURNAL, {"after": self._journal_id}).all()
        for row in rows:
            self._journal_id = row.id
            if row.disposition == "deck":
                self._deck_reported(connection, row.id, row.table_id)
                self._decks[row.table_id].clear()
                self._out[row.table_id].clear()
                self._cut.discard(row.table_id)
                continue
            if row.disposition in ("cut", "cut_between"):
                self._cut.add(row.table_id)
                continue
            own = row.shoe_id == self.shoes.get(row.table_id) and not row.boot_id.startswith(UNTRUSTED)
            if row.card and own and row.disposition in ("dealt", "burn", "refused"):
                self._out[row.table_id][row.card] += 1
            elif row.disposition in ("dealt", "burn") and row.card:
                deck, decks = self._decks[row.table_id], self.decks[row.table_id]
                if deck[row.card] >= decks:
                    raise Violation(f"table {row.table_id}: card {row.card} left a shoe of {decks} deck(s) once more")
                deck[row.card] += 1
                if row.disposition == "dealt" and row.round_id:
                    cards = self._round_cards[row.round_id]
                    if row.card in cards and decks == 1:
                        raise Violation(f"round {row.round_id}: card {row.card} dealt twice")
                    cards.add(row.card)

    def _deck_reported(self, connection: Connection, journal_id: int, table: str) -> None:
        """The deck that ended is reported as the journal has it: every card of its shoe out (dealt, burned,
        refused) against its full decks; one not whole is held (or acknowledged since) — after a cut card, only a card
        out more often than the shoe holds it makes it not whole."""
        out = self._out[table]
        report = connection.execute(DECK_REPORT, {"journal_id": journal_id}).first()
        if not out:
            if report is not None:
                raise Violation(f"table {table}: a deck no card left was reported ({report.status})")
            return
        decks = self.decks[table]
        missing = " ".join(str(card) for card in FULL_DECK for _ in range(max(0, decks - out[str(card)])))
        doubled = " ".join(str(card) for card in FULL_DECK if out[str(card)] > decks)
        expected = (sum(out.values()), missing, doubled)
        if report is None or (report.seen, report.missing, report.doubled) != expected:
            raise Violation(f"table {table}: the deck that ended is reported as {report}, the journal says {expected}")
        whole = not doubled and (table in self._cut or not missing)
        if (report.status == DECK_OK) != whole:
            raise Violation(f"table {table}: a deck {'whole' if whole else 'not whole'} is {report.status}")

    def _ended(self, session: Session) -> list[str]:
        waiting = sorted(set(self.accepted) - self.verified)
        if not waiting:
            return []
        ended = session.scalars(ENDED, {"ids": waiting}).all()
        for round_id in ended:
            self.round_money(session, round_id)
        return list(ended)

    # ---- a round's money at its end ---------------------------------------------------------

    def round_money(self, session: Session, round_id: str) -> None:
        """Every accepted bet is in the round's settlement (or returned by its void), and nothing else is."""
        self.verified.add(round_id)
        round_ = session.get(Round, round_id)
        assert round_ is not None
        accepted = self.accepted[round_id]
        rows = {w.id: w for w in session.scalars(select(Wager).where(Wager.round_id == round_id))}
        if set(rows) != set(accepted.wagers):
            extra, missing = sorted(set(rows) - set(accepted.wagers)), sorted(set(accepted.wagers) - set(rows))
            raise Violation(f"round {round_id}: wagers never accepted {extra}, accepted but missing {missing}")
        holds: dict[str, list[Hold]] = defaultdict(list)  # a raised wager holds once per slip
        for hold in session.scalars(select(Hold).where(Hold.round_id == round_id)):
            holds[hold.wager_id].append(hold)
        lines = {
            line.hold_id: line
            for line in session.scalars(
                select(HoldResolution).join(Hold, Hold.id == HoldResolution.hold_id).where(Hold.round_id == round_id)
            )
        }
        voided = round_.phase == "void" and round_.settled_at is None
        wanted = HoldStatus.VOIDED if voided else HoldStatus.POSTED
        for wager_id, stake in sorted(accepted.stakes.items()):
            row = rows.get(wager_id)
            if row is not None and row.stake != stake:
                raise Violation(f"round {round_id}: wager {wager_id} accepted at {stake}, recorded at {row.stake}")
            mine = [lines.get(hold.id) for hold in holds.get(wager_id, [])]
            statuses = sorted({"pending" if line is None else line.status for line in mine}) or ["no hold"]
            if statuses != [wanted]:
                raise Violation(
                    f"round {round_id}: the holds of accepted stake {wager_id} are {statuses}, not {wanted} "
                    "(each hold resolved exactly once)"
                )
            net = sum(line.win - line.commission - line.loss for line in mine if line is not None)
            net += self._net(session, round_id, wager_id, holds[wager_id][0].player)
            expected = 0 if voided else (row.net if row is not None else net)
            if row is not None and not voided and row.net is None:
                raise Violation(f"round {round_id}: wager {wager_id} settled without a net")
            if net != expected:
                raise Violation(f"round {round_id}: stake {wager_id} moved {net} of the player's money, not {expected}")

    def _net(self, session: Session, round_id: str, wager_id: str, player: str) -> int:
        """What the transfers naming the stake moved into (+) or out of (−) the player's wallet and escrow (a loss
        past its holds; its resolutions say the rest)."""
        mine = {
            account_id
            for account_id, (kind, owner) in self._accounts.items()
            if owner == player and kind in PLAYER_SIDE
        }
        net = 0
        for debit, credit, amount in session.execute(
            select(TRANSFERS.c.debit_account_id, TRANSFERS.c.credit_account_id, TRANSFERS.c.amount).where(
                TRANSFERS.c.round_id == round_id, TRANSFERS.c.wager_id == wager_id
            )
        ):
            net += amount * ((credit in mine) - (debit in mine))
        return net

    # ---- what each audience is shown --------------------------------------------------------

    def hidden(self, table: str, round_id: str, cards: Iterable[object]) -> None:
        """The round's cards no one may see yet, as its engine has them now (the controller's round)."""
        now = {str(card) for card in cards}
        if now and round_id not in self._alerts_before:  # alerts raised before: they cannot name it
            self._alerts_before[round_id] = set(self._last_alerts[table])
        self.face_down[round_id] = now

    def view(self, audience: str, table: str, view: dict[str, Any], own: AbstractSet[str] = frozenset()) -> None:
        """No card the dealer dealt face down may appear in any output before its round ends (a seated player's own
        view: but their ``own`` cards)."""
        self.views += 1
        alerts = {(str(a.get("at")), str(a.get("message"))) for a in view.get("alerts", [])}
        if alerts:
            self._last_alerts[table] = alerts
        round_id = view.get("round_id")
        hidden = self.face_down.get(str(round_id))
        if not hidden or view.get("phase") in FINISHED:
            return
        before = self._alerts_before.get(str(round_id), set())
        shown = {key: value for key, value in view.items() if key != "alerts"}
        shown["alerts"] = [a for a in view.get("alerts", []) if (str(a.get("at")), str(a.get("message"))) not in before]
        leaked = (hidden - own) & set(_card_tokens(shown))
        if leaked:
            raise Violation(
                f"the {audience} view of round {round_id} ({view.get('phase')}) shows face-down card "
                f"{', '.join(sorted(leaked))} before its reveal"
            )

    # ---- at the end ---------------------------------------------------------------------------

    def final(self, tables: Iterable[str], shoes: dict[str, tuple[str, str, int]]) -> None:
        """Every round ended; each ended as its log replays; every shoe message journaled exactly once."""
        with self.sessions() as session:
            for table in tables:
                port = self.games.game(session.scalar(select(GameTable.game).where(GameTable.id == table)) or "")
                for round_ in session.scalars(select(Round).where(Round.table_id == table).order_by(Round.number)):
                    if round_.phase not in FINISHED:
                        raise Violation(f"round {round_.id} never ended: it is still {round_.phase}")
                    if round_.id not in self.verified:
                        self.round_money(session, round_.id)
                    engine = load(session, round_, port)
                    if port.phase(engine) != round_.phase:
                        raise Violation(
                            f"round {round_.id} is {round_.phase}, but its log replays to {port.phase(engine)}"
                        )
                    # (a round voided after its settlement keeps the result it was settled with, for the record)
                    if round_.phase != "void" and json.loads(round_.result or "null") != json.loads(
                        stored_result(port, engine)
                    ):
                        raise Violation(f"round {round_.id}: the stored result is not what its log replays to")
                    public = port.view(engine, PUBLIC)
                    self.view("public", table, public | {"round_id": round_.id})
                    phase, roads = self.roads.get(round_.id, ("", None))
                    if phase == round_.phase and roads != public.get("roads"):  # (a later view may have been lost)
                        raise Violation(f"round {round_.id}: the roads shown live are not those its log rebuilds")
                    if table in self.rooms:
                        room_round(session, round_, port, engine, self.rooms[table])
                shoe_id, boot_id, last = shoes[table]
                seqs = session.scalars(
                    select(ShoeJournal.seq).where(
                        ShoeJournal.table_id == table, ShoeJournal.shoe_id == shoe_id, ShoeJournal.boot_id == boot_id
                    )
                ).all()
                if sorted(seqs) != list(range(1, last + 1)):
                    missing = sorted(set(range(1, last + 1)) - set(seqs))
                    raise Violation(f"table {table}: shoe messages {missing[:10]} were never journaled")


def _card_tokens(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from CARD_TOKEN.findall(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _card_tokens(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _card_tokens(item)
