"""A hold is resolved by a row of its own instead of an update: ``hold_resolutions``, one per hold (its key says
"exactly once"), with what of it went to the house and what the house paid under it. Holds, like transfers, become
append-only, and a settlement writes its transfers summed per player instead of per hold — a round of 100,000 wagers
settles in a few set-based statements. Holds already resolved get their row from the transfers that named them.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
APPEND_ONLY = ("holds", "hold_resolutions")

BACKFILL = """
INSERT INTO hold_resolutions (hold_id, status, loss, win, commission, created_at)
SELECT h.id, h.status,
       COALESCE(t.loss, 0), COALESCE(t.win, 0), COALESCE(t.commission, 0), COALESCE(h.resolved_at, h.created_at)
FROM holds h
LEFT JOIN (
    SELECT hold_id,
           SUM(CASE WHEN kind = 'loss' THEN amount ELSE 0 END) AS loss,
           SUM(CASE WHEN kind = 'win' THEN amount ELSE 0 END) AS win,
           SUM(CASE WHEN kind = 'commission' THEN amount ELSE 0 END) AS commission
    FROM transfers WHERE hold_id IS NOT NULL GROUP BY hold_id
) t ON t.hold_id = h.id
WHERE h.status <> 'pending'
"""


def _triggers(dialect: str, table: str) -> list[str]:
    if dialect == "postgresql":
        return [
            f"CREATE FUNCTION {table}_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{table} are append-only'; END $$",
            f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_append_only()",
        ]
    return [
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END",
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END",
    ]


def upgrade() -> None:
    op.create_table(
        "hold_resolutions",
        sa.Column("hold_id", BIG_ID, primary_key=True),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("loss", sa.BigInteger(), nullable=False),
        sa.Column("win", sa.BigInteger(), nullable=False),
        sa.Column("commission", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('posted', 'voided')", name="ck_hold_resolutions_status_known"),
        sa.CheckConstraint("loss >= 0", name="ck_hold_resolutions_loss_not_negative"),
        sa.CheckConstraint(
            "win >= 0 AND commission >= 0 AND commission <= win", name="ck_hold_resolutions_win_and_commission"
        ),
    )
    op.execute(BACKFILL)
    op.drop_index("ix_holds_round_status", table_name="holds")
    with op.batch_alter_table("holds") as table:
        table.drop_constraint("ck_holds_status_known", type_="check")
        table.drop_column("status")
        table.drop_column("resolved_at")
    op.create_index("ix_holds_round", "holds", ["round_id", "id"])
    dialect = op.get_bind().dialect.name
    for name in APPEND_ONLY:
        for statement in _triggers(dialect, name):
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for name in APPEND_ONLY:
        if dialect == "postgresql":
            op.execute(f"DROP TRIGGER IF EXISTS {name}_no_change ON {name}")
            op.execute(f"DROP FUNCTION IF EXISTS {name}_append_only()")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS {name}_no_update")
            op.execute(f"DROP TRIGGER IF EXISTS {name}_no_delete")
    op.drop_index("ix_holds_round", table_name="holds")
    with op.batch_alter_table("holds") as table:
        table.add_column(sa.Column("status", sa.String(8), nullable=False, server_default="pending"))
        table.add_column(sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True))
        table.create_check_constraint("ck_holds_status_known", "status IN ('pending', 'posted', 'voided')")
    op.execute(
        "UPDATE holds SET status = (SELECT r.status FROM hold_resolutions r WHERE r.hold_id = holds.id), "
        "resolved_at = (SELECT r.created_at FROM hold_resolutions r WHERE r.hold_id = holds.id) "
        "WHERE id IN (SELECT hold_id FROM hold_resolutions)"
    )
    op.create_index("ix_holds_round_status", "holds", ["round_id", "status"])
    op.drop_table("hold_resolutions")
