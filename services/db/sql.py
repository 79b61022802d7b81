"""Small SQL helpers that differ between SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import psycopg
from psycopg.rows import namedtuple_row
from sqlalchemy import Connection, Executable
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

T = TypeVar("T")
CHUNK = 1000  # rows or values per statement: well inside SQLite's 32,766 and PostgreSQL's 65,535 parameters


def insert_ignoring_conflicts(session: Session, model: Any) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` in the session's dialect."""
    return insert_ignoring_conflicts_in(session.get_bind().dialect.name, model)


def insert_ignoring_conflicts_in(dialect: str, model: Any) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` in the named dialect ("postgresql" or "sqlite")."""
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(model).on_conflict_do_nothing()


class PerDialect(Generic[T]):
    """A statement built once per dialect, on first use, then reused: the hot paths build no SQL per call.

    ``build`` gets the dialect's name; a prebuilt statement also hits SQLAlchemy's compiled cache.
    """

    def __init__(self, build: Callable[[str], T]) -> None:
        self._build = build
        self._built: dict[str, T] = {}

    def __call__(self, connection: Connection) -> T:
        name = connection.dialect.name
        built = self._built.get(name)
        if built is None:
            built = self._built[name] = self._build(name)
        return built


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Raw:
    """A PostgreSQL statement for the hottest transactions (the bet slip writer's), run on the driver's own cursor in
    the caller's transaction: SQLAlchemy's work around a statement (its execution context, its result's set-up) cost
    more there than the statement itself. Written with ``:name`` parameters, as ``text()`` is (no ``%``, no literal
    holding a colon); rows come back as named tuples (with ``_asdict()``, as SQLAlchemy's rows), errors as SQLAlchemy
    raises them."""

    def __init__(self, sql: str) -> None:
        if "%" in sql or re.search(r"'[^']*:[^']*'", sql):
            raise ValueError(f"a Raw statement holds no % and no literal with a colon (a parameter's mark): {sql!r}")
        self.sql = re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", sql)

    def __repr__(self) -> str:
        return f"Raw({self.sql!r})"


def execute(connection: Connection, statement: Executable | Raw, parameters: Mapping[str, Any]) -> list[Any]:
    """The statement's rows (none for one that returns none): a ``Raw`` one on the driver's cursor, any other through
    SQLAlchemy."""
    if not isinstance(statement, Raw):
        result = connection.execute(statement, dict(parameters))
        return list(result) if result.returns_rows else []
    driver = connection.connection.driver_connection
    assert driver is not None
    try:
        with driver.cursor(row_factory=namedtuple_row) as cursor:
            cursor.execute(statement.sql, parameters)
            return cursor.fetchall() if cursor.description is not None else []
    except psycopg.Error as error:  # as SQLAlchemy would raise it: a deadlock retried, a lost connection invalidated
        lost = connection.dialect.is_disconnect(error, driver, None)  # type: ignore[arg-type]
        if lost:
            connection.invalidate(error)
        raise DBAPIError.instance(statement.sql, dict(parameters), error, psycopg.Error, connection_invalidated=lost,
                                  dialect=connection.dialect) from error  # fmt: skip
