"""The recorder: a device's frames taken at its own pace on one thread, encoded into HLS on another.

The capture thread stamps each frame with ``now()`` as it arrives and queues it; the encoding thread writes it
(``HlsWriter``). A queue that is full (the encoder more than ``backlog_s`` seconds behind) drops the new frame
rather than delay the capture: a frame's stamp is always when it was filmed. Stopping (``stop`` set, or a video
file at its end) finishes the segment under way and writes the playlist.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from services.recorder.sources import Frame, Gap, Source
from services.recorder.writer import HlsWriter, RecorderConfig

log = logging.getLogger("studio.recorder")


@dataclass(frozen=True)
class RecordStats:
    frames: int  # encoded
    dropped: int  # captured but not encoded: the encoder was too far behind
    segments: int  # finished in this run
    gaps: int  # times the device dropped out
    video_s: float  # seconds of video recorded (first frame to the last segment's end)


class Recorder:
    """``run(stop)`` records ``source`` into ``config.out`` until ``stop`` is set or the source ends."""

    def __init__(
        self, source: Source, config: RecorderConfig, now: Callable[[], float] = time.time, backlog_s: float = 2.0
    ) -> None:
        self.source = source
        self.config = config
        self.now = now
        self.writer = HlsWriter(config, now)  # the folder is checked (and locked) before any frame is taken
        self.backlog = max(2, round(backlog_s * config.fps))
        self.dropped = 0
        self.gaps = 0

    def run(self, stop: threading.Event) -> RecordStats:
        frames: queue.Queue[Frame | Gap] = queue.Queue(self.backlog)
        failures: list[BaseException] = []

        def capture() -> None:
            try:
                for item in self.source.frames(stop, self.config.fps, self.now):
                    try:
                        frames.put_nowait(item)
                    except queue.Full:
                        self.dropped += 1
            except BaseException as error:  # handed to the encoding thread, which raises it once the recording is shut
                failures.append(error)

        capturing = threading.Thread(target=capture, name="recorder-capture", daemon=True)
        capturing.start()
        first: float | None = None
        try:
            while capturing.is_alive() or not frames.empty():
                try:
                    item = frames.get(timeout=0.1)
                except queue.Empty:
                    continue
                if isinstance(item, Gap):
                    self.gaps += 1
                    log.warning("%s: %s; the segment under way is finished", self.source.url, item.reason)
                    self.writer.gap()
                    continue
                first = item.moment if first is None else first
                self.writer.add(item.image, item.moment)
        finally:
            stop.set()
            capturing.join(timeout=10)
            self.writer.close()
        if failures:
            raise failures[0]
        if self.dropped:
            log.warning("%s: %d frames dropped: the encoder could not keep up", self.source.url, self.dropped)
        segments = self.writer.playlist.segments
        end = segments[-1].end.timestamp() if segments else first
        video_s = 0.0 if first is None or end is None else max(0.0, end - first)
        stats = self.writer.stats
        return RecordStats(stats.frames, self.dropped, stats.segments, self.gaps, round(video_s, 3))
