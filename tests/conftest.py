"""Shared fixtures: a real, migrated, isolated database for every test that asks for one.

Default: a fresh SQLite file. With ``STUDIO_TEST_DATABASE_URL`` (CI: PostgreSQL) each test gets
its own schema, dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from services.db import make_engine, migrate, session_factory

TEST_DATABASE_URL = os.environ.get("STUDIO_TEST_DATABASE_URL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Any test that uses the database is marked ``db``, so CI reruns it against PostgreSQL."""
    for item in items:
        if "database" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Engine]:
    if not TEST_DATABASE_URL:
        engine = make_engine(f"sqlite:///{tmp_path / 'studio.db'}")
        migrate(engine)
        yield engine
        engine.dispose()
        return
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = make_engine(TEST_DATABASE_URL, pool_size=1)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(TEST_DATABASE_URL, connect_args={"options": f"-csearch_path={schema}"})
    try:
        migrate(engine)
        yield engine
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def sessions(database: Engine) -> sessionmaker[Session]:
    return session_factory(database)
