"""Retention (on a fake clock), a recorder restarted on its own folder, one recorder per folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.recorder.errors import OutputError
from services.recorder.playlist import load_playlist
from services.recorder.writer import HlsWriter, RecorderConfig

T0 = 1_790_000_000.0  # epoch seconds: 2026-09-21T14:13:20Z
FPS = 5
IMAGE = np.zeros((48, 64, 3), np.uint8)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.value = now

    def __call__(self) -> float:
        return self.value


def feed(writer: HlsWriter, start: float, frames: int) -> None:
    for index in range(frames):
        writer.add(IMAGE, start + index / FPS)


def config(out: Path) -> RecorderConfig:
    return RecorderConfig(out, fps=FPS, size=(64, 48), segment_s=1.0, retain_h=1.0)


def test_old_segments_leave_the_playlist_and_the_disk(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    writer = HlsWriter(config(tmp_path), now=clock)
    feed(writer, T0, 4 * FPS + 1)  # four whole segments, and a fifth begun
    assert [s.uri for s in load_playlist(tmp_path / "index.m3u8").segments] == [f"seg-0000000{n}.ts" for n in range(4)]
    clock.value = T0 + 3600 + 2.5  # an hour on: the segments that ended before 2.5 s are past retention
    writer.close()
    playlist = load_playlist(tmp_path / "index.m3u8")
    assert playlist.media_sequence == 2
    assert [s.uri for s in playlist.segments] == ["seg-00000002.ts", "seg-00000003.ts", "seg-00000004.ts"]
    assert sorted(p.name for p in tmp_path.glob("seg-*")) == [s.uri for s in playlist.segments]
    assert "#EXT-X-MEDIA-SEQUENCE:2\n" in (tmp_path / "index.m3u8").read_text()
    assert writer.stats.pruned == 2


def test_a_restarted_recorder_carries_the_recording_on(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    first = HlsWriter(config(tmp_path), now=clock)
    feed(first, T0, 2 * FPS)
    first.close()
    (tmp_path / "seg-00000007.ts.part").write_bytes(b"left by a crash")
    second = HlsWriter(config(tmp_path), now=clock)
    assert not (tmp_path / "seg-00000007.ts.part").exists()
    feed(second, T0 + 60, FPS)
    clock.value = T0 + 3600 + 30  # the first run's segments are past retention, the second's are not
    second.close()
    playlist = load_playlist(tmp_path / "index.m3u8")
    assert (playlist.media_sequence, playlist.discontinuity_sequence) == (2, 0)
    [kept] = playlist.segments
    assert kept.uri == "seg-00000002.ts" and kept.discontinuity  # new timestamps: marked for players
    text = (tmp_path / "index.m3u8").read_text()
    assert "#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:" in text


def test_one_recorder_per_folder(tmp_path: Path) -> None:
    writer = HlsWriter(config(tmp_path))
    try:
        with pytest.raises(OutputError, match="another recorder is writing there") as refused:
            HlsWriter(config(tmp_path))
        assert refused.value.code == "output_unwritable"
    finally:
        writer.close()
    HlsWriter(config(tmp_path)).close()  # let go: the folder is free again


def test_a_file_is_no_output_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="it is not a folder"):
        HlsWriter(config(tmp_path / "file"))
    with pytest.raises(OutputError, match="Not a directory"):
        HlsWriter(config(tmp_path / "file" / "below"))
