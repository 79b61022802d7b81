"""Tiến Lên's adapter: taking a seat (its hold, the room tier's experience points), playing cards and passing,
as API actions; each round goes on from the table's last (who leads) and awards experience points when it ends."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.games.rooms import Sit
from services.games.tienlen import cards as tl
from services.games.tienlen.events import Pass, Play
from services.games.tienlen.experience import DEFAULT_TIERS
from services.games.tienlen.port import TIENLEN, Continue, Room
from services.games.tienlen.series import Series
from services.rounds.adapters import (
    Action,
    AppliedOut,
    RoomAdapter,
    SeatIn,
    SeatOut,
    Strict,
    applied_out,
    leave_action,
    take_seat,
)
from services.rounds.core import RoundCore
from services.rounds.models import ExperienceAward, Round

Code = Annotated[str, Field(min_length=2, max_length=2, description="rank + suit, e.g. '3S'")]


class PlayIn(Strict):
    cards: Annotated[list[Code], Field(min_length=1, max_length=13)]


class PassIn(Strict):
    pass


def play(service: RoundCore, player: str, round_id: str, body: PlayIn, _key: str | None) -> AppliedOut:
    cards = tl.parse(body.cards)
    return applied_out(service.command(round_id, lambda _game: Play(player, cards), player, window=True))


def pass_turn(service: RoundCore, player: str, round_id: str, _body: PassIn, _key: str | None) -> AppliedOut:
    return applied_out(service.command(round_id, lambda _game: Pass(player), player, window=True))


def sit(service: RoundCore, player: str, round_id: str, body: SeatIn, key: str | None) -> SeatOut:
    """A seat, if the player's experience points reach the room's tier; then as any room's seat."""
    with service.sessions() as session:
        round_ = session.get(Round, round_id)
        if round_ is not None:
            tier = DEFAULT_TIERS[service.round_settings(round_id, round_.settings, TIENLEN).tier - 1]
            tier.admit(player, experience(session, player))
    return take_seat(service, player, round_id, body, key, Sit)


def experience(session: Session, player: str) -> int:
    """The player's experience points (ĐKN): the sum of what their rounds awarded."""
    total = session.scalar(select(func.sum(ExperienceAward.points)).where(ExperienceAward.player == player))
    return int(total or 0)


class TienLenAdapter(RoomAdapter):
    actions = (
        Action("sit", SeatIn, SeatOut, sit, "Take a seat (the room's tier may ask for experience points); the "
               "room's hold (hold_units × unit) is taken.", keyed=True),
        Action("play", PlayIn, AppliedOut, play, "Play cards: in turn, or a chop out of turn."),
        Action("pass", PassIn, AppliedOut, pass_turn, "Pass: out of the trick until it ends."),
        leave_action("Leave: before the deal your hold comes back; while the round is played you are out of it, the "
                     "round goes on, and at its end you pay the winner as a player who never played a card (or what "
                     "your hand would cost as a loser, if more) and earn no experience points."),
    )  # fmt: skip

    def opened(self, service: RoundCore, session: Session, round_: Round, engine: Room) -> None:
        """The new round goes on from the table's last one: its winner leads, or a player cóng twice in a row."""
        previous = session.scalar(
            select(Round)
            .where(Round.table_id == round_.table_id, Round.number < round_.number)
            .order_by(Round.number.desc())
            .limit(1)
        )
        if previous is None:
            return
        with service.reading(session, previous) as before:
            series = TIENLEN.series_after(before)
        if series != Series():
            service.append(session, round_, engine, Continue.of(series), "controller")

    def settled(self, service: RoundCore, session: Session, round_: Round, engine: Room) -> None:
        """Each seated player who played the round to its end (did not leave it) is awarded the room tier's
        experience points (once)."""
        tier = DEFAULT_TIERS[engine.settings.tier - 1]
        awarded = set(session.scalars(select(ExperienceAward.player).where(ExperienceAward.round_id == round_.id)))
        left = engine.engine.left if engine.engine is not None else set()
        now = service.clock.now()
        for player in engine.players:
            if player not in awarded and player not in left and tier.award:
                session.add(ExperienceAward(round_id=round_.id, player=player, points=tier.award, awarded_at=now))

    def profile(self, service: RoundCore, player: str) -> dict[str, Any]:
        with service.sessions() as session:
            return {"experience": experience(session, player)}


ADAPTER = TienLenAdapter(TIENLEN)
