"""A table's result pause: how long a round's result stays up before the next round opens (null: the controller's
own setting), copied onto each round as it opens, as the cross-check's window is.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.add_column(sa.Column("result_pause_ms", sa.Integer(), nullable=True))
    with op.batch_alter_table("rounds") as table:
        table.add_column(sa.Column("result_pause_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as table:
        table.drop_column("result_pause_ms")
    with op.batch_alter_table("game_tables") as table:
        table.drop_column("result_pause_ms")
