"""Device URLs: which reader a shoe daemon listens to.

serial:///dev/ttyUSB0?dialect=monitor&baud=9600   a shoe on a serial port (dialect: monitor | line)
socket://10.0.0.7:4001?dialect=line               any other pyserial URL (socket, rfc2217, loop)
sim://serial?dialect=monitor&seed=7&interval=0.8&faults=garbage,split,misread,alarm
                                                  the pty simulator, dealing shuffled decks forever
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import SplitResult, parse_qs, urlsplit

import cv2

from hardware.camera import (
    DEFAULT_THRESHOLD,
    CameraReader,
    CardSeen,
    RecognitionError,
    Recognizer,
    calibrate,
)
from hardware.camera.device import Capture, Reads
from hardware.camera.learned import load_reader
from hardware.serial_shoe import DIALECTS, DriverEvent, SerialShoe
from hardware.sim import Faults, VirtualShoe, shuffled_deck
from hardware.sim.camera import SyntheticCamera, calibration_photos, deal_forever
from services.shoe.daemon import Device
from services.shoe.errors import ShoeError

PYSERIAL_SCHEMES = ("socket", "rfc2217", "loop", "spy", "alt", "hwgrep")
FAULTS = ("garbage", "split", "misread", "alarm")
N = TypeVar("N", int, float)


class DeviceURLError(ShoeError, ValueError):
    """A device address the shoe daemon cannot open (its scheme, its path, its options)."""

    code = "device_url"


@dataclass(frozen=True)
class DeviceSpec:
    source: str  # the ``source`` stamped on its cards: serial | camera | sim
    device: Device


def open_device(url: str) -> DeviceSpec:
    parts = urlsplit(url)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    if parts.scheme == "camera" or (parts.scheme == "sim" and parts.netloc == "camera"):
        return DeviceSpec("camera" if parts.scheme == "camera" else "sim", _camera(url, parts, query))
    serial_line = parts.scheme in ("serial", *PYSERIAL_SCHEMES) or (parts.scheme == "sim" and parts.netloc == "serial")
    if not serial_line:
        raise DeviceURLError(
            f"{url}: unknown device {parts.scheme}://{parts.netloc} (expected serial://, socket://, camera://, "
            "sim://serial or sim://camera)"
        )
    dialect = query.pop("dialect", "monitor")
    if dialect not in DIALECTS:
        raise DeviceURLError(f"{url}: unknown dialect {dialect!r} (expected {' or '.join(DIALECTS)})")
    baud = _number(url, query.pop("baud", "9600"), "baud", int)
    if parts.scheme == "sim":
        return DeviceSpec("sim", _simulated(url, dialect, baud, query))
    _no_leftovers(url, query)
    if parts.scheme == "serial":
        if not parts.path:
            raise DeviceURLError(f"{url}: no port path (expected serial:///dev/ttyUSB0)")
        return DeviceSpec("serial", SerialShoe(parts.path, dialect, baud).events)
    return DeviceSpec("serial", SerialShoe(f"{parts.scheme}://{parts.netloc}{parts.path}", dialect, baud).events)


def _camera(url: str, parts: SplitResult, query: dict[str, str]) -> Device:
    confirm = _number(url, query.pop("confirm", "3"), "confirm", int)
    given = query.pop("threshold", "")
    threshold = _number(url, given, "threshold", float) if given else None  # None: the recogniser's own
    templates_path = query.pop("templates", "")
    if parts.scheme == "camera":
        if not templates_path:
            raise DeviceURLError(f"{url}: a camera needs templates=FILE (make them with `studio cards calibrate`)")
        source = parts.netloc + parts.path
        _no_leftovers(url, query)
        device: int | str = int(source) if source.isdigit() else source
        opener: Callable[[], Capture] = lambda: cv2.VideoCapture(device)  # noqa: E731
        return CameraReader(opener, _reader(url, templates_path, threshold), confirm, name=url).events
    seed = _number(url, query.pop("seed", "0"), "seed", int)
    interval = _number(url, query.pop("interval", "1.0"), "interval", float)
    _no_leftovers(url, query)
    reader = (
        _reader(url, templates_path, threshold)
        if templates_path
        else Recognizer(calibrate(calibration_photos()), DEFAULT_THRESHOLD if threshold is None else threshold)
    )
    camera = SyntheticCamera(seed=seed)

    def events(stop: threading.Event) -> Iterator[DriverEvent | CardSeen]:
        dealer = threading.Thread(
            target=deal_forever, args=(camera, seed, interval, stop), name="sim-camera-dealer", daemon=True
        )
        dealer.start()
        try:
            yield from CameraReader(lambda: camera, reader, confirm, name=url).events(stop)
        finally:
            stop.set()
            dealer.join(timeout=interval + 1)

    return events


def _reader(url: str, path: str, threshold: float | None) -> Reads:
    try:
        return load_reader(path, threshold)
    except RecognitionError as error:
        raise DeviceURLError(f"{url}: {error}") from None


def _simulated(url: str, dialect: str, baud: int, query: dict[str, str]) -> Device:
    seed = _number(url, query.pop("seed", "0"), "seed", int)
    interval = _number(url, query.pop("interval", "1.0"), "interval", float)
    faults = [name for name in query.pop("faults", "").split(",") if name]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        raise DeviceURLError(f"{url}: unknown fault {unknown[0]!r} (expected some of {', '.join(FAULTS)})")
    _no_leftovers(url, query)
    chance = 0.1
    settings: dict[str, Any] = {name: chance for name in faults if name != "split"}
    shoe = VirtualShoe(dialect, faults=Faults(split="split" in faults, seed=seed, **settings))

    def events(stop: threading.Event) -> Iterator[DriverEvent | CardSeen]:
        def deal_forever() -> None:
            deck_number = 0
            while not stop.is_set():
                shoe.new_deck()
                shoe.deal_all(shuffled_deck(seed + deck_number), interval, stop)
                deck_number += 1

        dealer = threading.Thread(target=deal_forever, name="sim-dealer", daemon=True)
        dealer.start()
        try:
            yield from SerialShoe(str(shoe.path), dialect, baud).events(stop)
        finally:
            stop.set()
            dealer.join(timeout=interval + 1)
            shoe.close()

    return events


RANGES: dict[str, tuple[float, float]] = {
    "baud": (50, 4_000_000),
    "confirm": (1, 100),  # frames
    "threshold": (0.0, 1.0),
    "seed": (0, 2**63 - 1),
    "interval": (0.005, 3600.0),  # seconds between simulated cards: not a busy loop, not a frozen one
}


def _number(url: str, value: str, name: str, kind: Callable[[str], N]) -> N:
    try:
        number = kind(value)
    except ValueError:
        raise DeviceURLError(f"{url}: {name} must be a number, got {value!r}") from None
    low, high = RANGES[name]
    if not low <= number <= high:  # NaN fails this too
        raise DeviceURLError(f"{url}: {name} must be within {low}–{high}, got {value}")
    return number


def _no_leftovers(url: str, query: dict[str, str]) -> None:
    if query:
        raise DeviceURLError(f"{url}: unknown option {sorted(query)[0]!r}")
