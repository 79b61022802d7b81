"""Mậu Binh's adapter: a seat (its hold), ready, the arrangement, leaving — as API actions.

A seat given up before the deal (the player leaves, or the ready check removes them) gets its hold
back in the same transaction: the engine reports it as a ``Freed`` event.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from sqlalchemy.orm import Session

from services.cards import Card
from services.games.maubinh.port import MAUBINH
from services.games.maubinh.room import Arrange, Room
from services.games.rooms import Ready, Unfunded
from services.rounds.adapters import (
    Action,
    AppliedOut,
    RoomAdapter,
    Strict,
    applied_out,
    leave_action,
    seat_action,
)
from services.rounds.core import RoundCore
from services.rounds.models import Round

Code = Annotated[str, Field(min_length=2, max_length=2, description="rank + suit, e.g. 'QH'")]


class ReadyIn(Strict):
    pass


class ArrangeIn(Strict):
    chi1: Annotated[list[Code], Field(min_length=5, max_length=5, description="the back: 5 cards, the strongest")]
    chi2: Annotated[list[Code], Field(min_length=5, max_length=5, description="the middle: 5 cards")]
    chi3: Annotated[list[Code], Field(min_length=3, max_length=3, description="the front: 3 cards, the weakest")]
    confirm_binh_lung: Annotated[
        bool,
        Field(
            description="an arrangement that is binh lủng (a chi weaker than the one after it: it loses every chi) is "
            "refused (reason binh_lung_unconfirmed) unless this is true: the player saw that and submits it anyway"
        ),
    ] = False


def ready(service: RoundCore, player: str, round_id: str, _body: ReadyIn, _key: str | None) -> AppliedOut:
    return applied_out(service.command(round_id, lambda _game: Ready(player), player))


def arrange(service: RoundCore, player: str, round_id: str, body: ArrangeIn, _key: str | None) -> AppliedOut:
    chi1, chi2, chi3 = (tuple(Card.from_code(code) for code in chi) for chi in (body.chi1, body.chi2, body.chi3))
    command = Arrange(player, chi1, chi2, chi3, confirmed=body.confirm_binh_lung)
    return applied_out(service.command(round_id, lambda _game: command, player, window=True))


class MauBinhAdapter(RoomAdapter):
    actions = (
        seat_action("Take a seat; the room's hold (the largest loss of a hand) is taken."),
        Action("ready", ReadyIn, AppliedOut, ready, "Ready for the deal (it starts when every seated player is)."),
        Action("arrange", ArrangeIn, AppliedOut, arrange,
               "Submit your arrangement of the 13 cards dealt to you (once, before arranging closes)."),
        leave_action("Leave: before the deal your hold comes back; after it you lose every chi, as the rules say."),
    )  # fmt: skip

    def yours(self, service: RoundCore, session: Session, round_: Round, engine: Room, player: str) -> dict[str, Any]:
        """The seats they hold, and the seat they lost before the deal because their wallet could not cover a hand
        with the players seated then (``unfunded``: the seat and that many players), said only to them."""
        own = super().yours(service, session, round_, engine, player)
        unfunded = None
        for event in engine.events:
            if isinstance(event, Unfunded) and engine.seating.out.get(event.seat) == player:
                unfunded = {"seat": event.seat, "players": event.players}
        return own | {"unfunded": unfunded}


ADAPTER = MauBinhAdapter(MAUBINH)
