"""Pok Deng's adapter: bet slips, insurance, draw/stand decisions and auto-draw thresholds.

Bets serialize with the close of betting on the round row: bets take a shared lock, the close an
exclusive one, so a bet is either fully in before the close or refused after it. A bet slip is
the hot path (every player, many times a round): it runs prebuilt Core statements on the
session's connection, with no ORM objects, and the wagers enter the round's log only when betting
closes (in order of first placement).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, Field
from sqlalchemy import Connection, Row, Table, bindparam, insert, select, update
from sqlalchemy.orm import Session

from services.games.base import Game, Window
from services.games.pokdeng import (
    AwaitingDecision,
    AwaitingInsurance,
    Phase,
    PokDengRound,
    Position,
    Side,
    TableSettings,
)
from services.games.pokdeng import events as ev
from services.games.pokdeng.port import INSURANCE, POKDENG
from services.games.pokdeng.rtp_table import least_commission, table_returns
from services.ledger import idempotency
from services.ledger.models import Hold
from services.rounds.adapters import Action, Adapter, AppliedOut, Strict, applied_out
from services.rounds.clock import aware
from services.rounds.core import RoundCore
from services.rounds.engines import load
from services.rounds.errors import BettingClosedError, NotFoundError, RecalculationRefusedError
from services.rounds.models import Round, ThresholdChange, Wager
from services.rounds.records import Applied, stored_round
from services.rounds.stakes import Debit, staked

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
YOUR_WAGERS = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake, WAGERS.c.net)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player == bindparam("player"))
    .order_by(WAGERS.c.seq)
)
STORE_NETS = update(WAGERS).where(WAGERS.c.id == bindparam("wager_id")).values(net=bindparam("net"))


def _worst_case(commission_bps: int) -> dict[str, Any]:
    """The bet with the highest return at any threshold a decider may keep, at this commission."""
    found = []
    for threshold in range(1, 6):
        returns = table_returns(commission_bps, threshold)
        found += [(returns.player, "player", threshold), (returns.banker, "banker", threshold)]
        found += [
            (e, f"{side} {seat}", threshold) for seat, sides in returns.seats.items() for side, e in sides.items()
        ]
    estimate, bet, threshold = max(found, key=lambda item: item[0].ci95[1])
    return {"threshold": threshold, "bet": bet, **estimate.as_dict()}


# ---- the actions' bodies -----------------------------------------------------------------

Amount = Annotated[int, Field(gt=0, le=10**15, description="minor units")]
Seat = Literal["A", "B", "C"]


class BetIn(Strict):
    side: Literal["player", "banker"]
    seat: Seat
    stake: Amount


class BetSlipIn(Strict):
    bets: Annotated[list[BetIn], Field(min_length=1, max_length=3)]


class InsuranceIn(Strict):
    amount: Amount


class DecisionIn(Strict):
    seat: Seat
    choice: Literal["draw", "stand"]


class WagerOut(BaseModel):
    wager_id: str
    side: str
    seat: str
    stake: int


BALANCE = "the wallet's balance after it: the operator's on an operator's-wallet table (null if it did not say)"


class SlipOut(BaseModel):
    round_id: str
    wagers: list[WagerOut]
    balance: Annotated[int | None, Field(description=BALANCE)]


class InsuranceOut(BaseModel):
    round_id: str
    insurance: int
    balance: Annotated[int | None, Field(description=BALANCE)]


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


class PokDengAdapter(Adapter):
    operator_wallet = True
    player_page = "play"

    def __init__(self, game: Game[Any, Any]) -> None:
        super().__init__(game)
        self.actions = (
            Action("bets", BetSlipIn, SlipOut, self._bets_action, "Place or raise wagers on one side of the round "
                   "while betting is open; holds are taken atomically.", keyed=True, changes_state=False),
            Action("insurance", InsuranceIn, InsuranceOut, self._insurance_action,
                   "Buy insurance while the window is open; it is held like a wager and settles with the round.",
                   keyed=True),
            Action("decisions", DecisionIn, AppliedOut, self._decision_action,
                   "Draw or stand on the seat you decide for, before its window closes."),
        )  # fmt: skip

    # ---- bets -------------------------------------------------------------------------

    def place_bets(
        self, service: RoundCore, player: str, round_id: str, bets: Sequence[Bet], key: str
    ) -> dict[str, Any]:
        """Place or raise wagers on one side of the round; all are in, with their holds, or none (on an operator's
        wallet table, only once the operator has debited them: ``services.rounds.stakes``)."""
        request = {"op": "bets", "round": round_id, "bets": [[str(b.side), str(b.seat), b.stake] for b in bets]}

        def betting(session: Session) -> tuple[Row[Any, Any, Any, Any], datetime]:
            if not bets:
                raise BettingClosedError("a bet slip needs at least one bet")
            return self._betting_round(service, session.connection(), round_id)

        def plan(session: Session, round_: Row[Any, Any, Any, Any], now: datetime) -> Slip:
            """The slip against the player's own wagers (read under the player's lock when placing)."""
            settings = service.round_settings(round_id, round_.settings, POKDENG)
            own = session.connection().execute(OWN_WAGERS, {"round_id": round_id, "player": player}).all()
            return _plan_slip(settings, player, round_id, own, bets, now)

        def place(session: Session, debit: Debit | None) -> dict[str, Any]:
            stored = idempotency.begin(session, key, player, request)
            if stored is not None:
                return stored
            round_, now = betting(session)
            ledger = service.ledger(session, round_.table_id)
            wallet, locked = service.accounts.lock_player(session, ledger, player)  # the player's requests queue here
            slip = plan(session, round_, now)
            if debit is not None:
                holding = sum(amount for _, amount in slip.holds)
                locked = debit.mirror(session, ledger, player, round_id, wallet, locked, holding)
            holds = ledger.place_holds(player, round_id, slip.holds, locked)
            _write_wagers(session.connection(), slip, now)
            balance = holds.balances[wallet] if debit is None else debit.balance
            response = {"round_id": round_id, "wagers": slip.answer(), "balance": balance}
            return idempotency.finish(session, key, response)

        def amount(session: Session) -> int:
            return sum(amount for _, amount in plan(session, *betting(session)).holds)

        return staked(service, player, round_id, key, request, amount, place, "bet")

    def close_betting(self, service: RoundCore, round_id: str, actor: str = "controller") -> Applied:
        """Close betting: the round's wagers enter its log in order of first placement."""
        return service.close_window(round_id, actor, kind="betting")

    def close(
        self, service: RoundCore, session: Session, round_: Round, engine: PokDengRound, window: Window, actor: str
    ) -> list[Any]:
        if window.kind != "betting":
            return super().close(service, session, round_, engine, window, actor)
        wagers = session.scalars(select(Wager).where(Wager.round_id == round_.id).order_by(Wager.seq)).all()
        events: list[Any] = []
        for wager in wagers:
            command = ev.PlaceWager(wager.id, wager.player, Side(wager.side), Position(wager.seat), wager.stake)
            events += service.append(session, round_, engine, command, actor)
        thresholds = _thresholds(session, {w.player for w in wagers}, aware(round_.opened_at))
        return events + service.append(session, round_, engine, ev.CloseBetting(thresholds), actor)

    def settled(self, service: RoundCore, session: Session, round_: Round, engine: PokDengRound) -> None:
        """Each wager's net, for the players' history."""
        assert engine.result is not None
        rows = [{"wager_id": item.wager.wager_id, "net": item.net} for item in engine.result.wagers]
        if rows:
            session.connection().execute(STORE_NETS, rows)

    def yours(
        self, service: RoundCore, session: Session, round_: Round, engine: PokDengRound, player: str
    ) -> dict[str, Any]:
        """The player's wagers (from the first bet, before they enter the log), the insurance they may buy now
        and the amounts the rules allow, the draw/stand choice that is theirs to make, and their net once settled."""
        rows = session.connection().execute(YOUR_WAGERS, {"round_id": round_.id, "player": player}).all()
        expecting = engine.expecting
        offer: list[int] = []
        if isinstance(expecting, AwaitingInsurance) and player in expecting.eligible and player not in engine.insurance:
            offer = list(engine.insurance_amounts(player))
        decision = None
        if isinstance(expecting, AwaitingDecision) and expecting.decider == player:
            decision = {"seat": str(expecting.seat), "points": expecting.points, "threshold": expecting.threshold}
        wagers = [{"wager_id": w.id, "side": w.side, "seat": w.seat, "stake": w.stake, "net": w.net} for w in rows]
        return {
            "wagers": wagers,
            "insurance": engine.insurance.get(player),
            "insurance_offer": offer,
            "decision": decision,
            "net": engine.result.player_nets().get(player, 0) if engine.result is not None and rows else None,
        }

    def history(self, session: Session, round_: Round, player: str) -> dict[str, Any]:
        """The player's wagers in the round (side, seat, stake, net) and the insurance they bought."""
        rows = session.connection().execute(YOUR_WAGERS, {"round_id": round_.id, "player": player}).all()
        insurance = session.scalar(
            select(Hold.amount).where(Hold.round_id == round_.id, Hold.wager_id == INSURANCE + player)
        )
        wagers = [{"wager_id": w.id, "side": w.side, "seat": w.seat, "stake": w.stake, "net": w.net} for w in rows]
        return {"wagers": wagers, "insurance": insurance}

    def stakes(self, session: Session, round_: Round) -> list[dict[str, Any]]:
        """The round's wagers, in the order they were placed, each with its net once settled."""
        wagers = session.scalars(select(Wager).where(Wager.round_id == round_.id).order_by(Wager.seq))
        return [{"wager_id": w.id, "player": w.player, "side": w.side, "seat": w.seat, "stake": w.stake,
                 "net": w.net} for w in wagers]  # fmt: skip

    def page(self, settings: TableSettings) -> dict[str, Any]:
        """The chips to offer (the table's, or made from its stake limits) and the video stream."""
        return {"chips": list(settings.denominations()), "stream_url": settings.stream_url}

    def returns(self, settings: TableSettings) -> dict[str, Any]:
        """The player and banker sides (pooled and per seat) and insurance, every seat deciding by the table's default
        threshold (``services.games.pokdeng.rtp_table``); and the worst case over the thresholds a seat's decider may
        keep (1–5), which the guard does not refuse on but an operator must see: a decider who stands on 2 raises
        the banker side's return (collusion between a decider and a banker-side bettor)."""
        found = table_returns(settings.commission_bps, settings.default_threshold)
        bets = {"player": found.player, "banker": found.banker, "insurance": found.insurance}
        bets |= {f"{side} {seat}": found.seats[seat][side] for seat in "ABC" for side in ("player", "banker")}
        least = least_commission(settings.default_threshold)
        fix = (
            f"with commission_bps of at least {least} every bet returns under 100 %"
            if least is not None and least > settings.commission_bps
            else ""
        )
        return {
            "bets": {name: estimate.as_dict() for name, estimate in bets.items()},
            "fix": fix,
            "worst_case": _worst_case(settings.commission_bps),
        }

    # ---- insurance and decisions ------------------------------------------------------

    def buy_insurance(self, service: RoundCore, player: str, round_id: str, amount: int, key: str) -> dict[str, Any]:
        """Insurance is held like a wager (1 × its amount) and settles with the round."""
        request = {"op": "insurance", "round": round_id, "amount": amount}

        def checked(session: Session) -> tuple[Round, PokDengRound, ev.BuyInsurance]:
            round_ = service.locked_round(session, round_id)
            engine = service.engine(session, round_)
            service.check_window(round_)
            command = ev.BuyInsurance(player, amount)
            engine.verify(command)
            return round_, engine, command

        def place(session: Session, debit: Debit | None) -> dict[str, Any]:
            stored = idempotency.begin(session, key, player, request)
            if stored is not None:
                return stored
            round_, engine, command = checked(session)
            ledger = service.ledger(session, round_.table_id)
            wallet, locked = service.accounts.lock_player(session, ledger, player)
            if debit is not None:
                locked = debit.mirror(session, ledger, player, round_id, wallet, locked, amount)
            holds = ledger.place_holds(player, round_id, [(INSURANCE + player, amount)], locked)
            service.append(session, round_, engine, command, player)
            balance = holds.balances[wallet] if debit is None else debit.balance
            response = {"round_id": round_id, "insurance": amount, "balance": balance}
            return idempotency.finish(session, key, response)

        def insured(session: Session) -> int:
            checked(session)
            return amount

        return staked(service, player, round_id, key, request, insured, place, "insurance")

    def close_insurance(self, service: RoundCore, round_id: str, actor: str = "controller") -> Applied:
        return service.command(round_id, lambda _game: ev.CloseInsurance(), actor)

    def decide(self, service: RoundCore, player: str, round_id: str, seat: Position, draw: bool) -> Applied:
        return service.command(round_id, lambda _game: ev.Decide(seat, draw, player), player, window=True)

    def decision_timeout(self, service: RoundCore, round_id: str, seat: Position, actor: str = "controller") -> Applied:
        return service.command(round_id, lambda _game: ev.DecisionTimeout(seat), actor)

    # ---- thresholds -------------------------------------------------------------------

    def set_threshold(self, service: RoundCore, player: str, threshold: int) -> None:
        """A new auto-draw threshold applies from the next round the player joins."""
        if type(threshold) is not int or not 1 <= threshold <= 5:
            raise RecalculationRefusedError(f"threshold must be a whole number 1–5, got {threshold!r}")

        def work(session: Session) -> None:
            session.execute(
                insert(ThresholdChange).values(player=player, threshold=threshold, changed_at=service.clock.now())
            )

        service.run(work)

    def threshold(self, service: RoundCore, player: str) -> int:
        with service.sessions() as session:
            later = service.clock.now() + timedelta(microseconds=1)
            return _thresholds(session, {player}, later).get(player, 4)

    profile_settings = ("threshold",)

    def profile(self, service: RoundCore, player: str) -> dict[str, Any]:
        return {"threshold": self.threshold(service, player)}

    def set_profile(self, service: RoundCore, player: str, name: str, value: Any) -> None:
        self.set_threshold(service, player, value)

    def round(self, service: RoundCore, round_id: str) -> PokDengRound:
        """A private copy of the round's engine, replayed from its log (for the demo's players and report)."""
        with service.sessions() as session:
            round_ = stored_round(session, round_id)
            return cast(PokDengRound, load(session, round_, POKDENG))

    def _bets_action(self, service: RoundCore, player: str, round_id: str, body: BetSlipIn, key: str | None) -> Any:
        bets = [Bet(Side(bet.side), Position(bet.seat), bet.stake) for bet in body.bets]
        return SlipOut(**self.place_bets(service, player, round_id, bets, key or ""))

    def _insurance_action(
        self, service: RoundCore, player: str, round_id: str, body: InsuranceIn, key: str | None
    ) -> Any:
        return InsuranceOut(**self.buy_insurance(service, player, round_id, body.amount, key or ""))

    def _decision_action(
        self, service: RoundCore, player: str, round_id: str, body: DecisionIn, _key: str | None
    ) -> Any:
        return applied_out(self.decide(service, player, round_id, Position(body.seat), body.choice == "draw"))

    def _betting_round(
        self, service: RoundCore, connection: Connection, round_id: str
    ) -> tuple[Row[Any, Any, Any, Any], datetime]:
        """The round's row under a shared lock (the close of betting takes it exclusively), if betting is open."""
        round_ = connection.execute(BETTING_ROUND, {"round_id": round_id}).first()
        if round_ is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        now = service.clock.now()
        if round_.phase != Phase.BETTING or now >= aware(round_.betting_closes_at):
            raise BettingClosedError(f"round {round_id}: betting is closed (phase {round_.phase})")
        return round_, now


