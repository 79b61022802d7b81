"""The hand-written migrations produce exactly the schema the models declare."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine

import services.controller.models
import services.journal.models
import services.ledger.models
import services.rounds.models
import services.wallet.models  # noqa: F401
from services.db.base import Base


def test_migrations_match_the_models(database: Engine) -> None:
    with database.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []
