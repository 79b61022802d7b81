"""Where the recorder's frames come from, by device URL, each frame stamped with the wall time it was captured.

camera://0                       a V4L2 device index (``cv2.VideoCapture(0)``)
camera://rtsp://host/stream      any stream or device path OpenCV opens, passed to it whole (its query too)
/path/to/table.mp4               a video file, read at ``--fps``; the recording ends with it
sim://camera?seed=7&interval=1   the synthetic table (``hardware.sim.camera``): a dealer lays shuffled cards on it
                                 every ``interval`` seconds and sweeps it when it is full; rendered at ``--fps``

A camera that stops delivering is opened again (with a growing delay); the gap ends the segment under way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import av
import cv2

from hardware.camera.device import Capture
from hardware.serial_shoe.driver import Backoff
from hardware.sim.camera import SyntheticCamera, deal_forever
from services.recorder.errors import DeviceError

SIM_OPTIONS: dict[str, tuple[type[int] | type[float], float, float]] = {
    "seed": (int, 0, 2**63 - 1),
    "interval": (float, 0.005, 3600),  # seconds between dealt cards
}
EXPECTED = "expected camera://INDEX, camera://URL, sim://camera or a video file"


@dataclass(frozen=True, slots=True)
class Frame:
    image: Any  # BGR, as OpenCV reads it
    moment: float  # epoch seconds: when it was captured


@dataclass(frozen=True, slots=True)
class Gap:
    reason: str  # why frames stopped for a while (the camera dropped out)


class Source:
    """A device's frames: ``frames(stop)`` yields each one stamped, and a ``Gap`` where the device dropped out."""

    def __init__(
        self,
        url: str,
        open_capture: Callable[[], Capture],
        *,
        paced: bool,
        live: bool,
        dealer: Callable[[threading.Event], None] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.url = url
        self.open_capture = open_capture
        self.paced = paced  # its ``read()`` returns at once (a file, the synthetic table): frames are taken at fps
        self.live = live  # a camera: opened again when it stops; else its end is the recording's
        self.dealer = dealer
        self.backoff = backoff or Backoff()
        self.first: Capture | None = None  # opened by ``open_source`` to check the device, used first

    def close(self) -> None:
        """Let go of the capture opened to check the device, when no frame was taken from it."""
        if self.first is not None:
            self.first.release()
            self.first = None

    def frames(self, stop: threading.Event, fps: int, clock: Callable[[], float] = time.time) -> Iterator[Frame | Gap]:
        """Frames stamped with ``clock()`` as each arrives, until ``stop`` is set or a file (or the table) ends."""
        dealing = threading.Event()
        dealer = None
        if self.dealer is not None:
            dealer = threading.Thread(target=self.dealer, args=(dealing,), name="recorder-sim-dealer", daemon=True)
            dealer.start()
        delays = self.backoff.delays()
        try:
            while not stop.is_set():
                capture, self.first = self.first or self.open_capture(), None
                try:
                    if not capture.isOpened():
                        if not self.live:
                            return
                        yield Gap("cannot open the camera")
                        stop.wait(next(delays))
                        continue
                    delays = self.backoff.delays()
                    yield from self._read(capture, stop, fps, clock)
                finally:
                    capture.release()
                if not self.live or stop.is_set():
                    return
                yield Gap("the camera stopped delivering frames")
                stop.wait(next(delays))
        finally:
            dealing.set()
            if dealer is not None:
                dealer.join(timeout=5)

    def _read(self, capture: Capture, stop: threading.Event, fps: int, clock: Callable[[], float]) -> Iterator[Frame]:
        period = 1 / fps
        due = time.monotonic()
        while not stop.is_set():
            if self.paced:  # one frame a period at most: a frame that came late delays the next, none is rushed
                wait = due - time.monotonic()
                if wait > 0 and stop.wait(wait):
                    return
                due = max(due, time.monotonic()) + period
            ok, image = capture.read()
            moment = clock()
            if not ok or image is None:
                return
            yield Frame(image, moment)


def open_source(url: str) -> Source:
    """The source a device URL names, checked: a camera or file that does not open is refused here."""
    parts = urlsplit(url)
    if parts.scheme == "sim" and parts.netloc == "camera" and parts.path in ("", "/"):
        return _synthetic(url, parts.query)
    if parts.scheme == "camera":
        rest = url[len("camera://") :]
        if rest.isdigit():
            device: int | str = int(rest)
        elif "://" in rest or rest.startswith("/"):
            device = rest
        else:
            raise DeviceError(f"{url}: expected camera://INDEX (camera://0), camera://rtsp://… or camera:///dev/…")
        return _opened(Source(url, lambda: cv2.VideoCapture(device), paced=False, live=True), "cannot open the camera")
    if parts.scheme in ("", "file") and url:
        path = Path(parts.path if parts.scheme == "file" else url)
        if not path.is_file():
            raise DeviceError(f"{url}: no such video file ({EXPECTED})")
        _probe(url, path)
        source = Source(url, lambda: cv2.VideoCapture(str(path)), paced=True, live=False)
        return _opened(source, "cannot read it as a video")
    raise DeviceError(f"{url}: unknown device {parts.scheme}://{parts.netloc} ({EXPECTED})")


def _probe(url: str, path: Path) -> None:
    """Refuse a file that holds no video, in one line (OpenCV's FFmpeg would print its complaint on stderr)."""
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise DeviceError(f"{url}: the file holds no video stream")
    except av.FFmpegError as error:
        raise DeviceError(f"{url}: cannot read it as a video ({error.strerror or error})") from None


def _opened(source: Source, failure: str) -> Source:
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)  # its failure is said in one line, below
    try:
        capture = source.open_capture()
    finally:
        cv2.utils.logging.setLogLevel(level)
    if not capture.isOpened():
        capture.release()
        raise DeviceError(f"{source.url}: {failure}")
    source.first = capture
    return source


def _synthetic(url: str, query: str) -> Source:
    options = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
    unknown = sorted(set(options) - set(SIM_OPTIONS))
    if unknown:
        raise DeviceError(f"{url}: unknown option {unknown[0]!r} (sim://camera takes {', '.join(SIM_OPTIONS)})")
    seed = int(_number(url, "seed", options.get("seed", "0")))
    interval = _number(url, "interval", options.get("interval", "1.0"))
    camera = _table(seed)
    camera.read()  # the first frame renders the table's felt once for all: not while the recording waits
    return Source(
        url,
        lambda: camera,
        paced=True,
        live=False,
        dealer=lambda stop: deal_forever(camera, seed, interval, stop),
    )


def _table(seed: int) -> SyntheticCamera:
    """The synthetic table of ``seed`` with three places, or as many as its layout fits (some seeds fit two)."""
    for places in (3, 2):
        try:
            return SyntheticCamera(seed=seed, places=places)
        except ValueError:
            continue
    return SyntheticCamera(seed=seed, places=1)


def _number(url: str, name: str, value: str) -> float:
    kind, low, high = SIM_OPTIONS[name]
    try:
        number = kind(value)
    except ValueError:
        raise DeviceError(f"{url}: {name} must be a number, got {value!r}") from None
    if not low <= number <= high:  # NaN fails this too
        raise DeviceError(f"{url}: {name} must be within {kind(low)}–{kind(high)}, got {value}")
    return number