ADAPTER = PokDengAdapter(POKDENG)


class PokDengDesk:
    """The Pok Deng adapter bound to one round service: ``pokdeng(service).place_bets(...)``."""

    def __init__(self, service: RoundCore) -> None:
        self.service = service

    def place_bets(self, player: str, round_id: str, bets: Sequence[Bet], key: str) -> dict[str, Any]:
        return ADAPTER.place_bets(self.service, player, round_id, bets, key)

    def close_betting(self, round_id: str, actor: str = "controller") -> Applied:
        return ADAPTER.close_betting(self.service, round_id, actor)

    def buy_insurance(self, player: str, round_id: str, amount: int, key: str) -> dict[str, Any]:
        return ADAPTER.buy_insurance(self.service, player, round_id, amount, key)

    def close_insurance(self, round_id: str, actor: str = "controller") -> Applied:
        return ADAPTER.close_insurance(self.service, round_id, actor)

    def decide(self, player: str, round_id: str, seat: Position, draw: bool) -> Applied:
        return ADAPTER.decide(self.service, player, round_id, seat, draw)

    def decision_timeout(self, round_id: str, seat: Position, actor: str = "controller") -> Applied:
        return ADAPTER.decision_timeout(self.service, round_id, seat, actor)

    def set_threshold(self, player: str, threshold: int) -> None:
        ADAPTER.set_threshold(self.service, player, threshold)

    def threshold(self, player: str) -> int:
        return ADAPTER.threshold(self.service, player)

    def round(self, round_id: str) -> PokDengRound:
        return ADAPTER.round(self.service, round_id)


def pokdeng(service: RoundCore) -> PokDengDesk:
    return PokDengDesk(service)


def _thresholds(session: Session, players: set[str], before: datetime) -> dict[str, int]:
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
