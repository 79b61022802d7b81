"""How a table is shown: the overlay's delay (to match the viewers' stream latency) and the table's language.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.add_column(sa.Column("overlay_delay_ms", sa.Integer(), nullable=False, server_default="0"))
        table.add_column(sa.Column("language", sa.String(8), nullable=False, server_default="en"))


def downgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.drop_column("language")
        table.drop_column("overlay_delay_ms")
