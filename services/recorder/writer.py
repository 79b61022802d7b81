"""Stamped frames in, HLS out: H.264 MPEG-TS segments of a fixed number of frames and the playlist that dates them.

Each segment is its own file, encoded from its first frame (a keyframe) to its last, written as
``seg-NNNNNNNN.ts.part`` and renamed when finished; only then does the playlist (rewritten whole, atomically) name
it. Presentation timestamps are the frames' capture times, in 90 kHz ticks from the recording's first frame, so a
device that delivers late or unevenly plays back at the pace it was filmed. A segment lasts until the next one's
first frame (the last one: a mean frame interval past its last frame). Segments that ended more than ``retain_h``
hours before ``now()`` leave the playlist, then the disk. A recorder started on a folder that holds a recording
carries it on: the new frames follow its last segment, marked as a discontinuity.
"""

from __future__ import annotations

import fcntl
import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import av
from av.container import OutputContainer
from av.video.stream import VideoStream

from services.recorder.errors import OutputError, RecorderError
from services.recorder.playlist import PLAYLIST_NAME, Playlist, Segment, load_playlist, write_playlist
from services.shoe.timecode import VideoClock

CODEC: Final = "libx264"
ENCODER_OPTIONS = {"preset": "veryfast", "tune": "zerolatency"}
TIME_BASE = Fraction(1, 90_000)  # MPEG-TS's own clock
SEGMENT_FILE = re.compile(r"seg-\d{8}\.ts(\.part)?")
LOCK_NAME = ".recorder.lock"


def checked_size(width: int, height: int) -> tuple[int, int]:
    """``(width, height)`` if H.264 can encode it (even numbers, H.264's 4:2:0 halves both, within 16–7680 ×
    16–4320); else a ``ValueError`` naming it."""
    if not (16 <= width <= 7680 and 16 <= height <= 4320 and width % 2 == 0 and height % 2 == 0):
        raise ValueError(f"a frame size is even numbers within 16–7680 × 16–4320, got {width}x{height}")
    return width, height


@dataclass(frozen=True)
class RecorderConfig:
    out: Path
    fps: int = 25
    size: tuple[int, int] = (1280, 720)  # width, height
    segment_s: float = 2.0
    retain_h: float = 24.0
    video_offset: float = 0.0  # seconds from the wall clock to the studio video clock (``VideoClock.offset``)

    def __post_init__(self) -> None:
        checked_size(*self.size)
        if not 0 < self.segment_s <= 3600 or not 0 < self.retain_h < math.inf:
            raise ValueError(f"segments of {self.segment_s} s kept {self.retain_h} h: both must be positive")
        VideoClock(self.fps)  # refuses a frame rate it cannot count

    @property
    def frames_per_segment(self) -> int:
        return max(1, round(self.segment_s * self.fps))


def open_encoder(path: Path, fps: int, size: tuple[int, int], gop: int) -> tuple[OutputContainer, VideoStream]:
    """An MPEG-TS file with one H.264 stream (libx264, veryfast, zerolatency, yuv420p) timed in 90 kHz ticks."""
    container = av.open(str(path), "w", format="mpegts")
    stream = container.add_stream(CODEC, rate=fps, options=dict(ENCODER_OPTIONS))
    stream.width, stream.height = size
    stream.pix_fmt = "yuv420p"
    stream.codec_context.time_base = TIME_BASE
    stream.codec_context.gop_size = gop
    return container, stream


def video_frame(image: Any, size: tuple[int, int], pts: int) -> av.VideoFrame:
    """An OpenCV image (BGR, or grey) as a yuv420p frame of ``size``, at ``pts`` 90 kHz ticks."""
    frame = av.VideoFrame.from_ndarray(image, format="gray" if image.ndim == 2 else "bgr24")
    frame = frame.reformat(width=size[0], height=size[1], format="yuv420p")
    frame.pts, frame.time_base = pts, TIME_BASE
    return frame


@dataclass
class _Open:
    """The segment under way: its file, its encoder, its first and last frame times."""

    sequence: int
    container: OutputContainer
    stream: VideoStream
    first: float
    last: float
    discontinuity: bool
    frames: int = 0


@dataclass
class WriterStats:
    frames: int = 0
    segments: int = 0
    pruned: int = 0
    segment_sizes: list[int] = field(default_factory=list)  # bytes of each segment written


