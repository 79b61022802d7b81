"""A small HTTP endpoint for processes without a web framework: /metrics, /healthz, /readyz."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest


def serve_health(host: str, port: int, ready: Callable[[], dict[str, bool]]) -> ThreadingHTTPServer:
    """Serve on a thread; ``ready()`` names each dependency and whether it is up (all up: 200, else 503)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/metrics":
                self._send(200, generate_latest(), CONTENT_TYPE_LATEST)
            elif self.path == "/healthz":
                self._send(200, b'{"status":"ok"}', "application/json")
            elif self.path == "/readyz":
                checks = ready()
                status = 200 if all(checks.values()) else 503
                self._send(status, json.dumps({"ready": status == 200, "checks": checks}).encode(), "application/json")
            else:
                self._send(404, b'{"code":"not_found"}', "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:  # scrapes every few seconds: not worth a log line
            return

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="health", daemon=True).start()
    return server
