"""The bet slip's own lane: ``POST /v1/rounds/{round_id}/bets`` answered without the framework's per-request work.

The hottest route of the studio (a betting window's last seconds). The lane takes only the plain case, checked as the
FastAPI route checks it: a player's bearer token this process has seen in the last seconds (no database), confirmed;
an ``Idempotency-Key`` of 1–128 characters; a JSON body of at most ``MAX_BODY_BYTES`` that the round's game reads as
its slip; a round whose game this process already knows (on an operator's-wallet table, a process with the
operator's wallet configured: the debit is sent from the event loop too). Anything else — no or a malformed header, a
body its game refuses, a token not seen yet, a query string — is handed to the FastAPI route exactly as it came (the
body replayed), which answers it, and says what is wrong, as it always has. The route stays in the OpenAPI document;
the answers, their refusals (the app's own exception handlers) and the request metrics are the same on both.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import time
from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel
from starlette.responses import PlainTextResponse
from starlette.types import Message, Receive, Scope, Send

from services.api.deps import holder
from services.api.limits import MAX_BODY_BYTES
from services.observability.metrics import HTTP_REQUESTS, HTTP_SECONDS
from services.rounds.players import Identity

log = logging.getLogger("studio.api")
PATH = re.compile(r"/v1/rounds/([^/]+)/bets")
TEMPLATE = "/v1/rounds/{round_id}/bets"  # the metrics' route label, as FastAPI's route names it
MAX_KEY = 128
JSON_TYPES = (b"application/json",)  # (none at all: the framework does not read the body as JSON)
WATCHED = (b"authorization", b"idempotency-key", b"content-type", b"content-length")


class SlipLane:
    """Called by the app first for every HTTP request."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.answered = 0  # requests the lane answered itself (the rest went on to the app)

    async def take(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """None if the lane answered the request; else the ``receive`` the app goes on with (what the lane read of
        the request, replayed, then the rest)."""
        if scope["method"] != "POST" or scope.get("query_string") or "\x00" in scope["path"]:
            return receive
        found = PATH.fullmatch(scope["path"])
        if found is None:
            return receive
        started = time.perf_counter()
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            if name in headers and name in WATCHED:  # sent twice: the route says which counts (or refuses it)
                return receive
            headers[name] = value
        read, raw = await _body(receive, headers)
        identity = None if raw is None else await self._caller(headers)
        plain = None if identity is None or raw is None else self._plain(headers, identity, found.group(1), raw)
        if plain is None:
            return _replayed(read, receive)
        soon, round_id = plain
        try:
            answer: BaseModel = await soon
        except Exception as error:  # a refusal: answered by the app's handler of its kind (or raised, if none)
            seen = {**scope, "app": self.app, "path_params": {"round_id": round_id}}  # as the route's request had it
            response = await self._handled(seen, receive, error)
        else:
            response = _Json(answer.model_dump_json().encode(), 201)
            self.app.state.services.changed(round_id)
        HTTP_SECONDS.labels("POST", TEMPLATE).observe(time.perf_counter() - started)
        HTTP_REQUESTS.labels("POST", TEMPLATE, str(response.status_code)).inc()
        await response(scope, receive, send)
        self.answered += 1
        return None

    async def _caller(self, headers: dict[bytes, bytes]) -> Identity | None:
        """The confirmed player whose bearer token the request carries (looked up in a worker thread if this process
        has not seen it in the last seconds), or None: the route refuses it, saying why."""
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        try:
            identity = await holder(self.app.state.services.players, token)
        except Exception:  # refused, or the database: the route answers it (401, 503) as it does
            return None
        return identity if identity.role == "player" and identity.confirmed else None

    def _plain(self, headers: dict[bytes, bytes], identity: Identity, round_id: str, raw: bytes) -> Any:
        """The slip queued for its batch and its round, if the request is the plain case; else None."""
        if headers.get(b"content-type", b"").split(b";")[0].strip().lower() not in JSON_TYPES:
            return None
        key = headers.get(b"idempotency-key", b"").decode("latin-1")
        if not 1 <= len(key) <= MAX_KEY:
            return None
        services = self.app.state.services
        rounds = services.rounds
        action = rounds.known_action(round_id, "bets")
        if action is None or action.soon is None:
            return None
        try:
            body = action.body.model_validate(json.loads(raw))
        except Exception:  # not JSON, too deep, not the game's slip: the FastAPI route says what is wrong with it
            return None
        soon = action.soon(rounds, identity.id, round_id, body, key)
        return None if soon is None else (soon, round_id)

    async def _handled(self, scope: Scope, receive: Receive, error: Exception) -> Any:
        """The app's answer to the error: its handler's, or (none) the 500 the app's last resort gives, logged."""
        for kind in type(error).__mro__:
            handler = self.app.exception_handlers.get(kind)
            if handler is not None:
                response = handler(Request(scope, receive), error)
                return await response if inspect.isawaitable(response) else response
        log.error("a bet slip failed: %s", error, exc_info=error)
        return PlainTextResponse("Internal Server Error", status_code=500)


async def _body(receive: Receive, headers: dict[bytes, bytes]) -> tuple[list[Message], bytes | None]:
    """The messages read, and the request's body (None: past the limit, or the client left; the app, given the
    messages again, refuses it as it does)."""
    read: list[Message] = []
    declared = headers.get(b"content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        return read, None
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return read, None
        size += len(message.get("body", b""))
        if size > MAX_BODY_BYTES:
            return read, None
        if not message.get("more_body", False):
            return read, b"".join(m.get("body", b"") for m in read)


def _replayed(read: list[Message], receive: Receive) -> Receive:
    """``receive`` with the messages the lane read given first, in order."""
    if not read:
        return receive
    waiting = list(read)

    async def again() -> Message:
        return waiting.pop(0) if waiting else await receive()

    return again


class _Json:
    """A JSON answer already encoded (the slip's model serialized itself)."""

    def __init__(self, body: bytes, status_code: int) -> None:
        self.body = body
        self.status_code = status_code

    async def __call__(self, _scope: Scope, _receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})
