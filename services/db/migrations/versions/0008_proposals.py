"""Four eyes: corrections and voids of settled rounds, proposed by one operator and decided by another.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "proposals",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("round_id", sa.String(64), sa.ForeignKey("rounds.id"), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("preview", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("proposed_by", sa.String(64), nullable=False),
        sa.Column("proposed_from", sa.String(128), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.String(64)),
        sa.Column("decided_from", sa.String(128)),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.Column("decision_reason", sa.Text(), nullable=False, server_default=""),
        sa.CheckConstraint("action IN ('void', 'correct')", name="proposal_action_known"),
        sa.CheckConstraint("status IN ('pending', 'applied', 'rejected')", name="proposal_status_known"),
        sa.CheckConstraint("decided_by IS NULL OR decided_by <> proposed_by", name="proposal_four_eyes"),
    )
    op.create_index("ix_proposals_round", "proposals", ["round_id"])
    op.create_index("ix_proposals_status", "proposals", ["status", "id"])


def downgrade() -> None:
    op.drop_index("ix_proposals_status", "proposals")
    op.drop_index("ix_proposals_round", "proposals")
    op.drop_table("proposals")
