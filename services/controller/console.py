"""What a table's controller shows: the public state and the dealer console, built from the round as the service
reported it and the controller's own memory of the table (deck, pause, hold, alerts, camera)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.games.base import CardWanted
from services.rounds import checks
from services.rounds.records import Applied

ALERTS_KEPT = 20  # the newest alerts the controller remembers
ALERTS_SHOWN = 10  # of those, the newest the console shows


@dataclass
class Alert:
    # refused_card | misread | deck_low | deck_mismatch | deck_acknowledged | device | controller | shoe_restarted |
    # verify_*
    kind: str
    message: str
    at: str
    card: str | None = None


@dataclass(frozen=True)
class Desk:
    """The controller's own part of the dealer console."""

    deck_remaining: int
    paused: str  # why the deal is stopped (a misread)
    held: str  # why the table is held (a deck not whole)
    alerts: tuple[Alert, ...]
    camera: str | None  # online | offline | unknown; None: the table has no camera
    burn: dict[str, Any] | None = None  # the new shoe's burn under way: the card it wants, and what to say


def state_view(table_id: str, current: Applied | None) -> dict[str, Any]:
    """Public: what anyone may see — never a card before its reveal."""
    return {"v": 1, "table_id": table_id} if current is None else current.public


def dealer_view(table_id: str, current: Applied | None, desk: Desk) -> dict[str, Any]:
    """The dealer console: what to deal next, the cards scanned (a face-down one only as received), alerts."""
    if current is None:
        view: dict[str, Any] = {"v": 1, "table_id": table_id}
    else:
        view = current.header | current.views["dealer"]
        expecting = current.expecting
        if current.verify != checks.OFF:
            hidden = frozenset(str(card) for card in current.hidden)
            view["checks"] = [check.out(hidden) for check in current.checks]
        if current.phase == checks.VERIFYING:
            view["phase"] = checks.VERIFYING
            view["waiting_for"] = _verifying(current.checks)
        view.setdefault("waiting_for", expecting.text if expecting else "nothing (the round is over)")
        if isinstance(expecting, CardWanted):
            card = {"position": expecting.position, "index": expecting.index, "face_up": expecting.face_up}
            view.setdefault("next_card", card)
    view |= {
        "deck_remaining": desk.deck_remaining,
        "paused": desk.paused,
        "held": desk.held,
        "alerts": [alert.__dict__ for alert in desk.alerts[-ALERTS_SHOWN:]],
    }
    if desk.camera is not None:
        view["camera"] = desk.camera
    if desk.burn is not None:  # the new shoe's burn comes before any round's card
        view["waiting_for"] = desk.burn["text"]
        view["next_card"] = {key: value for key, value in desk.burn.items() if key != "text"}
    return view


def _verifying(open_checks: tuple[checks.OpenCheck, ...]) -> str:
    """What a round held for its checks waits for: the camera's sightings, or an operator's word."""
    pending = [str(check.position + 1) for check in open_checks if check.status == checks.PENDING]
    if pending:
        return f"the overhead camera to see card {', '.join(pending)}: settlement waits"
    disputed = ", ".join(str(check.position + 1) for check in open_checks)
    return f"an operator's word on card {disputed}: settlement waits (ops page)"
