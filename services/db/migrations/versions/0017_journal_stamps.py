"""The shoe journal keeps each message's stamp: a restarted controller knows the newest stamp it took, so a run of
the shoe stamped no later (an old message sent again) is not taken for a restart of the shoe.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("shoe_journal") as table:
        table.add_column(sa.Column("stamped_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("shoe_journal") as table:
        table.drop_column("stamped_at")
