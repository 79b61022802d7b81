"""Server-Sent Events of a value that changes: the value now, then again each time it differs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse


def stream_changes(
    request: Request, first: Any, read: Callable[[], Awaitable[Any]], changes: int, poll_s: float
) -> StreamingResponse:
    """``first``, then every new value ``read()`` returns (asked every ``poll_s``), ``changes`` events at most.

    Ends when the client goes away; a client that wants more reconnects (``EventSource`` does by itself).
    """

    async def events() -> AsyncIterator[str]:
        value, sent = first, 0
        while True:
            yield f"data: {json.dumps(value, separators=(',', ':'))}\n\n"
            sent += 1
            if sent >= changes:
                return
            while True:
                await asyncio.sleep(poll_s)
                if await request.is_disconnected():
                    return
                latest = await read()
                if latest != value:
                    value = latest
                    break

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})
