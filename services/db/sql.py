"""Small SQL helpers that differ between SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

T = TypeVar("T")
CHUNK = 1000  # rows or values per statement: well inside SQLite's 32,766 and PostgreSQL's 65,535 parameters


def is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def insert_ignoring_conflicts(session: Session, model: Any) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` in the session's dialect."""
    return (pg_insert if is_postgres(session) else sqlite_insert)(model).on_conflict_do_nothing()


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
