"""Pok Deng's adapter: its spots (the player or banker side of seat A, B or C) on the house games' shared bet path
(``services.rounds.house``), insurance, draw/stand decisions and auto-draw thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, Field
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from services.games.base import Game
from services.games.pokdeng import (
    AwaitingDecision,
    AwaitingInsurance,
    PokDengRound,
    Position,
    Side,
    TableSettings,
    collusion,
)
from services.games.pokdeng import events as ev
from services.games.pokdeng.model import SEATS
from services.games.pokdeng.port import INSURANCE, POKDENG
from services.games.pokdeng.rtp_table import least_commission, table_returns
from services.ledger import idempotency
from services.ledger.models import Hold
from services.rounds.adapters import Action, AppliedOut, Strict, applied_out
from services.rounds.clock import aware
from services.rounds.core import RoundCore
from services.rounds.engines import load
from services.rounds.errors import RecalculationRefusedError
from services.rounds.house import BALANCE, HouseAdapter, SpotBet
from services.rounds.models import Round, ThresholdChange
from services.rounds.records import Applied, stored_round
from services.rounds.stakes import Debit, staked


def _least_commission(settings: TableSettings) -> int | None:
    """The least commission under which every bet and every group on one seat returns under 100 %."""
    bets = least_commission(settings.default_threshold)
    groups = collusion.table_least_commission(settings.default_threshold, settings.min_stake, settings.max_stake)
    return None if bets is None or groups is None else max(bets, groups)


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


class InsuranceOut(BaseModel):
    round_id: str
    insurance: int
    balance: Annotated[int | None, Field(description=BALANCE)]


Bet = SpotBet  # a Pok Deng bet: on the player or banker side of seat A, B or C


class PokDengAdapter(HouseAdapter):
    def __init__(self, game: Game[Any, Any]) -> None:
        super().__init__(game)
        self.actions = (
            self.bets_action(BetSlipIn, "Place or raise wagers on one side of the round while betting is open; holds "
                             "are taken atomically."),
            Action("insurance", InsuranceIn, InsuranceOut, self._insurance_action,
                   "Buy insurance while the window is open; it is held like a wager and settles with the round.",
                   keyed=True),
            Action("decisions", DecisionIn, AppliedOut, self._decision_action,
                   "Draw or stand on the seat you decide for, before its window closes."),
        )  # fmt: skip

    # ---- bets -------------------------------------------------------------------------

    def wager_command(self, wager_id: str, player: str, bet: SpotBet) -> ev.PlaceWager:
        return ev.PlaceWager(wager_id, player, Side(bet.side), Position(bet.seat), bet.stake)

    def betting_closed(self, session: Session, round_: Round, players: set[str]) -> ev.CloseBetting:
        """Betting closes with each bettor's auto-draw threshold as it stood when the round opened."""
        return ev.CloseBetting(_thresholds(session, players, aware(round_.opened_at)))

    def hold(self, settings: TableSettings, bet: SpotBet) -> int:
        """A wager holds ``hold_multiple`` times its stake: a hand can lose its stake several times over."""
        return int(settings.hold_multiple * bet.stake)

    def close_betting(self, service: RoundCore, round_id: str, actor: str = "controller") -> Applied:
        """Close betting: the round's wagers enter its log in order of first placement."""
        return service.close_window(round_id, actor, kind="betting")

    def yours(
        self, service: RoundCore, session: Session, round_: Round, engine: PokDengRound, player: str
    ) -> dict[str, Any]:
        """The player's wagers and net (the house games'), the insurance they may buy now and the amounts the rules
        allow, the draw/stand choice that is theirs to make, and the seats they would decide but for a larger stake
        on the banker side (``outweighed``: the table's threshold decides those)."""
        expecting = engine.expecting
        offer: list[int] = []
        if isinstance(expecting, AwaitingInsurance) and player in expecting.eligible and player not in engine.insurance:
            offer = list(engine.insurance_amounts(player))
        decision = None
        if isinstance(expecting, AwaitingDecision) and expecting.decider == player:
            decision = {"seat": str(expecting.seat), "points": expecting.points, "threshold": expecting.threshold}
        own: dict[str, Any] = super().yours(service, session, round_, engine, player)
        # the seats whose largest player-side stake is theirs but whose banker side staked more: the table decides
        outweighed = [
            str(seat) for seat in SEATS
            if (backer := engine.backer(seat)) is not None and backer.player == player and engine.decider(seat) is None
        ]  # fmt: skip
        return own | {
            "insurance": engine.insurance.get(player), "insurance_offer": offer, "decision": decision,
            "outweighed": outweighed,
        }  # fmt: skip

    def history(self, session: Session, round_: Round, player: str) -> dict[str, Any]:
        """The player's wagers in the round (side, seat, stake, net) and the insurance they bought."""
        insurance = session.scalar(
            select(Hold.amount).where(Hold.round_id == round_.id, Hold.wager_id == INSURANCE + player)
        )
        own: dict[str, Any] = super().history(session, round_, player)
        return own | {"insurance": insurance}

    def page(self, settings: TableSettings) -> dict[str, Any]:
        """The chips to offer (the table's, or made from its stake limits) and the video stream."""
        return {"chips": list(settings.denominations()), "stream_url": settings.stream_url}

    def returns(self, settings: TableSettings) -> dict[str, Any]:
        """The player and banker sides (pooled and per seat) and insurance, every seat deciding by the table's default
        threshold (``services.games.pokdeng.rtp_table``); and ``pair``: the best return per unit staked together that
        any group of bettors reaches on one seat — a decider and friends on the banker side, any stakes, any Draw/
        Stand strategy the decision rule leaves them (``services.games.pokdeng.collusion``, exact). The guard
        refuses on every one of them."""
        found = table_returns(settings.commission_bps, settings.default_threshold)
        bets = {"player": found.player, "banker": found.banker, "insurance": found.insurance}
        bets |= {f"{side} {seat}": found.seats[seat][side] for seat in "ABC" for side in ("player", "banker")}
        group = collusion.worst_pair(
            collusion.kept(), settings.commission_bps, settings.default_threshold, settings.min_stake,
            settings.max_stake,
        )  # fmt: skip
        least = _least_commission(settings)
        fix = (
            f"with commission_bps of at least {least} every bet and every group on one seat returns under 100 %"
            if least is not None and least > settings.commission_bps
            else ""
        )
        group_bet = {"rtp": round(group.worst_pair_rtp, 6), "ci95": [round(group.worst_pair_rtp, 6)] * 2}
        return {
            "bets": {name: estimate.as_dict() for name, estimate in bets.items()} | {"group on one seat": group_bet},
            "fix": fix,
            "collusion": group.as_dict(),
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

    def _insurance_action(
        self, service: RoundCore, player: str, round_id: str, body: InsuranceIn, key: str | None
    ) -> Any:
        return InsuranceOut(**self.buy_insurance(service, player, round_id, body.amount, key or ""))

    def _decision_action(
        self, service: RoundCore, player: str, round_id: str, body: DecisionIn, _key: str | None
    ) -> Any:
        return applied_out(self.decide(service, player, round_id, Position(body.seat), body.choice == "draw"))


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
