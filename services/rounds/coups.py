"""The rounds side of the coup games (baccarat, Dragon Tiger): the shared house bet path, the shoe's roads carried
from coup to coup, and each bet's exact return for the table guard.

A round opens with the marks of the shoe's coups so far: the settled rounds of the table dealt since its last new
shoe (the shoe's journal says where that was), in order. A voided coup (even after it settled) marks nothing; a
corrected one marks what it was corrected to from the next coup on.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.games.baccarat import exact
from services.games.baccarat.port import BACCARAT
from services.games.baccarat.settings import BaccaratSettings
from services.games.coup_game import CloseBetting, CoupGame, Shoe, Wager
from services.games.dragontiger import rules as dragontiger
from services.games.dragontiger.port import DRAGON_TIGER
from services.games.dragontiger.rules import DragonTigerSettings
from services.games.settings import chips_between
from services.journal.models import ShoeJournal
from services.rounds.adapters import Strict
from services.rounds.core import RoundCore
from services.rounds.house import HouseAdapter, SpotBet
from services.rounds.models import Round

Stake = Annotated[int, Field(gt=0, le=10**15)]


class BaccaratBetIn(Strict):
    side: Literal["player", "banker", "tie", "player_pair", "banker_pair"]
    stake: Stake


class BaccaratSlipIn(Strict):
    bets: Annotated[list[BaccaratBetIn], Field(min_length=1, max_length=5)]


class DragonTigerBetIn(Strict):
    side: Literal["dragon", "tiger", "tie", "suited_tie"]
    stake: Stake


class DragonTigerSlipIn(Strict):
    bets: Annotated[list[DragonTigerBetIn], Field(min_length=1, max_length=4)]


def shoe_marks(session: Session, round_: Round, game: CoupGame[Any, Any]) -> list[dict[str, Any]]:
    """The road marks of the table's settled coups dealt from its shoe since the last new shoe, in order."""
    table = round_.table_id
    since = session.scalar(  # newest first on the (table, id) index: a shoe's rows are read, not the table's history
        select(ShoeJournal.id)
        .where(ShoeJournal.table_id == table, ShoeJournal.disposition == "deck")
        .order_by(ShoeJournal.id.desc())
        .limit(1)
    )
    dealt = select(ShoeJournal.round_id).where(
        ShoeJournal.table_id == table, ShoeJournal.disposition == "dealt", ShoeJournal.id > (since or 0)
    )
    results = session.scalars(
        select(Round.result)
        .where(Round.table_id == table, Round.id.in_(dealt), Round.settled_at.is_not(None), Round.voided_at.is_(None))
        .where(Round.id != round_.id)
        .order_by(Round.number)
    )
    marks = [game.mark(json.loads(result)) for result in results if result]
    return [mark for mark in marks if mark["winner"] in (*game.sides, "tie")]  # a result without one marks nothing


def exact_returns(returns: dict[str, Fraction], fix: str) -> dict[str, Any]:
    """Exact returns as the guard reads them: each bet's interval is the one value."""
    bets = {name: {"rtp": float(rtp), "ci95": [float(rtp), float(rtp)]} for name, rtp in returns.items()}
    return {"bets": bets, "fix": fix if any(rtp >= 1 for rtp in returns.values()) else ""}


class CoupAdapter(HouseAdapter):
    """A coup game's adapter: wagers on its spots (no seats), the close of betting, the shoe's roads."""

    game: CoupGame[Any, Any]
    player_page = "coup"

    def wager_command(self, wager_id: str, player: str, bet: SpotBet) -> Wager:
        return Wager(wager_id, player, bet.side, bet.stake)

    def betting_closed(self, session: Session, round_: Round, players: set[str]) -> CloseBetting:
        return CloseBetting()

    def opened(self, service: RoundCore, session: Session, round_: Round, engine: Any) -> None:
        """Every coup starts with the shoe's coups before it (none at a new shoe): the roads go on from there."""
        service.append(session, round_, engine, Shoe(tuple(shoe_marks(session, round_, self.game))), "controller")

    def page(self, settings: Any) -> dict[str, Any]:
        """The spots with what each pays, and the chips to offer (from the table's stake limits)."""
        return {
            "spots": list(self.game.spots),
            "sides": list(self.game.sides),
            "chips": list(chips_between(settings.min_stake, settings.max_stake)),
            "limits": {"min_stake": settings.min_stake, "max_stake": settings.max_stake},
        }


class BaccaratAdapter(CoupAdapter):
    def __init__(self) -> None:
        super().__init__(BACCARAT)
        self.actions = (
            self.bets_action(BaccaratSlipIn, "Bet on Player, Banker, Tie or the pairs while betting is open."),
        )

    def returns(self, settings: BaccaratSettings) -> dict[str, Any]:
        """Exact: every coup a full shoe of the table's decks can deal, counted (``services.games.baccarat.exact``)."""
        fix = "lower tie_pays or pair_pays, or raise banker_commission_bps"
        return exact_returns(exact.returns(settings), fix)


class DragonTigerAdapter(CoupAdapter):
    def __init__(self) -> None:
        super().__init__(DRAGON_TIGER)
        self.actions = (
            self.bets_action(DragonTigerSlipIn, "Bet on Dragon, Tiger, Tie or Suited Tie while betting is open."),
        )

    def returns(self, settings: DragonTigerSettings) -> dict[str, Any]:
        """Exact: two cards from a full shoe of the table's decks (``services.games.dragontiger.rules.returns``)."""
        return exact_returns(dragontiger.returns(settings), "lower tie_pays or suited_tie_pays")


BACCARAT_ADAPTER = BaccaratAdapter()
DRAGON_TIGER_ADAPTER = DragonTigerAdapter()
