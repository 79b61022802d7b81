"""Recording the synthetic table and a video file: segments open on a keyframe, dated by wall time and timecode."""

from __future__ import annotations

import itertools
import math
import threading
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from hardware.serial_shoe.driver import Backoff
from services.recorder.errors import DeviceError
from services.recorder.playlist import load_playlist, read_playlist
from services.recorder.recorder import Recorder
from services.recorder.sources import Source, open_source
from services.recorder.writer import RecorderConfig
from services.shoe.timecode import VideoClock

FPS = 25


def decoded(path: Path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))


def test_six_seconds_of_the_synthetic_table_make_dated_decodable_segments(tmp_path: Path) -> None:
    config = RecorderConfig(tmp_path, fps=FPS, size=(640, 360), segment_s=2.0, video_offset=3.5)
    recorder = Recorder(open_source("sim://camera?seed=5&interval=0.5"), config)
    stop = threading.Event()
    timer = threading.Timer(6.0, stop.set)
    timer.start()
    try:
        stats = recorder.run(stop)
    finally:
        timer.cancel()
    text = (tmp_path / "index.m3u8").read_text()
    assert text.startswith("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:")
    assert "#EXT-X-MEDIA-SEQUENCE:0\n" in text
    segments = read_playlist(tmp_path / "index.m3u8")
    target = max(2, *(math.floor(segment.duration + 0.5) for segment in segments))  # 2 unless a segment ran long
    assert f"#EXT-X-TARGETDURATION:{target}\n" in text
    assert len(segments) >= 2 and stats.segments == len(segments) and stats.dropped == 0
    assert [segment.uri for segment in segments] == [f"seg-{n:08d}.ts" for n in range(len(segments))]
    assert sorted(path.name for path in tmp_path.glob("seg-*")) == [segment.uri for segment in segments]
    clock = VideoClock(FPS, offset=3.5)
    for before, after in itertools.pairwise(segments):
        step = (after.start - before.start).total_seconds()
        assert 1.7 <= step <= 6.0, step  # 50 frames taken at the camera's pace: two seconds, more on a busy machine
        assert after.start == before.end  # each lasts until the next one's first frame
    origin: int | None = None
    for number, segment in enumerate(segments):
        assert segment.start.utcoffset() == timedelta(0)
        assert segment.timecode == clock.timecode(segment.start.timestamp())
        frames = decoded(tmp_path / segment.uri)
        assert frames[0].key_frame
        assert {(frame.width, frame.height) for frame in frames} == {(640, 360)}
        if number < len(segments) - 1:  # a full segment: its frames, however long the camera took to give them
            assert len(frames) == config.frames_per_segment
        # presentation times are capture times: the first frame's is its segment's start, from the first segment's
        first = frames[0].pts
        assert first is not None and frames[-1].pts is not None
        origin = first if origin is None else origin
        since = float((first - origin) * Fraction(1, 90_000))
        assert since == pytest.approx((segment.start - segments[0].start).total_seconds(), abs=0.005)
        spread = float((frames[-1].pts - first) * Fraction(1, 90_000))
        assert spread == pytest.approx(segment.duration * (len(frames) - 1) / len(frames), abs=0.1)
    assert sum(len(decoded(tmp_path / segment.uri)) for segment in segments) == stats.frames


def test_a_video_file_is_recorded_at_the_frame_rate_and_ends_with_it(tmp_path: Path) -> None:
    film = tmp_path / "table.mp4"
    with av.open(str(film), "w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height = 160, 120
        stream.pix_fmt = "yuv420p"
        for index in range(20):
            image = np.full((120, 160, 3), index * 10, np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="bgr24")):
                container.mux(packet)
        container.mux(stream.encode())
    out = tmp_path / "out"
    recorder = Recorder(open_source(str(film)), RecorderConfig(out, fps=FPS, size=(96, 64), segment_s=0.4))
    stats = recorder.run(threading.Event())  # nobody stops it: the film's end does
    playlist = load_playlist(out / "index.m3u8")
    assert stats.frames == 20 and [len(decoded(out / s.uri)) for s in playlist.segments] == [10, 10]
    assert playlist.segments[0].duration == pytest.approx(0.4, abs=0.05)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("usb://0", "usb://0: unknown device usb://"),
        ("sim://serial", "unknown device sim://serial"),
        ("sim://camera?seed=x", "seed must be a number, got 'x'"),
        ("sim://camera?interval=0", "interval must be within 0.005–3600.0, got 0"),
        ("sim://camera?templates=t.npz", "unknown option 'templates'"),
        ("camera://front", "expected camera://INDEX"),
        ("/nonexistent/table.mp4", "no such video file"),
    ],
)
def test_a_bad_device_url_says_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(DeviceError, match=message) as refused:
        open_source(url)
    assert refused.value.code == "device_url"


def test_a_file_that_is_no_video_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.mp4").write_text("not a film")
    with pytest.raises(DeviceError, match="cannot read it as a video"):
        open_source(str(tmp_path / "notes.mp4"))


def test_a_camera_that_drops_out_is_opened_again_and_the_gap_marked(tmp_path: Path) -> None:
    stop = threading.Event()
    opened: list[Flaky] = []

    def open_capture() -> Flaky:
        opened.append(Flaky(frames=6 if len(opened) < 2 else 0))
        if len(opened) == 3:
            stop.set()  # the third time it does not open: enough
        return opened[-1]

    source = Source("camera://flaky", open_capture, paced=False, live=True, backoff=Backoff(first=0.01, cap=0.01))
    stats = Recorder(source, RecorderConfig(tmp_path, fps=FPS, size=(64, 48), segment_s=1.0)).run(stop)
    playlist = load_playlist(tmp_path / "index.m3u8")
    assert (stats.frames, stats.gaps) == (12, 3)
    assert [(len(decoded(tmp_path / s.uri)), s.discontinuity) for s in playlist.segments] == [(6, False), (6, True)]
    assert all(capture.released for capture in opened)


class Flaky:
    """A camera that delivers ``frames`` frames, then stops (one of none does not open)."""

    def __init__(self, frames: int) -> None:
        self.left = frames
        self.opened = frames > 0
        self.released = False

    def isOpened(self) -> bool:
        return self.opened

    def read(self) -> tuple[bool, object]:
        if self.left == 0:
            return False, None
        self.left -= 1
        return True, np.zeros((48, 64, 3), np.uint8)

    def release(self) -> None:
        self.released = True
