"""The controller's shoe journal: every shoe message and what became of it.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "shoe_journal",
        sa.Column("id", BIG_ID, primary_key=True),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("shoe_id", sa.String(64), nullable=False),
        sa.Column("boot_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("card", sa.String(2), nullable=True),
        sa.Column("burn", sa.Boolean(), nullable=False),
        sa.Column("disposition", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("round_id", sa.String(64), nullable=True),
        sa.Column("video_tc", sa.String(16), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("table_id", "shoe_id", "boot_id", "seq", name="uq_shoe_journal_message"),
    )
    op.create_index("ix_shoe_journal_table", "shoe_journal", ["table_id", "id"])


def downgrade() -> None:
    op.drop_table("shoe_journal")
