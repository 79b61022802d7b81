"""The round service's reads of a table's current round, for the views that are someone's own."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.games.base import viewer
from services.rounds.core import RoundCore
from services.rounds.errors import ForbiddenError
from services.rounds.models import Round
from services.rounds.records import Applied, as_seen, stored_round


class Reads(RoundCore):
    """A table's current round as someone's own view (a seat's, a player's)."""

    def latest_rounds(self, tables: list[str]) -> dict[str, tuple[str, int]]:
        """Every table's latest round as ``(round_id, log_length)``, in one query (how a controller sees which rounds
        someone else moved)."""
        newest = (
            select(Round.table_id, func.max(Round.number).label("number"))
            .where(Round.table_id.in_(tables))
            .group_by(Round.table_id)
            .subquery()
        )
        query = select(Round.table_id, Round.id, Round.log_length).join(
            newest, (Round.table_id == newest.c.table_id) & (Round.number == newest.c.number)
        )
        with self.sessions() as session:
            return {table: (round_id, length) for table, round_id, length in session.execute(query)}

    def latest(self, table_id: str) -> Applied | None:
        """The table's latest round as the database has it (the controller's view of it)."""

        def work(session: Session) -> Applied | None:
            round_ = session.scalar(
                select(Round).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1)
            )
            if round_ is None:
                return None
            engine = self.engines.take(session, round_, self.game_of(session, round_))
            return self.applied(session, round_, [], engine)

        return self.run(work)

    def seat_view(self, table_id: str, seat: str, player_id: str) -> dict[str, Any]:
        """``player_id``'s own view of the table's current round, with their hidden cards, if they hold ``seat``."""
        with self.sessions() as session:
            round_ = self._current(session, table_id)
            if round_ is None:
                raise ForbiddenError(f"table {table_id} has no round yet: seat {seat} is nobody's")
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                if port.seats(engine).get(seat) != player_id:
                    raise ForbiddenError(f"seat {seat} of round {round_.id} is not {player_id}'s")
                return as_seen(round_, {"seat": seat} | port.view(engine, viewer(player_id)))

    def seats(self, round_id: str) -> dict[str, str]:
        """Who holds each seat of the round (games with seats; seat -> player)."""
        with self.sessions() as session:
            round_ = stored_round(session, round_id)
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                return port.seats(engine)

    def player_view(self, table_id: str, player_id: str) -> dict[str, Any]:
        """What of the table's current round is ``player_id``'s own (their wagers, offers, the choice that is
        theirs to make), from the round's game adapter; no card the public may not see."""
        with self.sessions() as session:
            round_ = self._current(session, table_id)
            if round_ is None:
                return {"v": 1, "round_id": None, "table_id": table_id, "phase": None, "you": {}}
            port = self.game_of(session, round_)
            with self.reading(session, round_) as engine:
                you = self.games.adapter(port.name).yours(self, session, round_, engine, player_id)
                return as_seen(round_, {"phase": port.phase(engine), "you": you})

    def _current(self, session: Session, table_id: str) -> Round | None:
        """The table's latest round; None before its first (an unknown table is a ``NotFoundError``)."""
        round_ = session.scalar(select(Round).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1))
        if round_ is None:
            self.table(session, table_id)
        return round_
