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
    hands: dict[str, list[str | None]] = {str(position): [] for position in TURN_ORDER}
    for dealt, visible in round_.seen():
        hands[str(dealt.position)].append(str(dealt.card) if visible else None)
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


def dealer_view(public: dict[str, Any]) -> dict[str, Any]:
    """The dealer's view from the public one: a face-down card shows as ``received`` (its value still unknown)."""
    hands = {
        position: hand | {"cards": [card if card is not None else "received" for card in hand["cards"]]}
        for position, hand in public["hands"].items()
    }
    return public | {"hands": hands}
