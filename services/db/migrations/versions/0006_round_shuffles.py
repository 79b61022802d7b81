"""Rooms dealt online: each round's committed server shuffle (the deck and salt stay unpublished until the
round is over; the commitment is public from the start).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:  # plain ADD COLUMNs: SQLite and PostgreSQL both take them in place
    op.add_column("rounds", sa.Column("shuffle_commitment", sa.String(64), nullable=True))
    op.add_column("rounds", sa.Column("shuffle_deck", sa.Text(), nullable=True))
    op.add_column("rounds", sa.Column("shuffle_salt", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("shuffle_salt")
        batch.drop_column("shuffle_deck")
        batch.drop_column("shuffle_commitment")
