"""Benchmark: the table camera recorded as HLS — CPU seconds per second of video, and frames per second achieved.

    .venv/bin/python bench/recorder.py [--seconds 20] [--fps 25] [--size 1280x720]

Path: ``studio record``'s recorder in this process, on the synthetic table (``sim://camera``, 1280×720, a card dealt
every second): the capture thread takes a frame every 1/fps s and stamps it, the encoding thread converts it to
yuv420p at ``--size`` and encodes it (libx264, veryfast, zerolatency) into 2 s MPEG-TS segments, the playlist
rewritten after each. Measured: the process's CPU seconds (every thread, x264's too) per second of video, and
frames encoded per second of video (the device's pace is ``--fps``: fewer means frames came late or were dropped).

The synthetic camera renders its frames in the same process: that is the camera's cost, not the recording's. It is
measured where it runs (the capture thread's CPU time in each ``read()``; OpenCV is held to one thread, so its
rendering stays on that thread) and taken off: the recorder's net CPU.

Floor, in the same run: PyAV alone encoding the same number of frames, pre-rendered (a cycle of 50 frames of the
same table), converted and encoded with the same codec settings into one MPEG-TS file, no capture, no segments,
no playlist, as fast as it goes. Ratio: the recorder's net CPU per second of video over the floor's.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import cv2

from hardware.camera.device import Capture
from hardware.sim.camera import SyntheticCamera
from services.recorder.recorder import Recorder
from services.recorder.sources import open_source
from services.recorder.writer import RecorderConfig, open_encoder, video_frame

cv2.setNumThreads(1)  # the camera's rendering on the capture thread alone, where its CPU time is counted
CYCLE = 50  # distinct frames pre-rendered for the floor (each 2.7 MB at 1280×720)
SEED = 3
DEVICE = f"sim://camera?seed={SEED}&interval=1"


def floor(frames: list[Any], count: int, config: RecorderConfig, directory: Path) -> tuple[float, float]:
    """PyAV encoding ``count`` frames as fast as it goes, as the recorder does: (CPU seconds, wall seconds)."""
    fps, size = config.fps, config.size
    container, stream = open_encoder(directory / "floor.ts", fps, size, gop=config.frames_per_segment)
    cpu, wall = time.process_time(), time.perf_counter()
    for index in range(count):
        for packet in stream.encode(video_frame(frames[index % len(frames)], size, index * 90_000 // fps)):
            container.mux(packet)
    container.mux(stream.encode(None))
    container.close()
    return time.process_time() - cpu, time.perf_counter() - wall


def rendered(count: int) -> list[Any]:
    """``count`` frames of the synthetic table with cards on it."""
    camera = SyntheticCamera(seed=SEED)
    for code in ("AS", "KH", "7D"):
        camera.deal(code)
    return [camera.read()[1] for _ in range(count)]


class Timed:
    """The synthetic camera, counting the CPU seconds its ``read()`` takes on the capture thread (its rendering)."""

    def __init__(self, camera: Capture) -> None:
        self.camera = camera
        self.cpu = 0.0

    def isOpened(self) -> bool:
        return self.camera.isOpened()

    def read(self) -> tuple[bool, Any]:
        started = time.thread_time()
        answer = self.camera.read()
        self.cpu += time.thread_time() - started
        return answer

    def release(self) -> None:
        self.camera.release()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of video to record")
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--size", default="1280x720", help="WIDTHxHEIGHT encoded")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.split("x"))
    size = (width, height)
    with tempfile.TemporaryDirectory() as directory:
        frames = rendered(min(CYCLE, round(args.seconds * args.fps)))
        config = RecorderConfig(Path(directory) / "out", fps=args.fps, size=size, segment_s=2.0)
        source = open_source(DEVICE)
        camera = Timed(source.open_capture())
        source.open_capture = lambda: camera
        recorder = Recorder(source, config)
        stop = threading.Event()
        timer = threading.Timer(args.seconds, stop.set)
        cpu = time.process_time()
        timer.start()
        stats = recorder.run(stop)
        recorder_cpu = time.process_time() - cpu
        floor_cpu, floor_wall = floor(frames, stats.frames, config, Path(directory))
        sizes = recorder.writer.stats.segment_sizes
    video = stats.video_s
    per_video = recorder_cpu / video
    render = camera.cpu / video
    net = per_video - render
    floor_per_video = floor_cpu / (stats.frames / args.fps)
    print(f"{video:.1f} s of video at {width}×{height}, {args.fps} fps: {stats.frames} frames, {stats.dropped} "
          f"dropped, {stats.segments} segments, {8 * sum(sizes) / video / 1e6:.2f} Mbit/s")  # fmt: skip
    rows = [
        ("recorder: capture, convert, encode, segment (process)", per_video, f"{stats.frames / video:.1f}"),
        ("  of which the synthetic camera rendering its frames", render, ""),
        ("  recorder net of the camera", net, ""),
        ("floor: PyAV converting, encoding pre-rendered frames", floor_per_video, f"{stats.frames / floor_wall:.1f}"),
    ]
    print(f"{'what':<58}{'CPU s / video s':>16}{'frames/s':>10}")
    for label, cpu_per_video, rate in rows:
        print(f"{label:<58}{cpu_per_video:>16.3f}{rate:>10}")
    gross = per_video / floor_per_video
    print(f"ratio recorder net / floor: {net / floor_per_video:.2f}× (with the camera's rendering: {gross:.2f}×)")
    figures = {
        "video_s": round(video, 2),
        "frames": stats.frames,
        "dropped": stats.dropped,
        "recorder_cpu_per_video_s": round(per_video, 3),
        "camera_render_cpu_per_video_s": round(render, 3),
        "recorder_net_cpu_per_video_s": round(net, 3),
        "recorder_fps": round(stats.frames / video, 1),
        "floor_cpu_per_video_s": round(floor_per_video, 3),
        "floor_fps": round(stats.frames / floor_wall, 1),
        "ratio_net": round(net / floor_per_video, 2),
        "mbit_s": round(8 * sum(sizes) / video / 1e6, 2),
    }
    print(json.dumps(figures))  # the last line: the figures


if __name__ == "__main__":
    main()
