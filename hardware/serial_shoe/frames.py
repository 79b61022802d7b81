"""Frames from a card shoe's serial line, parsed into typed events.

Two dialects, each a parser over a byte buffer: feed it whatever the port delivered (a byte, half
a frame, three frames and some noise) and it returns the events of every complete frame. It never
raises: noise, unknown frames and over-long input are skipped and counted in ``stats``.

``monitor``: the ASCII frames of common baccarat shoe monitors at 9600 baud::

     [Game]<Card:4S>                 a card read (rank-suit or suit-rank)
     [Manual Burn Cards]<Card:H3>    a burn card
     [Game]<Game>                    a card went through but was not read
    <Alarm:E3 Card Not Read>         an alarm (also as [GameAlarm]<Alarm:...>)
    <W0x01>                          a warning
     [New Shoe]<Shuffle>             a freshly shuffled deck was loaded (any tag; the dealer's new-shoe key)
     [Game]<Cut Card>                the cut card came out: the coup being dealt is the shoe's last

A monitor must announce each new deck, or the controller cannot tell the next deck's cards from the last's
(each would be "already dealt"): a monitor that cannot send ``<Shuffle>`` needs ``studio new-deck`` for each.

``line``: one card code per line, optionally followed by ``*XX``, the XOR of every byte before the
``*`` as two uppercase hex digits (as in NMEA); a ``SHUFFLE`` line announces a new deck, a ``CUT`` line the cut card.

Codes are normalised to rank + suit (``4S``, ``TH``; ``10`` is read as ``T``). What a code means
is none of this module's business: the shoe daemon validates it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from hardware.codes import RANKS, SUITS

MAX_FRAME = 128  # bytes; a frame (or line) longer than this is noise


@dataclass(frozen=True, slots=True)
class CardRead:
    code: str  # rank + suit, e.g. "4S"
    burn: bool
    raw: bytes


@dataclass(frozen=True, slots=True)
class Misread:
    """A card passed the reader but its value is unknown (or its frame failed a checksum)."""

    reason: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class Alarm:
    code: str
    text: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class DeviceWarning:
    code: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class NewDeck:
    """The dealer loaded a freshly shuffled deck."""

    raw: bytes


@dataclass(frozen=True, slots=True)
class CutCard:
    """The cut card came out of the shoe: the coup being dealt is the shoe's last."""

    raw: bytes


FrameEvent = CardRead | Misread | Alarm | DeviceWarning | NewDeck | CutCard


@dataclass
class ParserStats:
    frames: int = 0  # frames that became events
    garbage: int = 0  # runs of bytes that were not a frame, and frames of unknown kind
    overlong: int = 0  # frames or lines longer than MAX_FRAME
    by_reason: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, overlong: bool = False) -> None:
        if overlong:
            self.overlong += 1
        else:
            self.garbage += 1
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1


class FrameParser(Protocol):
    stats: ParserStats

    def feed(self, data: bytes) -> list[FrameEvent]: ...

    def reset(self) -> None: ...


def card_code(text: str) -> str | None:
    """``4S``, ``s4``, ``10H``, ``HT`` → rank + suit; anything else → None."""
    value = text.strip().upper()
    if value.startswith("10"):
        value = "T" + value[2:]
    elif value.endswith("10"):
        value = value[:-2] + "T"
    if len(value) != 2:
        return None
    if value[0] in RANKS and value[1] in SUITS:
        return value
    if value[0] in SUITS and value[1] in RANKS:
        return value[1] + value[0]
    return None


# ---- monitor dialect -----------------------------------------------------------------------

_FRAME = re.compile(rb"(?:\[([^\[\]<>]*)\]\s*)?<([^<>\[\]]*)>")
_START = re.compile(rb"[\[<]")
_TAG = re.compile(rb"\[[^\[\]<>]*\]\s*(?=<)")
_ALARM = re.compile(r"^Alarm:\s*([A-Za-z0-9]+)\s*(.*)$")
_WARNING = re.compile(r"^W(0x[0-9A-Fa-f]+|[0-9A-Fa-f]+)$")


