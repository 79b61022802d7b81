"""MQTT topic names: one place, so publishers and subscribers cannot drift apart."""

from __future__ import annotations

import re

ROOT = "studio/v1"
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _table(table: str) -> str:
    if not _ID.match(table):
        raise ValueError(f"invalid table id {table!r}: use 1–64 letters, digits, '_', '.' or '-'")
    return f"{ROOT}/tables/{table}"


def shoe_cards(table: str) -> str:
    """Card and new-deck events from the shoe daemon (QoS 1, never retained; the controller alone reads it)."""
    return f"{_table(table)}/shoe/cards"


def camera_cards(table: str) -> str:
    """The overhead camera's sightings: each face-up card it saw, as a signed card message (QoS 1, never retained;
    the controller alone reads it, to check the shoe's cards: ``services.rounds.checks``)."""
    return f"{_table(table)}/camera/cards"


def camera_status(table: str) -> str:
    """The overhead camera daemon's retained online/offline status."""
    return f"{_table(table)}/camera/status"


def camera_alarms(table: str) -> str:
    """The overhead camera daemon's device faults."""
    return f"{_table(table)}/camera/alarms"


def shoe_status(table: str) -> str:
    """The daemon's retained online/offline status (the offline one is its last will)."""
    return f"{_table(table)}/shoe/status"


def shoe_alarms(table: str) -> str:
    """Misreads, device alarms and warnings, reader faults."""
    return f"{_table(table)}/shoe/alarms"


def shoe_resend(table: str) -> str:
    """A consumer that saw a gap in ``seq`` asks the daemon to publish those cards again."""
    return f"{_table(table)}/shoe/resend"


def shoe_control(table: str) -> str:
    """Commands to the shoe daemon from the dealer console or an operator (a new deck is loaded)."""
    return f"{_table(table)}/shoe/control"


def round_state(table: str) -> str:
    """The public round state (retained): phase, timers, revealed cards, results — never a card before its reveal."""
    return f"{_table(table)}/round/state"


def round_dealer(table: str) -> str:
    """The dealer console (retained): next expected position, scanned cards (face-down ones as received), alerts."""
    return f"{_table(table)}/round/dealer"


def controller_status(controller: str) -> str:
    """A controller process's retained online/offline status (offline is its last will), naming its tables."""
    if not _ID.match(controller):
        raise ValueError(f"invalid controller name {controller!r}: use 1–64 letters, digits, '_', '.' or '-'")
    return f"{ROOT}/controllers/{controller}/status"


def every_controller_status() -> str:
    return f"{ROOT}/controllers/+/status"


def every_round_state() -> str:
    """The public round state topics of every table (the API's fan-out subscribes to them)."""
    return f"{ROOT}/tables/+/round/state"


def every_round_dealer() -> str:
    """The dealer console topics of every table (a subscription pattern for the API's console relay)."""
    return f"{ROOT}/tables/+/round/dealer"


def table_of(topic: str) -> str:
    """The table id in a per-table topic name."""
    parts = topic.split("/")
    if len(parts) < 4 or f"{parts[0]}/{parts[1]}" != ROOT or parts[2] != "tables":
        raise ValueError(f"{topic!r} is not a per-table topic under {ROOT}/tables/")
    return parts[3]


def round_commands(table: str) -> str:
    """Notifications to the controller that a decision, insurance or operator command was recorded."""
    return f"{_table(table)}/round/commands"
