"""The serial shoe driver: a port opened by URL, read into frame events, reopened after faults.

``events()`` is an iterator that runs until ``stop`` is set. It yields what the parser makes of
the bytes, plus ``Connected`` and ``Disconnected`` as the port comes and goes; after an unplug or
a read error it waits (exponential backoff, capped) and opens the port again, forever. Nothing
the device sends can make it raise.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import serial

from hardware.serial_shoe.frames import FrameEvent, FrameParser, parser_for


@dataclass(frozen=True, slots=True)
class Connected:
    port: str


@dataclass(frozen=True, slots=True)
class Disconnected:
    port: str
    reason: str
    retry_in: float  # seconds until the next attempt


DriverEvent = FrameEvent | Connected | Disconnected


@dataclass(frozen=True, slots=True)
class Backoff:
    first: float = 0.1
    factor: float = 2.0
    cap: float = 5.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(self.cap, delay * self.factor)


Opener = Callable[..., Any]  # serial.serial_for_url, or a stand-in with the same signature


class SerialShoe:
    def __init__(
        self,
        port: str,
        dialect: str = "monitor",
        baudrate: int = 9600,
        read_timeout: float = 0.1,
        backoff: Backoff | None = None,
        opener: Opener = serial.serial_for_url,
    ) -> None:
        self.port = port
        self.dialect = dialect
        self.parser: FrameParser = parser_for(dialect)
        self.baudrate = baudrate
        self.read_timeout = read_timeout
        self.backoff = backoff or Backoff()
        self.opener = opener
        self.reconnects = 0

    def events(self, stop: threading.Event) -> Iterator[DriverEvent]:
        delays = self.backoff.delays()
        while not stop.is_set():
            try:
                device = self.opener(self.port, baudrate=self.baudrate, timeout=self.read_timeout, exclusive=True)
            except (serial.SerialException, OSError, ValueError) as error:
                delay = next(delays)
                yield Disconnected(self.port, f"cannot open: {error}", delay)
                stop.wait(delay)
                continue
            delays = self.backoff.delays()
            yield Connected(self.port)
            reason = yield from self._read(device, stop)
            self.parser.reset()
            with contextlib.suppress(serial.SerialException, OSError):
                device.close()
            if reason is not None:
                self.reconnects += 1
                delay = next(delays)
                yield Disconnected(self.port, reason, delay)
                stop.wait(delay)

    def _read(self, device: Any, stop: threading.Event) -> Generator[DriverEvent, None, str | None]:
        """Read until stopped (returns None) or the port fails (returns why)."""
        while not stop.is_set():
            try:
                data = device.read(max(1, device.in_waiting))
            except (serial.SerialException, OSError) as error:
                return f"read failed: {error}"
            if data:
                yield from self.parser.feed(data)
        return None
