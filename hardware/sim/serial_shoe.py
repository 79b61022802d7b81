"""A virtual serial shoe on a pty pair: deals a deck in either dialect, with faults on request, and announces each
new deck in both (``frames`` documents each dialect's new-deck frame).

The reader opens ``path``, a symlink to the pty's slave end, exactly as it would open
``/dev/ttyUSB0``. ``unplug()`` closes the pty (the reader's next read fails, as when the cable is
pulled) and ``plug()`` makes a new one behind the same path, as when it is plugged back in.
"""

from __future__ import annotations

import array
import fcntl
import itertools
import os
import random
import tempfile
import termios
import threading
import tty
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hardware.codes import DECK
from hardware.serial_shoe.frames import with_checksum


def shuffled_deck(seed: int | None = None, decks: int = 1) -> list[str]:
    """``decks`` 52-card decks shuffled together (a baccarat shoe holds eight)."""
    deck = list(DECK) * decks
    random.Random(seed).shuffle(deck)
    return deck


@dataclass(frozen=True, slots=True)
class Faults:
    """Probabilities per card (0–1) of each kind of trouble, and how writes are cut up."""

    garbage: float = 0.0  # noise bytes before the frame
    split: bool = False  # write frames a few bytes at a time
    misread: float = 0.0  # the card is first not read, then read on the dealer's second pass
    alarm: float = 0.0  # an alarm frame before the card
    seed: int | None = None


def card_frame(code: str, dialect: str, burn: bool = False, suit_first: bool = False) -> bytes:
    text = code[1] + code[0] if suit_first else code
    if dialect == "monitor":
        tag = "Manual Burn Cards" if burn else "Game"
        return f" [{tag}]<Card:{text}> ".encode()
    return with_checksum(text)


def misread_frame(code: str, dialect: str) -> bytes:
    """Monitor: the card went through unread. Line: the code arrived with a corrupted checksum."""
    if dialect == "monitor":
        return b" [Game]<Game> "
    good = with_checksum(code)
    return good[:3] + f"{int(good[3:5], 16) ^ 0x5A:02X}".encode() + b"\r\n"


ALARM_FRAME = b" [GameAlarm]<Alarm:E3 Card Not Read> "  # the line dialect has no alarms


def shuffle_frame(dialect: str) -> bytes:
    """A new deck loaded, in either dialect: every simulated shoe announces its decks (``frames`` documents both)."""
    return with_checksum("SHUFFLE") if dialect == "line" else b" [New Shoe]<Shuffle> "


def cut_frame(dialect: str) -> bytes:
    """The cut card out of the shoe, in either dialect."""
    return with_checksum("CUT") if dialect == "line" else b" [Game]<Cut Card> "


class VirtualShoe:
    def __init__(self, dialect: str = "monitor", directory: str | Path | None = None, faults: Faults | None = None):
        if dialect not in ("monitor", "line"):
            raise ValueError(f"unknown shoe dialect {dialect!r}: expected monitor or line")
        self.dialect = dialect
        self.faults = faults or Faults()
        self._random = random.Random(self.faults.seed)
        self._own_directory = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="studio-shoe-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "shoe"
        self._lock = threading.Lock()
        self._master: int | None = None
        self._slave: int | None = None
        self.plug()

    # ---- the cable ----------------------------------------------------------------------

    def plug(self) -> None:
        with self._lock:
            if self._master is not None:
                return
            master, slave = os.openpty()
            tty.setraw(slave)  # no echo, no line editing: bytes pass as the device sent them
            self._master, self._slave = master, slave
            link = self.path.with_suffix(".new")
            link.unlink(missing_ok=True)
            link.symlink_to(os.ttyname(slave))
            link.replace(self.path)

    def unplug(self) -> None:
        with self._lock:
            for fd in (self._master, self._slave):
                if fd is not None:
                    os.close(fd)
            self._master = self._slave = None
            self.path.unlink(missing_ok=True)

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def unread(self) -> int:
        """Bytes written that the reader has not read yet (0 when unplugged): a clean stop waits for them."""
        with self._lock:
            if self._slave is None:
                return 0
            waiting = array.array("i", [0])
            fcntl.ioctl(self._slave, termios.FIONREAD, waiting)
            return int(waiting[0])

    def close(self) -> None:
        self.unplug()
        if self._own_directory:
            for leftover in self.directory.iterdir():
                leftover.unlink()
            self.directory.rmdir()

    # ---- writing ------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Send bytes as the device would (cut into small writes when ``faults.split``)."""
        pieces: Iterable[bytes] = [data]
        if self.faults.split:
            cuts = sorted(self._random.sample(range(1, len(data)), min(3, len(data) - 1))) if len(data) > 1 else []
            bounds = [0, *cuts, len(data)]
            pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
        for piece in pieces:
            with self._lock:
                if self._master is None:
                    raise OSError("the virtual shoe is unplugged")
                os.write(self._master, piece)

    def deal(self, code: str, burn: bool = False) -> None:
        """One card through the reader, with whatever faults come up for it."""
        faults = self.faults
        if faults.garbage and self._random.random() < faults.garbage:
            noise = bytes(self._random.choice(b"#@!~%&?xz \x00\x7f") for _ in range(self._random.randint(1, 12)))
            self.write(noise + (b"\r\n" if self.dialect == "line" else b""))  # a line scanner's noise is a bad line
        if faults.alarm and self.dialect == "monitor" and self._random.random() < faults.alarm:
            self.write(ALARM_FRAME)
        if faults.misread and self._random.random() < faults.misread:
            self.write(misread_frame(code, self.dialect))
        suit_first = self.dialect == "monitor" and burn and self._random.random() < 0.5
        self.write(card_frame(code, self.dialect, burn, suit_first))

    def new_deck(self) -> None:
        self.write(shuffle_frame(self.dialect))

    def cut_card(self) -> None:
        self.write(cut_frame(self.dialect))

    def deal_all(self, cards: Sequence[str], interval: float = 0.0, stop: threading.Event | None = None) -> int:
        """Deal cards in order, ``interval`` seconds apart; returns how many went out."""
        stop = stop or threading.Event()
        for count, code in enumerate(cards):
            if stop.wait(interval) if interval else stop.is_set():
                return count
            self.deal(code)
        return len(cards)
