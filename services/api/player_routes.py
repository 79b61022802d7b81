"""The player betting API: wallet, bets, insurance, decisions, threshold, history; the public state stream."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import Response, StreamingResponse

from services.api.deps import CurrentPlayer, IdempotencyKey, ServicesDep
from services.api.schemas import (
    AppliedOut,
    BetSlipIn,
    DecisionIn,
    IdentityOut,
    InsuranceIn,
    InsuranceOut,
    SlipOut,
    StatementLineOut,
    ThresholdIn,
    WalletOut,
)
from services.games.pokdeng import Position, Side
from services.rounds import queries
from services.rounds.service import Bet

public = APIRouter(prefix="/v1", tags=["public"])

router = APIRouter(prefix="/v1", tags=["player"])
Limit = Annotated[int, Query(ge=1, le=100)]


@router.get("/me")
def me(player: CurrentPlayer, services: ServicesDep) -> IdentityOut:
    return IdentityOut(id=player.id, role=player.role, threshold=services.rounds.threshold(player.id))


@router.put("/me/threshold")
def set_threshold(body: ThresholdIn, player: CurrentPlayer, services: ServicesDep) -> IdentityOut:
    """The auto-draw threshold used when a decision window closes without a choice; applies from the next round."""
    services.rounds.set_threshold(player.id, body.threshold)
    return IdentityOut(id=player.id, role=player.role, threshold=body.threshold)


@router.get("/wallet")
def wallet(player: CurrentPlayer, services: ServicesDep) -> WalletOut:
    return WalletOut(**services.wallets.balance(player.id))


@router.get("/wallet/statement")
def statement(
    player: CurrentPlayer,
    services: ServicesDep,
    before: Annotated[int | None, Query(ge=1, le=2**63 - 1)] = None,
    limit: Limit = 50,
) -> list[StatementLineOut]:
    lines = services.wallets.statement(player.id, before, limit)
    return [StatementLineOut(**asdict(line)) for line in lines]


@router.post("/rounds/{round_id}/bets", status_code=201)
def place_bets(
    round_id: str, body: BetSlipIn, key: IdempotencyKey, player: CurrentPlayer, services: ServicesDep
) -> SlipOut:
    """Place or raise wagers on one side of the round while betting is open; holds are taken atomically."""
    bets = [Bet(Side(bet.side), Position(bet.seat), bet.stake) for bet in body.bets]
    return SlipOut(**services.rounds.place_bets(player.id, round_id, bets, key))


@router.post("/rounds/{round_id}/insurance", status_code=201)
def buy_insurance(
    round_id: str, body: InsuranceIn, key: IdempotencyKey, player: CurrentPlayer, services: ServicesDep
) -> InsuranceOut:
    bought = services.rounds.buy_insurance(player.id, round_id, body.amount, key)
    services.notify(round_id)
    return InsuranceOut(**bought)


@router.post("/rounds/{round_id}/decisions")
def decide(round_id: str, body: DecisionIn, player: CurrentPlayer, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.decide(player.id, round_id, Position(body.seat), body.choice == "draw")
    services.notify(round_id)
    return AppliedOut(round_id=round_id, phase=applied.phase, events=[type(e).__name__ for e in applied.events])


@router.get("/rounds/{round_id}")
def round_state(round_id: str, _player: CurrentPlayer, services: ServicesDep) -> dict[str, Any]:
    """The public state of a round: face-down cards stay hidden until revealed."""
    return queries.round_state(services.rounds, round_id)


@public.get("/tables")
def tables(services: ServicesDep) -> list[dict[str, str]]:
    """Every table of the studio (no login needed): id, game, currency."""
    return queries.tables(services.rounds)


@router.get("/tables/{table_id}/current")
def current_round(table_id: str, _player: CurrentPlayer, services: ServicesDep) -> dict[str, Any]:
    return queries.current_round(services.rounds, table_id)


@router.get("/history")
def history(
    player: CurrentPlayer, services: ServicesDep, before: datetime | None = None, limit: Limit = 20
) -> list[dict[str, Any]]:
    """The player's rounds, newest first; page with ``before`` = the last ``opened_at`` seen."""
    return queries.history(services.rounds, player.id, before, limit)


@router.get("/history/{round_id}")
def history_detail(round_id: str, player: CurrentPlayer, services: ServicesDep) -> dict[str, Any]:
    return queries.round_detail(services.rounds, player.id, round_id)


@public.get("/tables/{table_id}/state/stream", response_class=StreamingResponse)
async def stream_state(
    table_id: str,
    services: ServicesDep,
    changes: Annotated[int, Query(ge=1, le=100_000)] = 100_000,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=64)] = None,
) -> Response:
    """The table's public round state as Server-Sent Events: one ``data:`` frame per change (no login needed).

    Only revealed information, like the overlay: the banker's face-down card is absent until its reveal.
    Frames carry ids; a client that reconnects with ``Last-Event-ID`` gets what it missed, not what it had.
    A comment line comes every 15 s when nothing changes. ``changes`` ends the stream after that many frames.
    """
    if services.poller is not None or services.states.value(table_id) is None:
        first = await asyncio.to_thread(queries.current_round, services.rounds, table_id)  # 404 for an unknown table
        services.states.publish(table_id, first)
    if services.poller is not None:
        services.poller.watch(table_id)
    return services.states.stream(table_id, last_event_id=last_event_id, changes=changes)
