"""Tiến Lên's adapter: taking a seat (its hold), playing cards and passing, as API actions."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from services.games.tienlen import cards as tl
from services.games.tienlen.events import Pass, Play
from services.rounds.adapters import (
    Action,
    Adapter,
    AppliedOut,
    Strict,
    applied_out,
    register,
    seat_action,
)
from services.rounds.service import RoundService

Code = Annotated[str, Field(min_length=2, max_length=2, description="rank + suit, e.g. '3S'")]


class PlayIn(Strict):
    cards: Annotated[list[Code], Field(min_length=1, max_length=13)]


class PassIn(Strict):
    pass


def play(service: RoundService, player: str, round_id: str, body: PlayIn, _key: str | None) -> AppliedOut:
    cards = tl.parse(body.cards)
    return applied_out(service.command(round_id, lambda _game: Play(player, cards), player, window=True))


def pass_turn(service: RoundService, player: str, round_id: str, _body: PassIn, _key: str | None) -> AppliedOut:
    return applied_out(service.command(round_id, lambda _game: Pass(player), player, window=True))


class TienLenAdapter(Adapter):
    game_name = "tienlen"
    actions = (
        seat_action("Take a seat; the room's hold (hold_units × unit) is taken."),
        Action("play", PlayIn, AppliedOut, play, "Play cards: in turn, or a chop out of turn."),
        Action("pass", PassIn, AppliedOut, pass_turn, "Pass: out of the trick until it ends."),
    )

    def profile(self, service: RoundService, player: str) -> dict[str, Any]:
        return {}


register(TienLenAdapter())
