"""Database access shared by every service: engine set-up, the declarative base, migrations.

Default: a SQLite file (``studio.db``); production: PostgreSQL via ``STUDIO_DATABASE_URL``.
One code path serves both; the few dialect differences live in this package.
"""

from services.db.base import Base
from services.db.engine import (
    DEFAULT_URL,
    DatabaseNotFoundError,
    database_url,
    make_engine,
    require_existing,
    session_factory,
)
from services.db.migrate import migrate

__all__ = [
    "DEFAULT_URL",
    "Base",
    "DatabaseNotFoundError",
    "database_url",
    "make_engine",
    "migrate",
    "require_existing",
    "session_factory",
]
