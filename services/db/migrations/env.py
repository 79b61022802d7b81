"""Alembic environment: the engine comes from ``config.attributes`` (see ``services.db.migrate``)."""

from alembic import context

import services.controller.models
import services.journal.models
import services.ledger.models
import services.rounds.models
import services.wallet.models  # noqa: F401
from services.db.base import Base

config = context.config
engine = config.attributes["engine"]

with engine.begin() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    context.run_migrations()
