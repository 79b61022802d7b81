"""The FastAPI application: routers, JSON errors with stable codes, health checks.

Every refusal is a JSON body ``{"code": ..., "message": ...}``; no input, however malformed,
may produce a 5xx (the tests fuzz the API from its own OpenAPI document to hold it to that).
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message, Receive, Scope, Send

from services.api import api_docs, operator_routes, page_routes, player_routes, refusals
from services.api import recordings as recordings_routes
from services.api.actions import action_routes, shared_bodies
from services.api.consoles import ViewRelay
from services.api.deps import Services
from services.api.errors import REFUSALS, body_of, status_of
from services.api.fanout import RAW_SEND, Hub, Poller
from services.api.limits import MAX_BODY_BYTES, RequestLimits
from services.api.slip_route import SlipLane
from services.catalog import STUDIO_GAMES
from services.db import session_factory
from services.db.engine import POOL_SIZE
from services.db.unit_of_work import UNAVAILABLE
from services.ledger.wallets import WalletService
from services.observability.metrics import HTTP_REQUESTS, HTTP_SECONDS, ROUND_OVERDUE
from services.rounds import queries
from services.rounds.adapters import Catalog
from services.rounds.clock import Clock, SystemClock
from services.rounds.players import PlayerService
from services.rounds.service import RoundService
from services.rounds.slips import STOP_WAIT_S, SlipWriter
from services.rounds.stakes import flows_ended
from services.wallet.outbox import SeamlessWallet
from services.wallet.protocol import WalletConfig
from services.wallet.sender import WalletSender

log = logging.getLogger("studio.api")
STREAM_POLL_S = 0.25  # without a broker: how often a watched table's public state is read
# A private view (a seat's, a player's own) is read again at once when its table's public state changes
# or the player acts through this process; between those, this often (to catch deposits and the like).
PRIVATE_POLL_S = 2.0


def create_app(
    database: Engine,
    clock: Clock | None = None,
    currency: str = "THB",
    threads: int = POOL_SIZE,
    notify: Callable[[str], None] | None = None,
    relay: ViewRelay | None = None,
    wallet: WalletConfig | None = None,
    games: Catalog = STUDIO_GAMES,
    recordings: Path | None = None,
) -> FastAPI:
    """The API on ``database``; ``threads`` endpoints run at once (match it to the connection pool).

    ``notify(round_id)`` is called after every change to a round (the controller's ``…/round/commands``);
    ``relay`` relays the controllers' round views from the broker: the public state streams and the dealer
    console read it. Without it the console feed is unavailable and the public state is read from the
    database, once per watched table every ``STREAM_POLL_S`` whatever its number of viewers. ``games``: the games
    its tables may run (the studio's own by default). ``recordings``: the folder ``studio record`` writes each table's
    camera under (``ROOT/{table}/index.m3u8``), served to operators (``services.api.recordings``).
    """
    sessions = session_factory(database)
    rounds = RoundService(sessions, clock, games=games)
    rounds.slip_writer = SlipWriter(rounds)  # bet slips that arrive together are written in one transaction
    sender = None
    if wallet is not None:  # the stakes of operator's-wallet tables; its outbox sent in the background
        rounds.wallet = SeamlessWallet(sessions, wallet)
        sender = WalletSender(rounds.wallet)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # Endpoints are sync and run in anyio's thread pool (40 by default). More threads than
        # pooled connections only queue on the pool and contend for the GIL.
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        if sender is not None:
            sender.start()
        # What the process built to start (modules, models, schemas: ~190,000 objects) never becomes garbage: out of
        # the collector's sight, a full collection no longer stops every request for ~100 ms (bench/bets.py --rate).
        # Once a process (a test run starts many apps: the later ones' garbage stays collectable).
        if gc.get_freeze_count() == 0:
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            left = await flows_ended(STOP_WAIT_S)  # stakes whose requests are gone, placed or rolled back first
            if left:
                log.warning("%d stakes still on their way at the stop: the wallet sender resolves them", left)
            if rounds.slip_writer is not None:
                rounds.slip_writer.stop()
            if sender is not None:
                sender.stop()
            if rounds.wallet is not None:
                rounds.wallet.close_soon()

    app = StudioAPI(
        title="studio",
        version="1",
        summary="Live-dealer card studio: player betting API, operator tools.",
        lifespan=lifespan,
        docs_url=None,  # served below from packaged assets, not a CDN
        redoc_url=None,
    )
    app.state.services = Services(
        rounds=rounds, wallets=WalletService(sessions, currency), players=PlayerService(sessions, clock)
    )
    if notify is not None:
        app.state.services = replace(app.state.services, notify=notify)
    if relay is not None:
        app.state.services = replace(app.state.services, relay=relay, states=relay.state)
    else:
        rounds = app.state.services.rounds
        states = app.state.services.states
        poller = Poller(states, lambda table: queries.current_round(rounds, table), STREAM_POLL_S)
        app.state.services = replace(app.state.services, poller=poller)
    services = app.state.services
    private_s = PRIVATE_POLL_S if relay is not None else STREAM_POLL_S
    seat_poller = Poller(services.seats, lambda key: services.rounds.seat_view(*key.split("/", 2)), private_s)
    yours_poller = Poller(services.yours, lambda key: player_routes.yours(services, *key.split("/", 1)), private_s)
    for poller in (seat_poller, yours_poller):
        services.states.listen(lambda table, poller=poller: poller.wake(table + "/"))
    app.state.services = replace(services, seat_poller=seat_poller, yours_poller=yours_poller)
    app.include_router(player_routes.router)
    app.include_router(action_routes(games))
    _with_components(app, shared_bodies(games))
    app.include_router(player_routes.public)
    app.include_router(operator_routes.router)
    app.state.recordings = recordings
    app.state.slip_lane = SlipLane(app)  # a bet slip's plain case, before the framework (the route below stays)
    app.include_router(recordings_routes.router)
    app.include_router(page_routes.dealer)
    app.include_router(page_routes.pages)
    app.mount("/static", StaticFiles(directory=page_routes.PAGES), name="static")
    api_docs.serve(app)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        """Prometheus metrics of this process."""
        if services.relay is not None:  # the controllers' views, kept current by the broker (a poller's go stale)
            overdue(services.states, (clock or SystemClock()).now())
        return PlainTextResponse(generate_latest().decode(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    def readyz() -> JSONResponse:
        try:
            with database.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception as error:  # readiness reports any database failure, whatever its type
            return JSONResponse({"status": "unavailable", "reason": type(error).__name__}, status_code=503)
        return JSONResponse({"status": "ready"})

    for error_class in REFUSALS:
        app.add_exception_handler(error_class, _refused)
    for error_class in UNAVAILABLE:
        app.add_exception_handler(error_class, _database_unavailable)
    app.add_middleware(RequestLimits, max_bytes=MAX_BODY_BYTES)
    app.add_exception_handler(DataError, _unstorable)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    return app


class StudioAPI(FastAPI):
    """FastAPI that counts and times every answer by its route's template (``studio_http_requests_total``,
    ``studio_http_request_seconds``: to the first byte) and hands the server's own ``send`` down in the scope, for
    the stream fan-out's direct writes."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        lane = getattr(self.state, "slip_lane", None)
        if lane is not None:
            taken = await lane.take(scope, receive, send)
            if taken is None:
                return
            receive = taken
        scope["extensions"] = {**(scope.get("extensions") or {}), RAW_SEND: send}
        started = time.perf_counter()

        async def measured(message: Message) -> None:
            if message["type"] == "http.response.start":
                route = getattr(scope.get("route"), "path", "unmatched")
                method = scope["method"] if scope["method"] in METHODS else "other"  # a client's word: bounded
                HTTP_SECONDS.labels(method, route).observe(time.perf_counter() - started)
                HTTP_REQUESTS.labels(method, route, str(message["status"])).inc()
            await send(message)

        await super().__call__(scope, receive, measured)


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def overdue(states: Hub, now: datetime) -> None:
    """``studio_round_overdue_seconds`` of every table this process relays: how long its open window has been past
    its close (0: none is). The controller closes a window within moments; one left open means it cannot."""
    for table, state in states.values().items():
        closes = state.get("window_closes_at") if isinstance(state, dict) else None
        try:
            late = (now - datetime.fromisoformat(closes)).total_seconds() if closes else 0.0
        except (TypeError, ValueError):  # not a time with its zone: nothing to measure (never a failed scrape)
            continue
        ROUND_OVERDUE.labels(table).set(max(0.0, late))


RETRY_AFTER_S = 2


async def _database_unavailable(_request: Request, error: Exception) -> JSONResponse:
    log.warning("database unavailable: %s", " ".join(str(error).split())[:300])
    return JSONResponse(
        {"code": "database_unavailable", "message": "the database is unavailable; try again shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def _unstorable(_request: Request, error: Exception) -> JSONResponse:
    """A value the database cannot store (a NUL in a text, a number past its column): the transaction rolled back."""
    log.info("refused a value the database cannot store: %s", " ".join(str(error).split())[:300])
    message = "a value of the request cannot be stored (a text holding a NUL character, or a number out of range)"
    return JSONResponse({"code": "invalid_request", "message": message}, status_code=422)


async def _refused(request: Request, error: Exception) -> JSONResponse:
    """A refusal by the rounds, a game, the ledger, the cards or the wallet: its own code, the status of its kind
    (``services.api.errors``); a forbidden action of a staff member is journaled too (``services.api.refusals``)."""
    body, status = body_of(error), status_of(error)
    if status in (403, 409):  # forbidden, or refused in its state (four eyes required, a card by hand refused…)
        await anyio.to_thread.run_sync(refusals.journal, request, body["code"], str(error))
    return JSONResponse(body, status_code=status)


def _with_components(app: FastAPI, schemas: dict[str, Any]) -> None:
    """The OpenAPI document with ``schemas`` among its components (bodies a route refers to but FastAPI never saw)."""
    made = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = made()
            found = document.setdefault("components", {}).setdefault("schemas", {})
            found.update({name: schema for name, schema in schemas.items() if name not in found})
        return made()

    app.openapi = openapi  # type: ignore[method-assign]


async def _validation_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item.get('loc', ()))}: {item.get('msg', 'invalid')}"
        for item in error.errors()
    )
    return JSONResponse({"code": "invalid_request", "message": problems}, status_code=422)


async def _http_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
    return JSONResponse({"code": code, "message": str(error.detail)}, status_code=error.status_code)
