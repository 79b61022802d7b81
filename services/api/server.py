"""The API under uvicorn, with a stop that does not wait for its viewers to leave.

A state stream never ends by itself: uvicorn's stop would wait for every open one (a rolling restart behind the
proxy, for as long as anyone watches). ``ApiServer`` ends the app's streams first — each finishes like any other
response, and its client (the pages' stream reader) reconnects to another API process and gets the current state;
one accepted just before the stop gets the current state once and ends too — and any request still open
``STOP_WAIT_S`` later is cancelled. A stop by SIGINT/SIGTERM exits 0 (uvicorn would raise the signal again after
its shutdown, and the process would end by it).
"""

from __future__ import annotations

import socket
from types import FrameType
from typing import Any, cast

import uvicorn
from fastapi import FastAPI

STOP_WAIT_S = 2  # seconds (uvicorn takes whole ones)


class ApiServer(uvicorn.Server):
    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        getattr(self, "_captured_signals", []).clear()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = cast(FastAPI, self.config.app)  # the studio's app (``create_app``), as ``api_server`` takes it
        for hub in app.state.services.hubs():
            hub.end()
        await super().shutdown(sockets)


def api_server(app: FastAPI, host: str, port: int, **options: Any) -> ApiServer:
    """``app`` served at ``host:port`` (uvicorn's ``options`` besides: its log level, its proxy settings)."""
    return ApiServer(uvicorn.Config(app, host=host, port=port, timeout_graceful_shutdown=STOP_WAIT_S, **options))