class MonitorParser:
    """The bracketed frames of a shoe monitor; whitespace and line ends between frames are ignored."""

    def __init__(self) -> None:
        self.stats = ParserStats()
        self._buffer = bytearray()

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect, its rest is never coming)."""
        if self._buffer.strip():
            self.stats.skip("partial frame at reconnect")
        self._buffer.clear()

    def feed(self, data: bytes) -> list[FrameEvent]:
        self._buffer += data
        events: list[FrameEvent] = []
        while True:
            start = _START.search(self._buffer)
            if start is None:
                if self._buffer.strip():
                    self.stats.skip("noise between frames")
                self._buffer.clear()
                return events
            if self._buffer[: start.start()].strip():
                self.stats.skip("noise between frames")
            del self._buffer[: start.start()]
            match = _FRAME.match(self._buffer)
            if match is None:
                if not self._incomplete():
                    self._drop_first_byte()
                    continue
                if len(self._buffer) > MAX_FRAME:
                    self.stats.skip("over-long frame", overlong=True)
                    self._drop_first_byte()
                    continue
                return events
            tag = bytes(match[1]) if match[1] is not None else None  # copies: the match reads this buffer
            body, raw = bytes(match[2]), bytes(match[0])
            del self._buffer[: match.end()]
            event = self._event(tag, body, raw)
            if event is None:
                self.stats.skip("unknown frame")
            else:
                self.stats.frames += 1
                events.append(event)

    def _incomplete(self) -> bool:
        """Could the buffer still become a frame with more bytes?"""
        buffer = bytes(self._buffer)
        if buffer.startswith(b"["):
            close = buffer.find(b"]")
            if close < 0:
                return not re.search(rb"[<>\[]", buffer[1:])
            rest = buffer[close + 1 :].lstrip()
            return rest == b"" or (rest.startswith(b"<") and not re.search(rb"[<>\[\]]", rest[1:]))
        return not re.search(rb"[<\[\]]", buffer[1:])

    def _drop_first_byte(self) -> None:
        """Resynchronise: the frame that starts here is broken; a later ``[`` or ``<`` may start a good one.

        The ``<`` right after this frame's own ``[tag]`` belongs to the broken frame, so it is skipped too.
        """
        self.stats.skip("broken frame")
        tag = _TAG.match(self._buffer)
        next_start = _START.search(self._buffer, tag.end() + 1 if tag else 1)
        del self._buffer[: next_start.start() if next_start else len(self._buffer)]

    @staticmethod
    def _event(tag_bytes: bytes | None, body_bytes: bytes, raw: bytes) -> FrameEvent | None:
        tag = (tag_bytes or b"").decode("ascii", "replace").strip()
        body = body_bytes.decode("ascii", "replace").strip()
        if body.startswith("Card:"):
            code = card_code(body[5:])
            if code is None:
                return Misread(f"unreadable card code {body[5:]!r}", raw)
            return CardRead(code, burn="burn" in tag.lower(), raw=raw)
        if body == "Game":
            return Misread("card not read", raw)
        if body == "Shuffle":
            return NewDeck(raw)
        if body.replace(" ", "").lower() == "cutcard":
            return CutCard(raw)
        alarm = _ALARM.match(body)
        if alarm:
            return Alarm(alarm.group(1), alarm.group(2).strip(), raw)
        warning = _WARNING.match(body)
        if warning:
            code = warning.group(1)
            return DeviceWarning(code if code.lower().startswith("0x") else f"0x{code}", raw)
        return None


# ---- line dialect --------------------------------------------------------------------------


def checksum(payload: bytes) -> str:
    value = 0
    for byte in payload:
        value ^= byte
    return f"{value:02X}"


def with_checksum(text: str) -> bytes:
    payload = text.encode("ascii")
    return payload + b"*" + checksum(payload).encode() + b"\r\n"


class LineParser:
    """One code per line (``\\n`` or ``\\r\\n``), optional ``*XX`` checksum, ``SHUFFLE`` for a new deck, ``CUT``
    for the cut card."""

    def __init__(self) -> None:
        self.stats = ParserStats()
        self._buffer = bytearray()
        self._discarding = False  # inside an over-long line: skip up to its end

    def reset(self) -> None:
        if self._buffer.strip():
            self.stats.skip("partial line at reconnect")
        self._buffer.clear()
        self._discarding = False

    def feed(self, data: bytes) -> list[FrameEvent]:
        self._buffer += data
        events: list[FrameEvent] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_FRAME and not self._discarding:
                    self.stats.skip("over-long line", overlong=True)
                    self._discarding = True
                if self._discarding:
                    self._buffer.clear()
                return events
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[: end + 1]
            if self._discarding:
                self._discarding = False
                continue
            if len(line) > MAX_FRAME:
                self.stats.skip("over-long line", overlong=True)
                continue
            event = self._event(line)
            if event is not None:
                self.stats.frames += 1
                events.append(event)

    def _event(self, line: bytes) -> FrameEvent | None:
        raw = line
        text = line.strip()
        if not text:
            return None
        if b"*" in text:
            payload, _, given = text.rpartition(b"*")
            expected = checksum(payload)
            if given.decode("ascii", "replace") != expected:
                return Misread(f"checksum mismatch: frame says {given.decode('ascii', 'replace')!r}, "
                               f"computed {expected}", raw)  # fmt: skip
            text = payload.strip()
        value = text.decode("ascii", "replace")
        if value.upper() == "SHUFFLE":
            return NewDeck(raw)
        if value.upper() == "CUT":
            return CutCard(raw)
        code = card_code(value)
        if code is None:
            self.stats.skip("not a card code")
            return None
        return CardRead(code, burn=False, raw=raw)


DIALECTS: dict[str, type[MonitorParser] | type[LineParser]] = {"monitor": MonitorParser, "line": LineParser}


def parser_for(dialect: str) -> FrameParser:
    try:
        return DIALECTS[dialect]()
    except KeyError:
        raise ValueError(f"unknown shoe dialect {dialect!r}: expected one of {', '.join(DIALECTS)}") from None
