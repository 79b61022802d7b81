"""The shoe + camera cross-check: each table's ``verify`` mode and window (copied into each round as it opens), and
one ``card_checks`` row per face-up card the shoe read, with what the camera saw and an operator's word on it.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for name in ("game_tables", "rounds"):
        with op.batch_alter_table(name) as table:
            table.add_column(sa.Column("verify", sa.String(8), nullable=False, server_default="off"))
            table.add_column(sa.Column("verify_window_ms", sa.Integer(), nullable=False, server_default="3000"))
    op.create_table(
        "card_checks",
        sa.Column("round_id", sa.String(64), sa.ForeignKey("rounds.id"), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("card", sa.String(2), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True)),
        sa.Column("camera_card", sa.String(2)),
        sa.Column("camera_confidence", sa.Float()),
        sa.Column("camera_crop", sa.LargeBinary()),
        sa.Column("confirmed_read", sa.String(8)),
        sa.Column("confirmed_by", sa.String(64)),
        sa.Column("confirmed_why", sa.Text(), nullable=False, server_default=""),
        sa.Column("confirmed_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint(
            "status IN ('pending', 'agreed', 'mismatch', 'unseen', 'confirmed')", name="card_check_status_known"
        ),
        sa.CheckConstraint("confirmed_read IS NULL OR confirmed_read IN ('shoe', 'camera')", name="card_check_read"),
    )
    op.create_index("ix_card_checks_status", "card_checks", ["status", "due_at"])


def downgrade() -> None:
    op.drop_index("ix_card_checks_status", "card_checks")
    op.drop_table("card_checks")
    for name in ("rounds", "game_tables"):
        with op.batch_alter_table(name) as table:
            table.drop_column("verify_window_ms")
            table.drop_column("verify")
