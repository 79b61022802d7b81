"""What a round shows to people who must not see its face-down card: players, the overlay, the dealer.

A face-down card appears as ``None`` (received, value unknown) until its ``CardRevealed`` event.
Points are shown only for hands whose every card is visible. Nothing about who bet what is in it:
each player reads their own wagers separately.
"""

from __future__ import annotations

from typing import Any

from services.cards import Card
from services.games.pokdeng import events as ev
from services.games.pokdeng.engine import AwaitingCard, AwaitingDecision, Expectation, PokDengRound, describe
from services.games.pokdeng.hands import points
from services.games.pokdeng.model import TURN_ORDER
from services.games.pokdeng.transcript import result_to_dict


def public_view(round_: PokDengRound) -> dict[str, Any]:
    revealed = {(e.position, e.index) for e in round_.events if isinstance(e, ev.CardRevealed)}
    hands: dict[str, list[str | None]] = {str(position): [] for position in TURN_ORDER}
    for event in round_.events:
        if isinstance(event, ev.CardDealt):
            visible = event.face_up or (event.position, event.index) in revealed
            hands[str(event.position)].append(str(event.card) if visible else None)
    view: dict[str, Any] = {
        "phase": str(round_.phase),
        "waiting_for": _waiting_for(round_.expecting),
        "hands": {position: {"cards": cards, "points": _visible_points(cards)} for position, cards in hands.items()},
        "draws": {
            str(e.position): {"draw": e.draw, "reason": str(e.reason)}
            for e in round_.events
            if isinstance(e, ev.DrawDecided)
        },
        "insurance_offered": any(isinstance(e, ev.InsuranceOffered) for e in round_.events),
    }
    expecting = round_.expecting
    if isinstance(expecting, AwaitingCard):
        view["next_card"] = {
            "position": str(expecting.position),
            "index": expecting.index,
            "face_up": expecting.face_up,
        }
    elif isinstance(expecting, AwaitingDecision):
        view["decision"] = {"seat": str(expecting.seat), "points": expecting.points}
    if round_.result is not None:
        result = result_to_dict(round_.result)
        view["result"] = {"hands": result["hands"], "outcomes": result["outcomes"], "early": round_.result.early}
    return view


def _waiting_for(expecting: Expectation | None) -> str:
    """What the round waits for, without naming the player who decides (no one's bets are public)."""
    if isinstance(expecting, AwaitingDecision):
        return f"a draw/stand decision on seat {expecting.seat}"
    return describe(expecting)


def _visible_points(cards: list[str | None]) -> int | None:
    if not cards or any(card is None for card in cards):
        return None
    return points([Card.from_code(card) for card in cards if card is not None])
