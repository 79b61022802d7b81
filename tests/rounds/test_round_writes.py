"""A round's own row after a command: written by one Core ``UPDATE`` at the end of the command's transaction, never
lost and never written twice (``services.rounds.core.written``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker

from services.cards import Card
from services.rounds.clock import ManualClock
from services.rounds.core import written
from services.rounds.models import Round
from services.rounds.pokdeng import pokdeng
from services.rounds.service import RoundService


@pytest.fixture
def statements(database: Engine) -> Iterator[list[str]]:
    """Every statement the database is sent while the test runs."""
    sent: list[str] = []

    def note(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        sent.append(" ".join(statement.split()))

    event.listen(database, "before_cursor_execute", note)
    yield sent
    event.remove(database, "before_cursor_execute", note)


def updates_of_rounds(sent: list[str]) -> list[str]:
    return [statement for statement in sent if statement.startswith("UPDATE rounds")]


def test_a_card_writes_its_round_once_and_every_changed_column_lands(
    service: RoundService, clock: ManualClock, sessions: sessionmaker[Session], statements: list[str]
) -> None:
    round_id = service.open_round("t1")
    pokdeng(service).close_betting(round_id)
    statements.clear()
    applied = service.deal(round_id, Card.from_code("5H"))
    assert len(updates_of_rounds(statements)) == 1  # the command's one UPDATE: no second one from the flush
    round_ = stored(sessions, round_id)
    assert (round_.phase, round_.log_length) == (applied.phase, applied.log_length)
    # and a fresh service, reading only the database, rebuilds the same round
    again = RoundService(sessions, clock, games=service.games).latest("t1")
    assert again is not None and again.cards == applied.cards and again.log_length == applied.log_length


def written_with(sessions: sessionmaker[Session], statements: list[str], round_id: str, **columns: object) -> bool:
    """Change the round's ``columns`` in a transaction and run ``written`` at its end (the statements before it are
    forgotten); whether the session still holds the round for its flush."""
    with sessions() as session, session.begin():
        round_ = session.get(Round, round_id)
        assert round_ is not None
        for name, value in columns.items():
            setattr(round_, name, value)
        statements.clear()
        written(session)
        return round_ in session


def stored(sessions: sessionmaker[Session], round_id: str) -> Round:
    with sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None
        return round_


def test_a_round_changed_only_in_its_commands_columns_is_written_and_forgotten(
    service: RoundService, sessions: sessionmaker[Session], statements: list[str]
) -> None:
    round_id = service.open_round("t1")
    length = stored(sessions, round_id).log_length + 1
    kept = written_with(sessions, statements, round_id, phase="voided", result='{"nets": {}}', log_length=length)
    assert not kept  # nothing left for the flush to write again
    assert len(updates_of_rounds(statements)) == 1
    round_ = stored(sessions, round_id)
    assert (round_.phase, round_.result, round_.log_length) == ("voided", '{"nets": {}}', length)


def test_a_round_changed_beyond_them_is_left_to_the_flush_which_writes_it_all(
    service: RoundService, sessions: sessionmaker[Session], statements: list[str]
) -> None:
    round_id = service.open_round("t1")
    assert written_with(sessions, statements, round_id, phase="voided", settings='{"changed": true}')
    assert len(updates_of_rounds(statements)) == 1  # the flush's
    round_ = stored(sessions, round_id)
    assert (round_.phase, round_.settings) == ("voided", '{"changed": true}')


def test_a_round_read_and_not_changed_is_not_written(
    service: RoundService, sessions: sessionmaker[Session], statements: list[str]
) -> None:
    round_id = service.open_round("t1")
    assert written_with(sessions, statements, round_id)
    assert updates_of_rounds(statements) == []
