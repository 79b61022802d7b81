"""The studio's web pages (tables, dealer console, video overlay, player's pages of Pok Deng and of the coup games,
room page, operator's page) and the console's feed.

The pages are static: each reads a stream of the API. The overlay reads the public state stream
(no login; only revealed cards); the dealer console reads ``/v1/tables/{table}/dealer/stream`` with
a dealer's or operator's bearer token — the controller's dealer view, where a face-down card is
only ``received``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response, StreamingResponse

from services.api.deps import CurrentStaff, ServicesDep, Stream
from services.api.errors import ConsoleUnavailableError
from services.rounds import queries
from services.rounds.errors import AuthError

PAGES = Path(__file__).parent / "pages"
WAITING = "the round controller (no dealer view yet)"

pages = APIRouter(include_in_schema=False)
dealer = APIRouter(prefix="/v1", tags=["dealer"])


@pages.get("/")
def index() -> FileResponse:
    return FileResponse(PAGES / "index.html")


@pages.get("/console/{table_id}")
def console(table_id: str, services: ServicesDep) -> FileResponse:
    queries.table(services.rounds, table_id)  # 404 for an unknown table
    return FileResponse(PAGES / "console.html", headers={"Cache-Control": "no-store"})


@pages.get("/play/{table_id}")
def play(table_id: str, services: ServicesDep) -> FileResponse:
    """The player's page of a table: sign in with a player token, bet, insure, decide, see results and history."""
    queries.table(services.rounds, table_id)
    return FileResponse(PAGES / "play.html", headers={"Cache-Control": "no-store"})


@pages.get("/coup/{table_id}")
def coup(table_id: str, services: ServicesDep) -> FileResponse:
    """A house coup table's player page (baccarat, Dragon Tiger): the spots with what they pay, chips, the coup as
    it is dealt, the result, the shoe's roads and the player's history."""
    queries.table(services.rounds, table_id)
    return FileResponse(PAGES / "coup.html", headers={"Cache-Control": "no-store"})


@pages.get("/room/{table_id}")
def room(table_id: str, services: ServicesDep) -> FileResponse:
    """A room's page (Mậu Binh: seats, ready, arranging, the showdown chi by chi; Tiến Lên: turns, the table, play
    and pass from your own hand)."""
    queries.table(services.rounds, table_id)
    return FileResponse(PAGES / "room.html", headers={"Cache-Control": "no-store"})


@pages.get("/ops")
def ops() -> FileResponse:
    """The operator's page: rounds, a round in full with its evidence, void, corrections, four eyes."""
    return FileResponse(PAGES / "ops.html", headers={"Cache-Control": "no-store"})


@pages.get("/overlay/{table_id}")
def overlay(table_id: str, services: ServicesDep) -> FileResponse:
    queries.table(services.rounds, table_id)
    return FileResponse(PAGES / "overlay.html", headers={"Cache-Control": "no-store"})


@dealer.get("/tables/{table_id}/dealer/stream", response_class=StreamingResponse)
async def dealer_stream(
    table_id: str,
    staff: CurrentStaff,
    services: ServicesDep,
    stream: Stream,
) -> Response:
    """The dealer console view of a table as Server-Sent Events (dealers and operators): the next card to
    deal, the cards scanned (a face-down card only as ``received``), deck count, alerts, pauses.

    The token is checked again every few seconds: a revoked token's open stream ends."""
    await asyncio.to_thread(queries.table, services.rounds, table_id)
    await asyncio.to_thread(services.players.check_runs_table, staff, table_id)
    relay = services.relay
    if relay is None:
        raise ConsoleUnavailableError("this API has no broker connection: the dealer console feed is unavailable")
    if relay.dealer.value(table_id) is None:
        relay.dealer.publish(table_id, {"v": 1, "table_id": table_id, "waiting_for": WAITING})

    async def still_allowed() -> bool:
        try:
            identity = await asyncio.to_thread(services.players.authenticate, stream.token)
            assigned = await asyncio.to_thread(services.players.runs_table, identity, table_id)
        except AuthError:
            return False
        return identity.role == staff.role and assigned

    return relay.dealer.stream(
        table_id, last_event_id=stream.last_event_id, changes=stream.changes, still_allowed=still_allowed
    )
