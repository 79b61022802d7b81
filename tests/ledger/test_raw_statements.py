"""``services.db.sql.Raw``: the writer's PostgreSQL statements on the driver's own cursor fail as SQLAlchemy's would —
so a deadlock is retried and a database gone is said as one — and a statement that would be misread is refused."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import DataError, DBAPIError

from services.db import session_factory
from services.db.sql import Raw, execute
from services.db.unit_of_work import run_transaction

pytestmark = pytest.mark.db


def postgres(database: Engine) -> None:
    if database.dialect.name != "postgresql":
        pytest.skip("Raw statements are PostgreSQL's (STUDIO_TEST_DATABASE_URL)")


def test_a_raw_statements_rows_and_its_error_come_back_as_sqlalchemys(database: Engine) -> None:
    postgres(database)
    with database.connect() as connection:
        rows = execute(connection, Raw("SELECT n, n * 2 AS twice FROM unnest(CAST(:ns AS int[])) AS n"), {"ns": [1, 2]})
        assert [(row.n, row.twice) for row in rows] == [(1, 2), (2, 4)] and rows[0]._asdict() == {"n": 1, "twice": 2}
        with pytest.raises(DataError, match="division by zero"):
            execute(connection, Raw("SELECT 1 / :zero"), {"zero": 0})


def test_a_deadlock_a_raw_statement_meets_is_retried_by_the_unit_of_work(database: Engine) -> None:
    postgres(database)
    deadlock = Raw("DO $$ BEGIN RAISE EXCEPTION 'a deadlock' USING ERRCODE = '40P01'; END $$")
    attempts: list[int] = []

    def work(session: object) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            execute(session.connection(), deadlock, {})  # type: ignore[attr-defined]
        return "done"

    assert run_transaction(session_factory(database), work) == "done" and len(attempts) == 2
    with database.connect() as connection, pytest.raises(DBAPIError) as failed:
        execute(connection, deadlock, {})
    assert failed.value.orig is not None and getattr(failed.value.orig, "sqlstate", None) == "40P01"


def test_a_statement_with_a_percent_or_a_colon_in_a_literal_is_refused() -> None:
    for sql in ("SELECT 'a:b'", "SELECT 5 % 2"):
        with pytest.raises(ValueError, match="no % and no literal with a colon"):
            Raw(sql)
    assert Raw("SELECT x::text, '' FROM t WHERE k = :key").sql == "SELECT x::text, '' FROM t WHERE k = %(key)s"
