"""The player API: identity and settings, wallet, history, round reads and the state streams.

Each game's actions in a round (Pok Deng's bets, insurance and decisions…) are routes of their own,
made from the game's adapter by ``services.api.actions``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response, StreamingResponse

from services.api.deps import Changes, CurrentPlayer, LastEventId, Services, ServicesDep, Stream, StreamArgs
from services.api.fanout import Hub, Poller
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


@public.get("/tables/{table_id}")
def table(table_id: str, services: ServicesDep) -> dict[str, Any]:
    """One table (no login needed): its game, currency and settings (stake limits, windows…), and ``page``:
    what its game's player page shows besides (Pok Deng: the chips to offer and the video stream URL)."""
    return queries.table(services.rounds, table_id)


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
    changes: Changes = 100_000,
    last_event_id: LastEventId = None,
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


def yours(services: Services, table_id: str, player: str) -> dict[str, Any]:
    """``player``'s own view of the table's current round, and their wallet."""
    return services.rounds.player_view(table_id, player) | {"wallet": services.wallets.balance(player)}


@router.get("/tables/{table_id}/me")
def your_view(table_id: str, player: CurrentPlayer, services: ServicesDep) -> dict[str, Any]:
    """What of the table's current round is yours, and your wallet (the private stream's value, once):
    Pok Deng: ``you.wagers`` (from your first bet), ``you.insurance_offer`` (the amounts you may insure for,
    while the window is open and you have not bought), ``you.decision`` (the seat whose draw/stand is yours
    to choose now, its points and your threshold), ``you.net`` once settled."""
    return yours(services, table_id, player.id)


@router.get("/tables/{table_id}/me/stream", response_class=StreamingResponse)
async def stream_yours(
    table_id: str,
    player: CurrentPlayer,
    services: ServicesDep,
    stream: Stream,
) -> Response:
    """``GET /v1/tables/{table_id}/me`` as Server-Sent Events: a frame whenever it changes. Only you can open
    yours; the token is checked again every few seconds (a revoked token's stream ends)."""
    first = await asyncio.to_thread(yours, services, table_id, player.id)
    private = PrivateStream(services, services.yours, services.yours_poller, stream.token, player.id)
    return private.open(f"{table_id}/{player.id}", first, stream)


@router.get("/tables/{table_id}/seats/{seat}/stream", response_class=StreamingResponse)
async def stream_seat(
    table_id: str,
    seat: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,16}$")],
    player: CurrentPlayer,
    services: ServicesDep,
    stream: Stream,
) -> Response:
    """Your seat's private view of the table's current round as Server-Sent Events: the public state plus
    your own hidden cards (a Mậu Binh or Tiến Lên hand). Only the player holding the seat may open it (403).

    The token and the seat are checked again every few seconds: a revoked token's stream, or one whose
    seat has passed to someone else in a later round, ends."""
    first = await asyncio.to_thread(services.rounds.seat_view, table_id, seat, player.id)
    private = PrivateStream(services, services.seats, services.seat_poller, stream.token, player.id)
    private.still_yours = lambda who: services.rounds.seat_view(table_id, seat, who)
    return private.open(f"{table_id}/{seat}/{player.id}", first, stream)


@dataclass
class PrivateStream:
    """One player's stream of a private view (``hub`` at a key), its source polled while it is open; it ends
    when the token no longer logs in as that player, or ``still_yours(player)`` is refused."""

    services: Services
    hub: Hub
    poller: Poller | None
    token: str
    player: str
    still_yours: Callable[[str], object] = lambda _player: None

    def open(self, key: str, first: Any, stream: StreamArgs) -> Response:
        self.hub.publish(key, first)
        if self.poller is not None:
            self.poller.watch(key)
        return self.hub.stream(
            key, last_event_id=stream.last_event_id, changes=stream.changes, still_allowed=self.still_allowed
        )

    async def still_allowed(self) -> bool:
        try:
            identity = await asyncio.to_thread(self.services.players.authenticate, self.token)
            await asyncio.to_thread(self.still_yours, identity.id)
        except (AuthError, ForbiddenError):
            return False
        return identity.id == self.player
