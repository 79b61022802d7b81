"""One business transaction, retried when the database asks for it.

PostgreSQL may abort a transaction on a deadlock or a serialization failure, and a pooled
connection may have died since its last use (the database restarted); in each case the whole
unit of work runs again on a fresh session, where it sees what the winner committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine, Executable, Row
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import Session, sessionmaker

from services.db.errors import DbError

T = TypeVar("T")
RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock
ATTEMPTS = 8
UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeoutError)  # the database is down, unreachable or saturated


class RetryTransactionError(DbError):
    """Raised inside a unit of work to have it run again from the start."""

    code = "retry_transaction"


def run_transaction(sessions: sessionmaker[Session], work: Callable[[Session], T], attempts: int = ATTEMPTS) -> T:
    for attempt in range(1, attempts + 1):
        try:
            with sessions() as session, session.begin():
                return work(session)
        except RetryTransactionError:
            if attempt == attempts:
                raise
        except DBAPIError as error:
            retryable = error.connection_invalidated or _sqlstate(error) in RETRYABLE_SQLSTATES
            if attempt == attempts or not retryable:
                raise
    raise AssertionError("unreachable")


def _sqlstate(error: DBAPIError) -> str | None:
    return getattr(error.orig, "sqlstate", None)


def read_row(sessions: sessionmaker[Session], statement: Executable, parameters: dict[str, Any]) -> Row[Any] | None:
    """One read outside any transaction — a hot look-up (a bearer token): on PostgreSQL in autocommit, one round trip
    instead of three (no ``BEGIN``, no ``ROLLBACK``)."""
    engine: Engine = sessions.kw["bind"]
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        return connection.execute(statement, parameters).first()
