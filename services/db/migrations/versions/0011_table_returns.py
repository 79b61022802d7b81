"""The return-to-player guard: a table whose settings let a bet return 100 % or more exists only by an operator's
explicit override, recorded with the table.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.add_column(sa.Column("allow_return_over_100", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.drop_column("allow_return_over_100")
