"""A wager's spot is any house game's: its side and seat names may be up to 16 characters (a baccarat pair bet's
``player_pair``), where Pok Deng's fitted in 8.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("wagers") as table:
        table.alter_column("side", type_=sa.String(16), existing_type=sa.String(8), existing_nullable=False)
        table.alter_column("seat", type_=sa.String(16), existing_type=sa.String(8), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("wagers") as table:
        table.alter_column("seat", type_=sa.String(8), existing_type=sa.String(16), existing_nullable=False)
        table.alter_column("side", type_=sa.String(8), existing_type=sa.String(16), existing_nullable=False)
