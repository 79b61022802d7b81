"""``studio record``: bad arguments are one line and exit status 2; SIGTERM ends it cleanly with a whole playlist."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import av
import pytest

from services.recorder.playlist import load_playlist
from tests.support import wait_until

pytestmark = pytest.mark.xdist_group("recorder-cli")  # its session fixtures once, on one worker

RECORD = [sys.executable, "-m", "services.cli", "record", "--table", "T1"]
BAD = [
    (["--device", "usb://0", "--out", "{tmp}/out"], "studio record: usb://0: unknown device usb://"),
    (["--device", "sim://camera?seed=-1", "--out", "{tmp}/out"], "seed must be within 0–9223372036854775807, got -1"),
    (["--device", "{tmp}/none.mp4", "--out", "{tmp}/out"], "none.mp4: no such video file"),
    (["--device", "sim://camera", "--out", "{tmp}/out", "--size", "1280x721"], "argument --size: a frame size is even"),
    (["--device", "sim://camera", "--out", "{tmp}/out", "--size", "hd"], "expected WIDTHxHEIGHT such as 1280x720"),
    (["--device", "sim://camera", "--out", "{tmp}/out", "--segment-s", "0"], "a segment is more than 0"),
    (["--device", "sim://camera", "--out", "{tmp}/file"], "cannot record into {tmp}/file: it is not a folder"),
    (["--device", "sim://camera", "--out", "{tmp}/file/out"], "cannot record into {tmp}/file/out: Not a directory"),
    (["--device", "sim://camera", "--out", "/proc/studio-recording"], "cannot record into /proc/studio-recording: "),
    (["--device", "sim://camera", "--out", "{tmp}/locked"], "{tmp}/locked: another recorder is writing there"),
]


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str]]:
    tmp = tmp_path_factory.mktemp("record")
    (tmp / "file").write_text("")
    (tmp / "locked").mkdir()
    lock = (tmp / "locked" / ".recorder.lock").open("w")  # held, as a running recorder holds it
    fcntl.flock(lock, fcntl.LOCK_EX)

    def run(argv: list[str]) -> tuple[int, str]:
        command = [*RECORD, *(arg.format(tmp=tmp) for arg in argv)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        return done.returncode, done.stderr

    try:
        with ThreadPoolExecutor(4) as pool:
            return [(status, err.replace(str(tmp), "{tmp}")) for status, err in pool.map(run, [a for a, _ in BAD])]
    finally:
        lock.close()


@pytest.mark.parametrize("case", range(len(BAD)), ids=[BAD[n][1][:40] for n in range(len(BAD))])
def test_bad_arguments_get_one_line_and_status_2(answers: list[tuple[int, str]], case: int) -> None:
    status, err = answers[case]
    assert "Traceback" not in err
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("studio record: ") and BAD[case][1] in err, err


def test_sigterm_finishes_the_segment_and_the_playlist(tmp_path: Path) -> None:
    out = tmp_path / "T1"
    log = tmp_path / "record.log"
    command = [*RECORD, "--device", "sim://camera?seed=9", "--out", str(out), "--size", "320x180", "--segment-s", "1"]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=os.environ.copy())
    try:
        wait_until(lambda: "seg-00000001.ts" in _text(out / "index.m3u8"), 30, "two segments in the playlist")
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        status = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert time.monotonic() - started < 5
    text = log.read_text()
    assert status == 0 and "Traceback" not in text, text
    playlist = load_playlist(out / "index.m3u8")
    assert len(playlist.segments) >= 3  # the segment under way when it was stopped is finished and listed
    assert sorted(path.name for path in out.iterdir() if path.name.startswith("seg-")) == [
        segment.uri for segment in playlist.segments
    ]  # no half-written segment is left
    with av.open(str(out / playlist.segments[-1].uri)) as container:
        frames = list(container.decode(video=0))
    assert frames and frames[0].key_frame and (frames[0].width, frames[0].height) == (320, 180)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
