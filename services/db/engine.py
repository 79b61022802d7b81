"""Engines for SQLite (default) and PostgreSQL, with the transaction behaviour the ledger relies on."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from services.db.errors import DbError

DEFAULT_URL = "sqlite:///studio.db"
POOL_SIZE = 16  # PostgreSQL connections kept per process: as many as the API runs request threads
SQLITE_BUSY_TIMEOUT_MS = 30_000


def database_url(url: str | None = None) -> str:
    """The URL to use: explicit, else ``STUDIO_DATABASE_URL``, else the SQLite file; PostgreSQL goes via psycopg 3."""
    text = url or os.environ.get("STUDIO_DATABASE_URL") or DEFAULT_URL
    parsed = make_url(text)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


class DatabaseNotFoundError(DbError):
    """A SQLite file that is not there: a process must not quietly start a second studio database."""

    code = "database_not_found"


def require_existing(url: str | None = None) -> None:
    """Refuse a SQLite URL whose file does not exist (``studio up``/``demo`` or ``--create-database`` make one)."""
    parsed = make_url(database_url(url))
    path = parsed.database
    if parsed.get_backend_name() == "sqlite" and path and path != ":memory:" and not Path(path).exists():
        raise DatabaseNotFoundError(
            f"no database at {path}: point --database or STUDIO_DATABASE_URL at the studio's, "
            "or pass --create-database to start a new one"
        )


def make_engine(url: str | None = None, **options: Any) -> Engine:
    resolved = database_url(url)
    if resolved.startswith("sqlite"):
        engine = create_engine(resolved, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}, **options)
        _serialize_sqlite_writers(engine)
        return engine
    # No pre-ping (a round trip per checkout): connections are recycled, and a transaction whose
    # connection turns out dead is run again by ``run_transaction``.
    options.setdefault("pool_size", POOL_SIZE)
    options.setdefault("max_overflow", 4)
    options.setdefault("pool_recycle", 1800)
    return create_engine(resolved, **options)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def _serialize_sqlite_writers(engine: Engine) -> None:
    """Every SQLite transaction takes the write lock at BEGIN.

    pysqlite's default deferred BEGIN lets two transactions read a balance and then both try to
    upgrade to writing, and one fails with "database is locked" mid-transaction. Locking at BEGIN
    makes SQLite behave like row locks held for the whole transaction: simple and correct for a
    single studio's write rate.
    """

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
