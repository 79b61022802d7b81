"""A card shoe on a serial line: frame parsers (``monitor`` and ``line`` dialects) and the port driver."""

from hardware.serial_shoe.driver import Backoff, Connected, Disconnected, DriverEvent, SerialShoe
from hardware.serial_shoe.frames import (
    DIALECTS,
    Alarm,
    CardRead,
    CutCard,
    DeviceWarning,
    FrameEvent,
    LineParser,
    Misread,
    MonitorParser,
    NewDeck,
    card_code,
    checksum,
    parser_for,
    with_checksum,
)

__all__ = [
    "DIALECTS",
    "Alarm",
    "Backoff",
    "CardRead",
    "Connected",
    "CutCard",
    "DeviceWarning",
    "Disconnected",
    "DriverEvent",
    "FrameEvent",
    "LineParser",
    "Misread",
    "MonitorParser",
    "NewDeck",
    "SerialShoe",
    "card_code",
    "checksum",
    "parser_for",
    "with_checksum",
]
