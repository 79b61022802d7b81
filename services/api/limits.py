"""A request body is read only up to ``MAX_BODY_BYTES``: a larger one is refused before it is parsed."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024  # the largest request the API takes (a bet slip or table settings are < 2 KB)


class BodyLimit:
    """ASGI middleware: a declared ``Content-Length`` over the limit is refused at once; a streamed body is
    read as it arrives and refused the moment it passes the limit (413, ``body_too_large``). The app then
    reads the body from memory."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
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


async def _refuse(send: Send, message: str) -> None:
    body = json.dumps({"code": "body_too_large", "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
