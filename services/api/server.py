"""The API under uvicorn, with a stop that does not wait for its viewers to leave.

A state stream never ends by itself: uvicorn's stop would wait for every open one (a rolling restart behind the
proxy, for as long as anyone watches). ``ApiServer`` ends the app's streams first — each finishes like any other
response, and its client (the browser's EventSource) reconnects to another API process and gets the current
state — and any request still open ``STOP_WAIT_S`` later is cancelled.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

STOP_WAIT_S = 2  # seconds (uvicorn takes whole ones)


class ApiServer(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        services = getattr(getattr(self.config.app, "state", None), "services", None)
        for hub in services.hubs() if services is not None else ():
            hub.end()
        await super().shutdown(sockets)


def api_config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    """``app`` served at ``host:port`` (uvicorn's ``options`` besides: its log level, its proxy settings)."""
    return uvicorn.Config(app, host=host, port=port, timeout_graceful_shutdown=STOP_WAIT_S, **options)


def api_server(app: Any, host: str, port: int, **options: Any) -> ApiServer:
    return ApiServer(api_config(app, host, port, **options))
