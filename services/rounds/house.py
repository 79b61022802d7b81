"""The bet path of every house-banked game: slips of wagers on the game's spots, held atomically, on either wallet.

A game banked by the house declares its spots (a wager's ``side`` and ``seat``), the command that places a wager in
its engine, what a stake holds and the command that closes betting; the rest is shared here:

- **the slip** (``POST /v1/rounds/{id}/bets``) is the hot path: prebuilt Core statements on the session's connection,
  no ORM objects. It takes the round row under a shared lock (the close of betting takes it exclusively), so a bet is
  either fully in before the close or refused after it; the player's wallet lock serializes their own slips; a bet on a
  spot the player already has raises that wager. The engine judges the slip: a fresh round of the table's settings
  takes the player's wagers and the new bets, so every rule of the game (limits, sides) applies. Idempotent by key; on
  an operator's-wallet table the stake is debited there first (``services.rounds.stakes``).
- **the close of betting** writes the round's wagers into its log in order of first placement, then the game's close.
- **settlement** keeps each wager's net beside it, for the players' history, the audit and the ops page.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, cast

from pydantic import BaseModel, Field
from sqlalchemy import Connection, Row, Table, bindparam, insert, select, update
from sqlalchemy.orm import Session

from services.games.base import Game, GameError, Window
from services.ledger import idempotency
from services.rounds.adapters import Action, Adapter
from services.rounds.clock import aware
from services.rounds.core import RoundCore
from services.rounds.errors import BettingClosedError, NotFoundError, RoundError
from services.rounds.models import Round, Wager
from services.rounds.records import table_of_round
from services.rounds.stakes import Debit, Debited, Place, one_price, stake, staked, to_the_end, wallet_of
from services.wallet.seamless import OPERATOR, stake_transaction

if TYPE_CHECKING:
    from services.rounds.slips import SlipWriter

ROUNDS = cast(Table, Round.__table__)
WAGERS = cast(Table, Wager.__table__)
BETTING_ROUND = (
    select(ROUNDS.c.phase, ROUNDS.c.betting_closes_at, ROUNDS.c.table_id, ROUNDS.c.settings)
    .where(ROUNDS.c.id == bindparam("round_id"))
    .with_for_update(read=True)
)
OWN_WAGERS = (
    select(WAGERS.c.id, WAGERS.c.side, WAGERS.c.seat, WAGERS.c.stake, WAGERS.c.net)
    .where(WAGERS.c.round_id == bindparam("round_id"), WAGERS.c.player == bindparam("player"))
    .order_by(WAGERS.c.seq)
)
NEW_WAGERS = insert(WAGERS)
RAISE_WAGERS = (
    update(WAGERS)
    .where(WAGERS.c.id == bindparam("wager_id"))
    .values(stake=WAGERS.c.stake + bindparam("add"), updated_at=bindparam("now"))
)
STORE_NETS = update(WAGERS).where(WAGERS.c.id == bindparam("wager_id")).values(net=bindparam("net"))
BALANCE = "the wallet's balance after it: the operator's on an operator's-wallet table (null if it did not say)"


@dataclass(frozen=True, slots=True)
class SpotBet:
    """One bet of a slip: ``stake`` on a spot of the game (``side``, and ``seat`` where the game has seats)."""

    side: str
    seat: str
    stake: int


class WagerOut(BaseModel):
    wager_id: str
    side: str
    seat: str
    stake: int


class SlipOut(BaseModel):
    round_id: str
    wagers: list[WagerOut]
    balance: Annotated[int | None, Field(description=BALANCE)]


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

    def holding(self) -> int:
        return sum(amount for _, amount in self.holds)


class HouseAdapter(Adapter):
    """A house-banked game's adapter: its players stake on its spots, and the house takes every bet."""

    operator_wallet = True
    player_page = "play"
    betting_phase: ClassVar[str] = "betting"  # the engine's phase while bets are taken (with the betting window)

    def __init__(self, game: Game[Any, Any]) -> None:
        super().__init__(game)
        if not game.house_banked:
            raise GameError(f"game {game.name!r} is not banked by the house: it takes no wagers")

    # ---- what the game says -----------------------------------------------------------

    def wager_command(self, wager_id: str, player: str, bet: SpotBet) -> Any:
        """The engine's command that places (or raises, by ``wager_id``) the player's wager."""
        raise NotImplementedError

    def betting_closed(self, session: Session, round_: Round, players: set[str]) -> Any:
        """The engine's command that closes betting, once the round's wagers are in (``players``: who wagered)."""
        raise NotImplementedError

    def hold(self, settings: Any, bet: SpotBet) -> int:
        """What a bet holds of the player's money until the round settles: its stake, unless the game can lose more."""
        return bet.stake

    def bets_action(self, body: type[BaseModel], summary: str) -> Action:
        """The ``bets`` route: a slip whose ``bets`` each name a spot (``side``, ``seat``) and a ``stake``."""

        def spots(slip: Any) -> list[SpotBet]:
            return [SpotBet(str(bet.side), str(getattr(bet, "seat", "")), bet.stake) for bet in slip.bets]

        def run(service: RoundCore, player: str, round_id: str, slip: Any, key: str | None) -> SlipOut:
            writer = service.slip_writer  # the API's: slips that arrive together are written together
            if writer is not None and service.table_info(table_of_round(round_id)).wallet != OPERATOR:
                return SlipOut(**writer.submit(self, player, round_id, spots(slip), key or "").result())
            return SlipOut(**self.place_bets(service, player, round_id, spots(slip), key or ""))

        def soon(service: RoundCore, player: str, round_id: str, slip: Any, key: str | None) -> Awaitable[Any] | None:
            """The slip answered on the event loop (queued for the writer's batches; on an operator's-wallet table,
            its debit sent there meanwhile), if nothing on the way needs the database."""
            writer, table = service.slip_writer, service.known_table(table_of_round(round_id))
            if writer is None or table is None:
                return None
            if table.wallet != OPERATOR:
                placed = writer.submit(self, player, round_id, spots(slip), key or "", lambda answer: SlipOut(**answer))
                return asyncio.wrap_future(placed)
            if service.wallet is None:
                return None  # refused by the one-slip path, saying what is missing
            return self._staked_soon(service, writer, player, round_id, spots(slip), key or "", table.currency)

        return Action("bets", body, SlipOut, run, summary, keyed=True, changes_state=False, soon=soon)

    # ---- the shared path --------------------------------------------------------------

    def place_bets(
        self, service: RoundCore, player: str, round_id: str, bets: Sequence[SpotBet], key: str
    ) -> dict[str, Any]:
        """Place or raise the player's wagers: all are in, with their holds, or none (on an operator's wallet table,
        only once the operator has debited them: ``services.rounds.stakes``)."""
        request, amount, place = self._stake_parts(service, player, round_id, bets, key)
        writer = service.slip_writer

        def together(debited: Debited, alone: Callable[[], dict[str, Any]]) -> dict[str, Any]:
            assert writer is not None
            return cast(dict[str, Any], writer.submit(self, player, round_id, bets, key, debited=debited,
                                                      alone=alone).result())  # fmt: skip

        return staked(service, player, round_id, key, request, amount, place, "bet", together if writer else None)

    async def _staked_soon(
        self, service: RoundCore, writer: SlipWriter, player: str, round_id: str, bets: list[SpotBet], key: str,
        currency: str,
    ) -> SlipOut:  # fmt: skip
        """``place_bets`` of an operator's-wallet slip on the event loop: priced and placed in the writer's batches."""
        request, amount, place = self._stake_parts(service, player, round_id, bets, key)
        wallet = wallet_of(service, round_id)
        steps = writer.on_loop(self, player, round_id, bets, key, one_price(
            wallet, currency, player, round_id, key, request, amount, "bet"))  # fmt: skip
        flow = stake(service, wallet, stake_transaction(round_id, player, key), place, steps)
        return SlipOut(**await to_the_end(flow))

    def _stake_parts(
        self, service: RoundCore, player: str, round_id: str, bets: Sequence[SpotBet], key: str
    ) -> tuple[dict[str, Any], Callable[[Session], int], Place]:
        """A slip's idempotency request, its pricing and its placing (``services.rounds.stakes``)."""
        bets = [SpotBet(str(bet.side), str(bet.seat), bet.stake) for bet in bets]  # a game's enums as their names
        request = slip_request(round_id, bets)

        def betting(session: Session) -> tuple[Row[Any, Any, Any, Any], datetime]:
            if not bets:
                raise RoundError("a bet slip needs at least one bet")
            return self._betting_round(service, session.connection(), round_id)

        def plan(session: Session, round_: Row[Any, Any, Any, Any], now: datetime) -> Slip:
            """The slip against the player's own wagers (read under the player's lock when placing)."""
            settings = service.round_settings(round_id, round_.settings, self.game)
            own = session.connection().execute(OWN_WAGERS, {"round_id": round_id, "player": player}).all()
            return self._plan(settings, player, round_id, own, bets, now)

        def place(session: Session, debit: Debit | None) -> dict[str, Any]:
            stored = idempotency.begin(session, key, player, request)
            if stored is not None:
                return stored
            round_, now = betting(session)
            ledger = service.ledger(session, round_.table_id)
            wallet, locked = service.accounts.lock_player(session, ledger, player)  # the player's requests queue here
            slip = plan(session, round_, now)
            if debit is not None:
                locked = debit.mirror(session, ledger, player, round_id, wallet, locked, slip.holding())
            holds = ledger.place_holds(player, round_id, slip.holds, locked)
            _write(session.connection(), slip, now)
            balance = holds.balances[wallet] if debit is None else debit.balance
            response = {"round_id": round_id, "wagers": slip.answer(), "balance": balance}
            return idempotency.finish(session, key, response)

        def amount(session: Session) -> int:
            return plan(session, *betting(session)).holding()

        return request, amount, place

    def close(
        self, service: RoundCore, session: Session, round_: Round, engine: Any, window: Window, actor: str
    ) -> list[Any]:
        """The end of betting: the round's wagers enter its log in order of first placement, then the game's close."""
        if window.kind != "betting":
            return super().close(service, session, round_, engine, window, actor)
        wagers = session.scalars(select(Wager).where(Wager.round_id == round_.id).order_by(Wager.seq)).all()
        events: list[Any] = []
        for wager in wagers:
            command = self.wager_command(wager.id, wager.player, SpotBet(wager.side, wager.seat, wager.stake))
            events += service.append(session, round_, engine, command, actor)
        closing = self.betting_closed(session, round_, {wager.player for wager in wagers})
        return events + service.append(session, round_, engine, closing, actor)

    def settled(self, service: RoundCore, session: Session, round_: Round, engine: Any) -> None:
        """Each wager's net, kept beside it (a payout that is no wager — insurance — matches no row)."""
        rows = [{"wager_id": p.stake_id, "net": p.net} for p in self.game.payouts(engine) or []]
        if rows:
            session.connection().execute(STORE_NETS, rows)

    def wagers(self, session: Session, round_id: str, player: str) -> list[dict[str, Any]]:
        """The player's wagers in the round, from their first bet: spot, stake, and net once settled."""
        rows = session.connection().execute(OWN_WAGERS, {"round_id": round_id, "player": player}).all()
        return [{"wager_id": w.id, "side": w.side, "seat": w.seat, "stake": w.stake, "net": w.net} for w in rows]

    def yours(self, service: RoundCore, session: Session, round_: Round, engine: Any, player: str) -> dict[str, Any]:
        wagers = self.wagers(session, round_.id, player)
        settled = self.game.payouts(engine) is not None
        return {"wagers": wagers, "net": self.game.nets(engine).get(player, 0) if settled and wagers else None}

    def history(self, session: Session, round_: Round, player: str) -> dict[str, Any]:
        return {"wagers": self.wagers(session, round_.id, player)}

    def stakes(self, session: Session, round_: Round) -> list[dict[str, Any]]:
        """The round's wagers, in the order they were placed, each with its net once settled."""
        wagers = session.scalars(select(Wager).where(Wager.round_id == round_.id).order_by(Wager.seq))
        return [{"wager_id": w.id, "player": w.player, "side": w.side, "seat": w.seat, "stake": w.stake,
                 "net": w.net} for w in wagers]  # fmt: skip

    def _plan(
        self,
        settings: Any,
        player: str,
        round_id: str,
        own: Sequence[Row[Any, Any, Any, Any, Any]],
        bets: Sequence[SpotBet],
        now: datetime,
    ) -> Slip:
        """Check the bets against the player's own wagers (all the game's betting rules look at) and plan the writes:
        a bet on a spot the player already has raises that wager; a new one gets a new wager."""
        check = self.game.new_round(settings)
        wagers: dict[str, tuple[str, str, int]] = {}
        by_spot: dict[tuple[str, str], str] = {}
        for row in own:
            self.game.apply(check, self.wager_command(row.id, player, SpotBet(row.side, row.seat, row.stake)))
            wagers[row.id] = (row.side, row.seat, row.stake)
            by_spot[(row.side, row.seat)] = row.id
        slip = Slip({}, {}, wagers, [])
        for bet in bets:
            wager_id = by_spot.setdefault((bet.side, bet.seat), uuid.uuid4().hex)
            self.game.apply(check, self.wager_command(wager_id, player, bet))
            slip.holds.append((wager_id, self.hold(settings, bet)))
            if wager_id not in wagers:
                slip.new[wager_id] = {
                    "id": wager_id, "round_id": round_id, "player": player, "side": bet.side, "seat": bet.seat,
                    "stake": 0, "net": None, "created_at": now, "updated_at": now,
                }  # fmt: skip
                wagers[wager_id] = (bet.side, bet.seat, 0)
            if wager_id in slip.new:
                slip.new[wager_id]["stake"] += bet.stake
            else:
                slip.raises[wager_id] = slip.raises.get(wager_id, 0) + bet.stake
            wagers[wager_id] = (bet.side, bet.seat, wagers[wager_id][2] + bet.stake)
        return slip

    def _betting_round(
        self, service: RoundCore, connection: Connection, round_id: str
    ) -> tuple[Row[Any, Any, Any, Any], datetime]:
        """The round's row under a shared lock (the close of betting takes it exclusively), if betting is open."""
        round_ = connection.execute(BETTING_ROUND, {"round_id": round_id}).first()
        if round_ is None:
            raise NotFoundError(f"round {round_id!r} does not exist")
        now = service.clock.now()
        if round_.phase != self.betting_phase or now >= aware(round_.betting_closes_at):
            raise BettingClosedError(f"round {round_id}: betting is closed (phase {round_.phase})")
        return round_, now


def slip_request(round_id: str, bets: Sequence[SpotBet]) -> dict[str, Any]:
    """What a slip's idempotency key is claimed for (one slip path or the batch: the same request, the same key)."""
    return {"op": "bets", "round": round_id, "bets": [[b.side, b.seat, b.stake] for b in bets]}


def _write(connection: Connection, slip: Slip, now: datetime) -> None:
    """Insert the slip's new wagers (``seq`` keeps their order) and raise the existing ones."""
    if slip.new:
        connection.execute(NEW_WAGERS, list(slip.new.values()))
    if slip.raises:
        connection.execute(RAISE_WAGERS, [{"wager_id": w, "add": add, "now": now} for w, add in slip.raises.items()])
