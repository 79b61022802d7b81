"""The player API: identity and settings, wallet, history, round reads and the state streams.

Each game's actions in a round (Pok Deng's bets, insurance and decisions…) are routes of their own,
made from the game's adapter by ``services.api.actions``.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query
from fastapi.responses import Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from services.api.deps import CurrentPlayer, ServicesDep, bearer
from services.api.schemas import IdentityOut, StatementLineOut, ThresholdIn, WalletOut
from services.rounds import queries
from services.rounds.errors import AuthError, ForbiddenError

public = APIRouter(prefix="/v1", tags=["public"])

router = APIRouter(prefix="/v1", tags=["player"])
Limit = Annotated[int, Query(ge=1, le=100)]


@router.get("/me")
def me(player: CurrentPlayer, services: ServicesDep) -> IdentityOut:
    return IdentityOut(id=player.id, role=player.role, **services.rounds.profile(player.id))


@router.put("/me/threshold")
def set_threshold(body: ThresholdIn, player: CurrentPlayer, services: ServicesDep) -> IdentityOut:
    """The auto-draw threshold used when a decision window closes without a choice; applies from the next round."""
    services.rounds.set_profile(player.id, {"threshold": body.threshold})
    return IdentityOut(id=player.id, role=player.role, **services.rounds.profile(player.id))


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


@router.get("/tables/{table_id}/seats/{seat}/stream", response_class=StreamingResponse)
async def stream_seat(
    table_id: str,
    seat: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,16}$")],
    player: CurrentPlayer,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    changes: Annotated[int, Query(ge=1, le=100_000)] = 100_000,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=64)] = None,
) -> Response:
    """Your seat's private view of the table's current round as Server-Sent Events: the public state plus
    your own hidden cards (a Mậu Binh or Tiến Lên hand). Only the player holding the seat may open it (403).

    The token and the seat are checked again every few seconds: a revoked token's stream, or one whose
    seat has passed to someone else in a later round, ends."""
    first = await asyncio.to_thread(services.rounds.seat_view, table_id, seat, player.id)
    key = f"{table_id}/{seat}/{player.id}"
    services.seats.publish(key, first)
    if services.seat_poller is not None:
        services.seat_poller.watch(key)
    token = credentials.credentials if credentials else ""

    async def still_allowed() -> bool:
        try:
            identity = await asyncio.to_thread(services.players.authenticate, token)
            await asyncio.to_thread(services.rounds.seat_view, table_id, seat, identity.id)
        except (AuthError, ForbiddenError):
            return False
        return identity.id == player.id

    return services.seats.stream(key, last_event_id=last_event_id, changes=changes, still_allowed=still_allowed)
