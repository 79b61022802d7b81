"""Four eyes on who may use four eyes: each account records who issued its current token, and an operator's or admin's
token that an admin issued does nothing of its role until a second admin confirms it (``confirmed_by``). Accounts
made before this revision count as confirmed. And a player's rounds are found by their holds, in any game.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("players") as table:
        table.add_column(sa.Column("token_issued_by", sa.String(64), nullable=False, server_default=""))
        table.add_column(sa.Column("confirmed_by", sa.String(64)))
    op.execute("UPDATE players SET confirmed_by = 'before revision 0018' WHERE role IN ('operator', 'admin')")
    op.create_index("ix_holds_player_round", "holds", ["player", "round_id"])  # a player's rounds, any game


def downgrade() -> None:
    op.drop_index("ix_holds_player_round", "holds")
    with op.batch_alter_table("players") as table:
        table.drop_column("confirmed_by")
        table.drop_column("token_issued_by")
