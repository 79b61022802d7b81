"""Database access shared by every service: engine set-up, the declarative base, migrations.

Default: a SQLite file (``studio.db``); production: PostgreSQL via ``STUDIO_DATABASE_URL``.
One code path serves both; the few dialect differences live in this package.
"""

from services.db.base import Base
from services.db.engine import DEFAULT_URL, database_url, make_engine, session_factory
from services.db.migrate import migrate

__all__ = ["DEFAULT_URL", "Base", "database_url", "make_engine", "migrate", "session_factory"]
