"""``studio record``: a table's camera recorded as HLS (H.264 MPEG-TS segments and a playlist dated per segment)."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from services.cli.arguments import frame_rate, table_id
from services.cli.commands import help_of
from services.observability.logs import configure as configure_logs
from services.recorder.errors import RecorderError
from services.recorder.recorder import Recorder
from services.recorder.sources import open_source
from services.recorder.writer import RecorderConfig, checked_size

SIZE = re.compile(r"(\d{1,5})[x×](\d{1,5})")


def frame_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT``, one H.264 can encode (``checked_size``)."""
    match = SIZE.fullmatch(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1280x720, got {text!r}")
    try:
        return checked_size(int(match[1]), int(match[2]))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _bounded(kind: str, high: float, unit: str, signed: bool = False) -> Any:
    """A parser of a number of ``unit`` within 0 (excluded) to ``high``, or within ±``high`` when ``signed``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {text!r}") from None
        if signed and not -high <= value <= high:  # NaN fails this too
            raise argparse.ArgumentTypeError(f"{kind} is {-high:g} to {high:g} {unit}, got {text}")
        if not signed and not 0 < value <= high:
            raise argparse.ArgumentTypeError(f"{kind} is more than 0 and at most {high:g} {unit}, got {text}")
        return value

    return parse


def register(commands: Any) -> None:
    record = commands.add_parser("record", help=help_of("record"))
    record.add_argument(
        "--table", required=True, type=table_id, metavar="T", help="the table filmed (named in the logs)"
    )
    record.add_argument(
        "--device",
        required=True,
        metavar="URL",
        help="camera://0, camera://rtsp://…, a video file, or sim://camera?seed=N",
    )
    record.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="the folder of index.m3u8 and its segments"
    )
    record.add_argument("--segment-s", type=_bounded("a segment", 600, "seconds"), default=2.0, metavar="S",
                        help="seconds per segment (default 2)")  # fmt: skip
    record.add_argument("--retain-h", type=_bounded("retention", 8784, "hours"), default=24.0, metavar="H",
                        help="hours a segment is kept (default 24)")  # fmt: skip
    record.add_argument("--fps", type=frame_rate, default=25, help="frames per second taken and timecoded")
    record.add_argument(
        "--size", type=frame_size, default=(1280, 720), metavar="WxH", help="WIDTHxHEIGHT encoded (default 1280x720)"
    )
    offset = _bounded("a video clock offset", 86_400, "seconds", signed=True)
    record.add_argument(
        "--video-offset", type=offset, default=0.0, metavar="S",
        help="seconds from UTC time of day to the studio video clock (the shoe daemon's --tc-offset)",
    )  # fmt: skip
    record.set_defaults(run=run_record)


def run_record(args: argparse.Namespace) -> int:
    configure_logs()
    try:
        config = RecorderConfig(args.out, args.fps, args.size, args.segment_s, args.retain_h, args.video_offset)
        source = open_source(args.device)
    except (RecorderError, ValueError) as error:
        print(f"studio record: {error}", file=sys.stderr)
        return 2
    try:
        recorder = Recorder(source, config)
    except RecorderError as error:
        source.close()
        print(f"studio record: {error}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    log = logging.getLogger("studio.recorder")
    width, height = config.size
    log.info("table %s: recording %s at %dx%d, %d fps into %s", args.table, args.device, width, height, config.fps,
             config.out)  # fmt: skip
    stats = recorder.run(stop)
    log.info(
        "table %s: recorded %.1f s (%d frames, %d dropped, %d segments)",
        args.table, stats.video_s, stats.frames, stats.dropped, stats.segments,
    )  # fmt: skip
    return 0
