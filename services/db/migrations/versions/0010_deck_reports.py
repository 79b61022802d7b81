"""Shoe-end reconciliation: one report per deck that ended, holding the table when a card is missing or doubled.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deck_reports",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("shoe_id", sa.String(64), nullable=False),
        sa.Column("round_id", sa.String(64)),
        sa.Column("ended_by", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), sa.ForeignKey("shoe_journal.id"),
                  nullable=False, unique=True),
        sa.Column("seen", sa.Integer(), nullable=False),
        sa.Column("missing", sa.Text(), nullable=False),
        sa.Column("doubled", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("acknowledged_by", sa.String(64)),
        sa.Column("acknowledged_from", sa.String(128)),
        sa.Column("acknowledged_at", sa.DateTime(timezone=True)),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.CheckConstraint("status IN ('ok', 'held', 'acknowledged')", name="deck_report_status_known"),
    )  # fmt: skip
    op.create_index("ix_deck_reports_table", "deck_reports", ["table_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_deck_reports_table", "deck_reports")
    op.drop_table("deck_reports")
