"""The overhead camera of the topology test: an IP camera's shape — an MJPEG stream over HTTP (what most network
cameras serve) — showing the synthetic table of ``hardware.sim.camera``, where the test's dealer turns each card up
as the dealer console asks for its check. The camera daemon reads it as deployed (``studio shoe --witness`` with
``camera://http://…?templates=…``): OpenCV decodes the stream, the recogniser reads the cards, the daemon signs and
publishes its sightings, and the controller holds the round until the camera agrees with the shoe.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2

from hardware.sim.camera import SyntheticCamera, calibration_photos

BOUNDARY = "frame"


class StreamedCamera:
    """The synthetic table, served at ``url`` as ``multipart/x-mixed-replace`` JPEG frames, ``fps`` a second."""

    def __init__(self, fps: float = 5) -> None:
        self.table = SyntheticCamera(seed=3)
        self.fps = fps
        self._round = ""
        self._on_table: list[int] = []  # the positions (in the round) of the cards on the table, in order
        self._closing = threading.Event()
        camera = self

        class Stream(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
                self.end_headers()
                try:
                    while not camera._closing.is_set():
                        started = time.monotonic()
                        _ok, frame = camera.table.read()
                        jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
                        head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
                        self.wfile.write(head.encode() + jpeg + b"\r\n")
                        self.wfile.flush()
                        camera._closing.wait(max(0.0, 1 / camera.fps - (time.monotonic() - started)))
                except OSError:
                    return  # the daemon went away (killed, or reconnecting)

            def log_message(self, *_args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Stream)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/stream.mjpg"
        threading.Thread(target=self.server.serve_forever, name="camera", daemon=True).start()

    def turn_up(self, round_id: str, pending: dict[int, str]) -> None:
        """Turn up under the camera the cards whose check is ``pending`` (position → card), as many as the table holds
        (three): the dealer sweeps it at each round, and when it is full of cards the camera has already agreed on."""
        if self._round != round_id:
            self.table.clear()
            self._round, self._on_table = round_id, []
        for position, card in sorted(pending.items()):
            if position in self._on_table:
                continue
            if len(self._on_table) == self.table.places:
                if any(shown in pending for shown in self._on_table):
                    return  # the camera has not agreed on every card on the table yet
                self.table.clear()
                self._on_table = []
            self.table.deal(card)
            self._on_table.append(position)

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()


def calibrated(folder: Path) -> Path:
    """The deck's templates, as a studio makes them: one photo per card, ``studio cards calibrate``."""
    photos = folder / "photos"
    photos.mkdir(parents=True)
    for code, photo in calibration_photos().items():
        cv2.imwrite(str(photos / f"{code}.png"), photo)
    templates = folder / "deck.npz"
    subprocess.run(
        [sys.executable, "-m", "services.cli", "cards", "calibrate", str(photos), "--out", str(templates)],
        check=True, capture_output=True,
    )  # fmt: skip
    return templates
