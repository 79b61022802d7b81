"""The studio's web pages (table list, dealer console, video overlay) and the dealer console's feed.

The pages are static: each reads a stream of the API. The overlay reads the public state stream
(no login; only revealed cards); the dealer console reads ``/v1/tables/{table}/dealer/stream`` with
a dealer's or operator's bearer token — the controller's dealer view, where a face-down card is
only ``received``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, StreamingResponse

from services.api.deps import CurrentStaff, ServicesDep
from services.api.sse import stream_changes
from services.rounds import queries
from services.rounds.errors import RoundError

PAGES = Path(__file__).parent / "pages"
DEALER_POLL_S = 0.05  # the relay is in memory: looking costs nothing, a dealer should see a scan at once

pages = APIRouter(include_in_schema=False)
dealer = APIRouter(prefix="/v1", tags=["dealer"])


class ConsoleUnavailableError(RoundError):
    """The API has no broker connection, so it cannot relay the controller's dealer view."""


@pages.get("/")
def index() -> FileResponse:
    return FileResponse(PAGES / "index.html")


@pages.get("/console/{table_id}")
def console(table_id: str, services: ServicesDep) -> FileResponse:
    queries.table(services.rounds, table_id)  # 404 for an unknown table
    return FileResponse(PAGES / "console.html", headers={"Cache-Control": "no-store"})


@pages.get("/overlay/{table_id}")
def overlay(table_id: str, services: ServicesDep) -> FileResponse:
    queries.table(services.rounds, table_id)
    return FileResponse(PAGES / "overlay.html", headers={"Cache-Control": "no-store"})


@dealer.get("/tables/{table_id}/dealer/stream", response_class=StreamingResponse)
async def dealer_stream(
    table_id: str,
    request: Request,
    _staff: CurrentStaff,
    services: ServicesDep,
    changes: Annotated[int, Query(ge=1, le=100_000)] = 100_000,
) -> StreamingResponse:
    """The dealer console view of a table as Server-Sent Events (dealers and operators): the next card to
    deal, the cards scanned (a face-down card only as ``received``), deck count, alerts, pauses."""
    await asyncio.to_thread(queries.table, services.rounds, table_id)
    views = services.dealer_views
    if views is None:
        raise ConsoleUnavailableError("this API has no broker connection: the dealer console feed is unavailable")
    waiting = {"v": 1, "table_id": table_id, "waiting_for": "the round controller (no dealer view yet)"}

    async def read() -> dict[str, Any]:
        return views.latest(table_id) or waiting

    return stream_changes(request, await read(), read, changes, DEALER_POLL_S)