class HlsWriter:
    """Writes a recording into ``config.out``: ``add(image, moment)`` per frame, ``gap()`` where frames stopped
    coming for a while, ``close()`` at the end (the segment under way is finished and named in the playlist)."""

    def __init__(self, config: RecorderConfig, now: Callable[[], float] = time.time) -> None:
        self.config = config
        self.now = now
        self.clock = VideoClock(config.fps, offset=config.video_offset)
        self.playlist_path = config.out / PLAYLIST_NAME
        self.stats = WriterStats()
        self._origin: float | None = None
        self._last_pts = -1
        self._open: _Open | None = None
        if CODEC not in av.codecs_available:
            raise RecorderError(f"this PyAV ({av.__version__}) has no {CODEC} encoder: install PyAV's own wheel")
        self._lock = _lock(config.out)
        try:
            self.playlist = load_playlist(self.playlist_path) if self.playlist_path.exists() else Playlist()
            self._remove_unlisted()
            self._publish()
        except OSError as error:
            os.close(self._lock)
            raise OutputError(f"cannot record into {config.out}: {error.strerror or error}") from None
        except BaseException:
            os.close(self._lock)
            raise
        self._next = self.playlist.media_sequence + len(self.playlist.segments)
        self._discontinuity = bool(self.playlist.segments)  # new timestamps after the recording kept

    def add(self, image: Any, moment: float) -> None:
        """Encode one frame captured at ``moment`` (epoch seconds), starting a new segment when one is full."""
        segment = self._open
        if segment is not None and segment.frames >= self.config.frames_per_segment:
            self._finish(segment, end=moment)
            segment = None
        if segment is None:
            segment = self._start(moment)
        if self._origin is None:
            self._origin = moment
        pts = max(self._last_pts + 1, round((moment - self._origin) / TIME_BASE))
        self._last_pts = pts
        for packet in segment.stream.encode(video_frame(image, self.config.size, pts)):
            segment.container.mux(packet)
        segment.frames += 1
        segment.last = moment
        self.stats.frames += 1

    def gap(self) -> None:
        """Frames stopped coming: finish the segment under way; the next one is marked as a discontinuity."""
        if self._open is not None:
            self._finish(self._open, end=None)
        self._discontinuity = True

    def close(self) -> None:
        """Finish the segment under way, write the playlist, and let the folder go to another recorder."""
        try:
            if self._open is not None:
                self._finish(self._open, end=None)
            else:
                self._publish()
        finally:
            os.close(self._lock)

    def _start(self, moment: float) -> _Open:
        sequence, self._next = self._next, self._next + 1
        path = self.config.out / _part(sequence)
        container, stream = open_encoder(path, self.config.fps, self.config.size, self.config.frames_per_segment)
        segment = _Open(sequence, container, stream, moment, moment, self._discontinuity)
        self._discontinuity = False
        self._open = segment
        return segment

    def _finish(self, segment: _Open, end: float | None) -> None:
        self._open = None
        try:
            for packet in segment.stream.encode(None):
                segment.container.mux(packet)
        finally:
            segment.container.close()
        part = self.config.out / _part(segment.sequence)
        final = part.with_name(part.name.removesuffix(".part"))
        os.replace(part, final)
        if end is None:  # no next frame: the last one lasts a mean frame interval
            spread = segment.last - segment.first
            end = segment.last + (spread / (segment.frames - 1) if segment.frames > 1 else 1 / self.config.fps)
        start = _to_millisecond(segment.first)
        duration = max(0.001, (_to_millisecond(end) - start).total_seconds())
        timecode = self.clock.timecode(start.timestamp())
        kept = Segment(final.name, start, duration, timecode, segment.discontinuity)
        self.playlist = replace(self.playlist, segments=(*self.playlist.segments, kept))
        self.stats.segments += 1
        self.stats.segment_sizes.append(final.stat().st_size)
        self._publish()

    def _publish(self) -> None:
        """Drop what is past retention from the playlist, write it, then delete the dropped files."""
        horizon = self.now() - self.config.retain_h * 3600
        segments = list(self.playlist.segments)
        dropped: list[Segment] = []
        while segments and segments[0].end.timestamp() < horizon:
            dropped.append(segments.pop(0))
        self.playlist = Playlist(
            self.playlist.media_sequence + len(dropped),
            self.playlist.discontinuity_sequence + sum(segment.discontinuity for segment in dropped),
            tuple(segments),
        )
        write_playlist(self.playlist_path, self.playlist, math.ceil(self.config.segment_s))
        for segment in dropped:
            (self.config.out / segment.uri).unlink(missing_ok=True)
        self.stats.pruned += len(dropped)

    def _remove_unlisted(self) -> None:
        """Segment files the playlist does not name (a run stopped between writing one and listing it) go."""
        listed = {segment.uri for segment in self.playlist.segments}
        for path in self.config.out.iterdir():
            if SEGMENT_FILE.fullmatch(path.name) and path.name not in listed:
                path.unlink(missing_ok=True)


def _part(sequence: int) -> str:
    return f"seg-{sequence:08d}.ts.part"


def _to_millisecond(moment: float) -> datetime:
    exact = datetime.fromtimestamp(moment, UTC)
    return exact.replace(microsecond=exact.microsecond // 1000 * 1000)


def _lock(out: Path) -> int:
    """Make ``out`` if need be and hold its lock file: one recorder per folder; refused in one line otherwise."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"cannot record into {out}: it is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(out / LOCK_NAME, os.O_CREAT | os.O_WRONLY, 0o644)
    except OSError as error:
        raise OutputError(f"cannot record into {out}: {error.strerror or error}") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        raise OutputError(f"cannot record into {out}: another recorder is writing there") from None
    return descriptor
