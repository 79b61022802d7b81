"""The studio video timecode stamped on every card, so an operator can find it in the recording.

The studio's video clock runs at a fixed frame rate from a known reference (genlocked time of
day, possibly offset); ``VideoClock`` turns a wall-clock moment into ``HH:MM:SS:FF``. The camera
stamps its own frame times, so its cards carry the time of the frame the card was seen in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class VideoClock:
    fps: int = 25
    offset: float = 0.0  # seconds added to the wall clock (the video clock's drift or a chosen origin)
    now: Callable[[], float] = field(default=time.time, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.fps <= 120:
            raise ValueError(f"video frame rate must be 1–120 fps, got {self.fps}")

    def timecode(self, moment: float | None = None) -> str:
        """``HH:MM:SS:FF`` of ``moment`` (epoch seconds; default now), as time of day in UTC."""
        seconds = (self.now() if moment is None else moment) + self.offset
        frames = int(seconds * self.fps) % (86_400 * self.fps)
        whole, frame = divmod(frames, self.fps)
        return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}:{frame:02d}"
