"""Device URLs: each kind opens the right reader; a wrong URL says what is wrong."""

from __future__ import annotations

import pytest

from services.shoe.devices import DeviceURLError, open_device


@pytest.mark.parametrize(
    ("url", "source"),
    [
        ("serial:///dev/ttyUSB0?dialect=monitor&baud=9600", "serial"),
        ("socket://10.0.0.7:4001?dialect=line", "serial"),
        ("sim://serial?dialect=line&seed=3&interval=0.5&faults=garbage,split", "sim"),
    ],
)
def test_device_urls_name_their_source(url: str, source: str) -> None:
    assert open_device(url).source == source


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("usb://shoe", "unknown device usb://shoe"),
        ("serial:///dev/ttyUSB0?dialect=nmea", "unknown dialect 'nmea'"),
        ("serial:///dev/ttyUSB0?baud=fast", "baud must be a number, got 'fast'"),
        ("serial:///dev/ttyUSB0?parity=E", "unknown option 'parity'"),
        ("serial://", "no port path"),
        ("sim://serial?faults=fire", "unknown fault 'fire'"),
        ("sim://serial?interval=-1", "interval must be within 0.005–3600.0, got -1"),
        ("sim://serial?interval=nan", "interval must be within"),
        ("sim://camera?interval=0", "interval must be within"),
        ("serial:///dev/ttyUSB0?baud=0", "baud must be within 50–4000000, got 0"),
        ("camera://0?confirm=0", "confirm must be within 1–100"),
        ("camera://0", "a camera needs templates=FILE"),
        ("camera://0?templates=/nonexistent.npz", "/nonexistent.npz: no such file"),
    ],
)
def test_bad_device_urls_are_refused_with_the_reason(url: str, message: str) -> None:
    with pytest.raises(DeviceURLError, match=message.replace("(", r"\(").replace("?", r"\?")):
        open_device(url)
