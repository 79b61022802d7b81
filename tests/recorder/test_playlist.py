"""The playlist API the pages use: read what the recorder wrote, find the segment and offset of a moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from services.recorder.errors import RecorderError
from services.recorder.playlist import Playlist, PlaylistError, Segment, locate, read_playlist, render_playlist
from services.recorder.writer import HlsWriter, RecorderConfig
from services.shoe.timecode import VideoClock

pytestmark = pytest.mark.xdist_group("recorder-playlist")  # its session fixtures once, on one worker

T0 = 1_790_000_000.0  # 2026-09-21T14:13:20Z
FPS = 10


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two seconds of frames, a camera gap of three, then one more second: segments 0–1, a gap, segment 2."""
    out = tmp_path_factory.mktemp("recording")
    writer = HlsWriter(RecorderConfig(out, fps=FPS, size=(32, 32), segment_s=1.0, video_offset=-7.0), now=lambda: T0)
    image = np.zeros((32, 32, 3), np.uint8)
    for index in range(2 * FPS):
        writer.add(image, T0 + index / FPS)
    writer.gap()
    for index in range(FPS):
        writer.add(image, T0 + 5 + index / FPS)
    writer.close()
    return out / "index.m3u8"


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(T0 + seconds, UTC)


def test_the_written_playlist_reads_back_dated(recording: Path) -> None:
    segments = read_playlist(recording)
    clock = VideoClock(FPS, offset=-7.0)
    assert [(s.uri, s.start, s.duration, s.discontinuity) for s in segments] == [
        ("seg-00000000.ts", at(0), 1.0, False),
        ("seg-00000001.ts", at(1), 1.0, False),
        ("seg-00000002.ts", at(5), 1.0, True),
    ]
    assert [s.timecode for s in segments] == [clock.timecode(T0), clock.timecode(T0 + 1), clock.timecode(T0 + 5)]
    assert segments[0].timecode == "14:13:13:00"  # 14:13:20 UTC, the video clock seven seconds behind
    assert "#EXT-X-PROGRAM-DATE-TIME:2026-09-21T14:13:20.000Z\n" in recording.read_text()
    assert "#EXTINF:1.000,\nseg-00000000.ts\n" in recording.read_text()
    assert "#EXT-X-TARGETDURATION:1\n" in recording.read_text()


def test_the_target_duration_holds_the_segment_length_unless_a_segment_rounds_to_more() -> None:
    def target(*durations: float) -> str:
        segments = tuple(Segment(f"{n}.ts", at(n), duration, "") for n, duration in enumerate(durations))
        return render_playlist(Playlist(segments=segments), target=2).splitlines()[2]

    assert target() == target(2.0, 1.2) == target(2.499) == "#EXT-X-TARGETDURATION:2"
    assert target(2.0, 2.5) == "#EXT-X-TARGETDURATION:3"


def test_locate_finds_the_segment_and_the_offset(recording: Path) -> None:
    segments = read_playlist(recording)
    assert locate(segments, at(0)) == (segments[0], 0.0)
    assert locate(segments, at(0.25)) == (segments[0], 0.25)
    assert locate(segments, at(1)) == (segments[1], 0.0)  # a boundary: the segment it begins
    found = locate(segments, at(5.5))
    assert found is not None and found[0] == segments[2] and found[1] == pytest.approx(0.5)
    naive = datetime.fromtimestamp(T0 + 1.5, UTC).replace(tzinfo=None)
    assert locate(segments, naive) == (segments[1], 0.5)  # a naive moment is UTC
    elsewhere = at(0.5).astimezone(datetime.now().astimezone().tzinfo)
    assert locate(segments, elsewhere) == (segments[0], 0.5)


@pytest.mark.parametrize("seconds", [-0.001, 2.0, 3.5, 6.0, 86_400.0], ids=["before", "gap", "gap", "after", "day"])
def test_locate_finds_nothing_outside_the_recording(recording: Path, seconds: float) -> None:
    assert locate(read_playlist(recording), at(seconds)) is None


def test_locate_in_no_segments_finds_nothing() -> None:
    assert locate([], at(0)) is None


def test_a_segment_without_a_date_follows_the_previous_one(tmp_path: Path) -> None:
    path = tmp_path / "index.m3u8"
    path.write_text(
        "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:2026-09-21T13:33:20.500+00:00\n"
        "#EXTINF:2.0,\na.ts\n#EXTINF:1.5,\nb.ts\n"
    )
    first, second = read_playlist(path)
    assert second == Segment("b.ts", first.start + timedelta(seconds=2), 1.5, "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not an HLS playlist"),
        ("<html>", "not an HLS playlist"),
        ("#EXTM3U\n#EXTINF:2.0,\na.ts\n", "line 3: segment a.ts has no #EXT-X-PROGRAM-DATE-TIME"),
        ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-09-21T13:33:20Z\na.ts\n", "line 3: segment a.ts has no #EXTINF"),
        ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n", "line 2: expected an ISO 8601 date and time"),
        ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-09-21T13:33:20\n", "names no time zone"),
        ("#EXTM3U\n#EXTINF:nan,\n", "expected a duration in seconds, got 'nan'"),
        ("#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:-1\n", "expected a whole number"),
    ],
)
def test_an_unreadable_playlist_is_a_recorder_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "index.m3u8"
    path.write_text(text)
    with pytest.raises(PlaylistError, match=message) as refused:
        read_playlist(path)
    assert isinstance(refused.value, RecorderError) and refused.value.code == "playlist_unreadable"


def test_a_missing_playlist_is_a_recorder_error(tmp_path: Path) -> None:
    with pytest.raises(RecorderError, match="cannot read .*index.m3u8: No such file or directory"):
        read_playlist(tmp_path / "index.m3u8")
    (tmp_path / "bytes.m3u8").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RecorderError, match="cannot read"):
        read_playlist(tmp_path / "bytes.m3u8")
