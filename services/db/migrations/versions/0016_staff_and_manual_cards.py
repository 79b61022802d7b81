"""Trust on the HTTP side: the ``admin`` role (staff accounts and tokens), the staff log, cards entered by hand as a
proposal (``card``) on tables that allow them (``manual_cards``, off by default).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

ROLES_BEFORE = "role IN ('player', 'dealer', 'operator')"
ROLES = "role IN ('player', 'dealer', 'operator', 'admin')"
ACTIONS_BEFORE = "action IN ('void', 'correct')"
ACTIONS = "action IN ('void', 'correct', 'card')"


def _check(table: str, old: str, new: str, condition: str) -> None:
    with op.batch_alter_table(table) as batch:
        batch.drop_constraint(op.f(old), type_="check")  # op.f: the names as stored, not made again by convention
        batch.create_check_constraint(op.f(new), condition)


def upgrade() -> None:
    _check("players", "ck_players_ck_players_role_known", "ck_players_role_known", ROLES)
    _check("proposals", "ck_proposals_proposal_action_known", "ck_proposals_proposal_action_known", ACTIONS)
    with op.batch_alter_table("game_tables") as table:
        table.add_column(sa.Column("manual_cards", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "staff_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("address", sa.String(128), nullable=False),
    )
    op.create_index("ix_staff_events_subject", "staff_events", ["subject", "id"])


def downgrade() -> None:
    op.drop_index("ix_staff_events_subject", "staff_events")
    op.drop_table("staff_events")
    with op.batch_alter_table("game_tables") as table:
        table.drop_column("manual_cards")
    op.execute("DELETE FROM proposals WHERE action = 'card'")
    op.execute("DELETE FROM players WHERE role = 'admin'")
    _check("proposals", "ck_proposals_proposal_action_known", "ck_proposals_proposal_action_known", ACTIONS_BEFORE)
    _check("players", "ck_players_role_known", "ck_players_ck_players_role_known", ROLES_BEFORE)
