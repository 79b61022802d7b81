"""A camera as a card reader: frames in, confirmed face-up cards out.

A card counts as seen once the recogniser has read the same card at the same place in
``confirm`` consecutive frames; an unknown read or a frame without it starts the count again.
Each confirmed card is reported once while it stays on the table. The camera sees face-up cards
only: face-down cards and private hands are read by the shoe.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2

from hardware.camera.recognizer import Detection, Image
from hardware.serial_shoe.driver import Backoff, Connected, Disconnected

CROP_SIDE = 240  # the evidence crop's longest side, pixels (a card's index and pips stay legible)
CROP_QUALITY = 80  # JPEG quality of the evidence crop


@dataclass(frozen=True, slots=True)
class CardSeen:
    code: str
    confidence: float
    frame_time: float  # epoch seconds of the frame that confirmed it
    box: tuple[int, int, int, int]
    crop: bytes = b""  # the card as read, from the frame that confirmed it: JPEG (the evidence kept with the card)


def evidence_crop(frame: Any, box: tuple[int, int, int, int]) -> bytes:
    """A JPEG of the card's box (and a little around it) in ``frame``, its longest side at most ``CROP_SIDE``."""
    x, y, w, h = box
    margin = max(w, h) // 10
    height, width = frame.shape[:2]
    left, top = max(0, x - margin), max(0, y - margin)
    right, bottom = min(width, x + w + margin), min(height, y + h + margin)
    crop = frame[top:bottom, left:right]
    if crop.size == 0:
        return b""
    scale = CROP_SIDE / max(crop.shape[:2])
    if scale < 1:
        crop = cv2.resize(crop, (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale))))
    ok, encoded = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    return bytes(encoded) if ok else b""


class Capture(Protocol):
    def isOpened(self) -> bool: ...

    def read(self) -> tuple[bool, Any]: ...

    def release(self) -> None: ...


@dataclass
class _Track:
    centre: tuple[float, float]
    size: float
    card: str | None
    streak: int = 1
    reported: bool = False
    best: float = 0.0


@dataclass
class Confirmer:
    frames: int = 3  # consecutive frames that must agree
    reach: float = 0.5  # how far a card may move between frames, as a share of its size
    _tracks: list[_Track] = field(default_factory=list)

    def update(self, detections: list[Detection]) -> list[Detection]:
        """Feed one frame's detections; returns those confirmed by this frame."""
        tracks, confirmed = [], []
        unmatched = list(self._tracks)
        for detection in detections:
            x, y, w, h = detection.box
            centre, size = (x + w / 2, y + h / 2), max(w, h)
            track = min(unmatched, key=lambda t: math.dist(t.centre, centre), default=None)
            if track is None or math.dist(track.centre, centre) > self.reach * size:
                track = _Track(centre, size, detection.card, streak=0)
            else:
                unmatched.remove(track)
            if detection.card is None or detection.card != track.card:
                track.card, track.streak, track.reported, track.best = detection.card, 0, False, 0.0
            track.centre, track.size = centre, size
            if detection.card is not None:
                track.streak += 1
                track.best = max(track.best, detection.confidence)
                if track.streak >= self.frames and not track.reported:
                    track.reported = True
                    confirmed.append(detection)
            tracks.append(track)
        self._tracks = tracks  # a card missing from this frame loses its streak
        return confirmed


class Reads(Protocol):
    """A recogniser: the glyph one (``recognizer.Recognizer``) or the one that learned the deck (``learned``)."""

    def recognize(self, frame: Image) -> list[Detection]: ...


class CameraReader:
    """Frames from a capture (``cv2.VideoCapture`` or the synthetic camera) → ``CardSeen`` events."""

    def __init__(
        self,
        open_capture: Callable[[], Capture],
        recognizer: Reads,
        confirm: int = 3,
        name: str = "camera",
        clock: Callable[[], float] = time.time,
        backoff: Backoff | None = None,
    ) -> None:
        self.open_capture = open_capture
        self.recognizer = recognizer
        self.confirm = confirm
        self.name = name
        self.clock = clock
        self.backoff = backoff or Backoff()
        self.frames = 0

    def events(self, stop: threading.Event) -> Iterator[CardSeen | Connected | Disconnected]:
        delays = self.backoff.delays()
        while not stop.is_set():
            capture = self.open_capture()
            if not capture.isOpened():
                delay = next(delays)
                yield Disconnected(self.name, "cannot open the camera", delay)
                stop.wait(delay)
                continue
            delays = self.backoff.delays()
            yield Connected(self.name)
            confirmer = Confirmer(self.confirm)
            try:
                while not stop.is_set():
                    ok, frame = capture.read()
                    moment = self.clock()
                    if not ok or frame is None:
                        delay = next(delays)
                        yield Disconnected(self.name, "the camera stopped delivering frames", delay)
                        stop.wait(delay)
                        break
                    self.frames += 1
                    for detection in confirmer.update(self.recognizer.recognize(frame)):
                        assert detection.card is not None
                        crop = evidence_crop(frame, detection.box)
                        yield CardSeen(detection.card, detection.confidence, moment, detection.box, crop)
            finally:
                capture.release()
