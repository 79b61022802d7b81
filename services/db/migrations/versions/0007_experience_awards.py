"""Tiến Lên rooms: the experience points (ĐKN) each round awarded each player who played it to the end.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "experience_awards",
        sa.Column("round_id", sa.String(64), sa.ForeignKey("rounds.id"), primary_key=True),
        sa.Column("player", sa.String(64), primary_key=True),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("awarded_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_experience_awards_player", "experience_awards", ["player"])


def downgrade() -> None:
    op.drop_index("ix_experience_awards_player", "experience_awards")
    op.drop_table("experience_awards")
