"""The recorder's HLS playlist: written after each finished segment, read by the API and pages to find a moment.

Each segment is dated twice: ``#EXT-X-PROGRAM-DATE-TIME`` (the wall time of its first frame, UTC, milliseconds)
and ``#EXT-X-STUDIO-TIMECODE`` (the studio video timecode of that frame, the clock the shoe daemon stamps its
cards with). ``locate`` turns a wall-time moment into a segment and an offset into it. This module loads neither
PyAV nor OpenCV: the API imports it.
"""

from __future__ import annotations

import bisect
import math
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from services.recorder.errors import PlaylistError, RecorderError

__all__ = [
    "Playlist",
    "PlaylistError",
    "RecorderError",
    "Segment",
    "format_moment",
    "locate",
    "parse_playlist",
    "read_playlist",
    "render_playlist",
    "write_playlist",
]

PLAYLIST_NAME = "index.m3u8"
VERSION = 3
TIMECODE_TAG = "#EXT-X-STUDIO-TIMECODE:"


@dataclass(frozen=True)
class Segment:
    """One MPEG-TS file of the recording: its URI (relative to the playlist), first frame's time, length, timecode."""

    uri: str
    start: datetime  # aware, UTC: the wall time of its first frame (to the millisecond)
    duration: float  # seconds
    timecode: str  # HH:MM:SS:FF of its first frame ("" when the playlist names none)
    discontinuity: bool = False  # its timestamps do not follow the previous segment's (a restart, a camera gap)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.duration)


@dataclass(frozen=True)
class Playlist:
    media_sequence: int = 0  # the sequence number of the first segment listed
    discontinuity_sequence: int = 0
    segments: tuple[Segment, ...] = field(default_factory=tuple)


def format_moment(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``: ``2026-12-04T13:00:00.040Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def render_playlist(playlist: Playlist, target: int = 1) -> str:
    """The playlist's text: the header, then per segment its dates, its length and its URI.

    The target duration is ``target`` (the recorder's: its segment length, rounded up), raised when a segment's
    length rounds to more: HLS wants it stable, and no segment longer than it once rounded.
    """
    durations = [round(segment.duration, 3) for segment in playlist.segments]
    target = max([1, target, *(math.floor(duration + 0.5) for duration in durations)])
    lines = ["#EXTM3U", f"#EXT-X-VERSION:{VERSION}", f"#EXT-X-TARGETDURATION:{target}"]
    lines.append(f"#EXT-X-MEDIA-SEQUENCE:{playlist.media_sequence}")
    if playlist.discontinuity_sequence:
        lines.append(f"#EXT-X-DISCONTINUITY-SEQUENCE:{playlist.discontinuity_sequence}")
    for segment, duration in zip(playlist.segments, durations, strict=True):
        if segment.discontinuity:
            lines.append("#EXT-X-DISCONTINUITY")
        lines.append(f"#EXT-X-PROGRAM-DATE-TIME:{format_moment(segment.start)}")
        if segment.timecode:
            lines.append(f"{TIMECODE_TAG}{segment.timecode}")
        lines += [f"#EXTINF:{duration:.3f},", segment.uri]
    return "\n".join(lines) + "\n"


def write_playlist(path: Path, playlist: Playlist, target: int = 1) -> None:
    """Write the playlist atomically: a reader sees the old one or the new one, never half of either."""
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8") as file:
        file.write(render_playlist(playlist, target))
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def parse_playlist(text: str, name: str = "playlist") -> Playlist:
    """A media playlist's segments, dated; a segment with no date of its own follows the previous one."""
    lines = [line.strip() for line in text.splitlines()]
    if not lines or lines[0] != "#EXTM3U":
        raise PlaylistError(f"{name}: not an HLS playlist (no #EXTM3U first line)")
    media_sequence = discontinuity_sequence = 0
    segments: list[Segment] = []
    start: datetime | None = None
    duration: float | None = None
    timecode = ""
    discontinuity = False
    for number, line in enumerate(lines[1:], start=2):
        where = f"{name}: line {number}"
        if not line or (line.startswith("#") and not line.startswith("#EXT")):
            continue
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            media_sequence = _whole(line, where)
        elif line.startswith("#EXT-X-DISCONTINUITY-SEQUENCE:"):
            discontinuity_sequence = _whole(line, where)
        elif line == "#EXT-X-DISCONTINUITY":
            discontinuity = True
        elif line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            start = _moment(line.partition(":")[2], where)
        elif line.startswith(TIMECODE_TAG):
            timecode = line.removeprefix(TIMECODE_TAG)
        elif line.startswith("#EXTINF:"):
            duration = _seconds(line.partition(":")[2].partition(",")[0], where)
        elif not line.startswith("#"):
            if duration is None:
                raise PlaylistError(f"{where}: segment {line} has no #EXTINF before it")
            if start is None:
                raise PlaylistError(f"{where}: segment {line} has no #EXT-X-PROGRAM-DATE-TIME (nor one before it)")
            segments.append(Segment(line, start, duration, timecode, discontinuity))
            start, duration, timecode, discontinuity = segments[-1].end, None, "", False
    return Playlist(media_sequence, discontinuity_sequence, tuple(segments))


def read_playlist(path: Path | str) -> list[Segment]:
    """The segments of the playlist at ``path``, oldest first; ``PlaylistError`` when it cannot be read."""
    return list(load_playlist(Path(path)).segments)


def load_playlist(path: Path) -> Playlist:
    """The whole playlist at ``path`` (its sequence numbers too); ``PlaylistError`` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise PlaylistError(f"cannot read {path}: {reason}") from None
    return parse_playlist(text, str(path))


def locate(segments: list[Segment], moment: datetime) -> tuple[Segment, float] | None:
    """The segment that holds ``moment`` (a naive moment is UTC) and the seconds into it; None outside them all."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    starts = [segment.start for segment in segments]
    index = bisect.bisect_right(starts, moment) - 1
    if index < 0:
        return None
    segment = segments[index]
    offset = (moment - segment.start).total_seconds()
    return (segment, offset) if offset < segment.duration else None


def _whole(line: str, where: str) -> int:
    value = line.partition(":")[2]
    if not value.isdigit():
        raise PlaylistError(f"{where}: expected a whole number in {line!r}")
    return int(value)


def _seconds(value: str, where: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise PlaylistError(f"{where}: expected a duration in seconds, got {value!r}") from None
    if not 0 <= seconds < math.inf:
        raise PlaylistError(f"{where}: expected a duration in seconds, got {value!r}")
    return seconds


def _moment(value: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise PlaylistError(f"{where}: expected an ISO 8601 date and time, got {value!r}") from None
    if moment.tzinfo is None:
        raise PlaylistError(f"{where}: {value!r} names no time zone")
    return moment.astimezone(UTC)
