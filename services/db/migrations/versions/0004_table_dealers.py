"""Dealers assigned to tables (the dealer console of a table is theirs and the operators' only).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_dealers",
        sa.Column("table_id", sa.String(64), sa.ForeignKey("game_tables.id"), primary_key=True),
        sa.Column("dealer", sa.String(64), sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_table_dealers_dealer", "table_dealers", ["dealer"])


def downgrade() -> None:
    op.drop_table("table_dealers")
