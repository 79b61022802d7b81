"""Limits every request meets before any route: a body read only up to ``MAX_BODY_BYTES`` (a larger one is refused
before it is parsed), and a path and query free of NUL characters (no id, name or filter holds one)."""

from __future__ import annotations

import json
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.rounds.staff import printable

log = logging.getLogger("studio.api.limits")

MAX_BODY_BYTES = 64 * 1024  # the largest request the API takes (a bet slip or table settings are < 2 KB)


class RequestLimits:
    """ASGI middleware, before any route reads the request (one layer for both, on the bet path too):

    - a path or query holding a NUL (``%00``) is refused (422, ``invalid_request``) — PostgreSQL cannot even compare a
      text with a NUL in it; other control characters go on to the routes, which refuse the id (a line break is
      journaled made printable, so it forges no log line);
    - a declared ``Content-Length`` over the limit is refused at once; a streamed body is read as it arrives and
      refused the moment it passes the limit (413, ``body_too_large``). The app then reads the body from memory.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"")
        for part, nul in (("path", "\x00" in scope["path"]), ("query", b"%00" in query or b"\x00" in query)):
            if nul:
                log.info("refused a request whose %s holds a NUL: %s", part, printable(scope["path"], 300))
                said = f"the request's {part} holds a NUL character (%00), which no id, name or filter may"
                await _refuse(send, said, "invalid_request", 422)
                return
        limit = self.max_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _refuse(send, f"the request body is {declared.decode(errors='replace')} bytes; at most {limit}")
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break  # the client left
            size += len(message.get("body", b""))
            if size > limit:
                await _refuse(send, f"the request body passed {limit} bytes")
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def _refuse(send: Send, message: str, code: str = "body_too_large", status: int = 413) -> None:
    body = json.dumps({"code": code, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
