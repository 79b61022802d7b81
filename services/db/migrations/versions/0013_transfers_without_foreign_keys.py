"""Transfers without per-row foreign-key checks: the ledger writes a transfer only between accounts it has just
locked and read in the same transaction (``Ledger.post_many`` refuses an id it did not find), and names only holds
the same transaction placed or claimed, so the database's per-row checks repeated that work — three index look-ups
and row locks per transfer, most of the time of a large settlement's ``COPY``. Accounts and holds are never deleted.

Revision ID: 0013
Revises: 0012
"""

from alembic import op

from services.db.base import NAMING

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

# SQLite's batch mode rebuilds the table, which drops its triggers: transfers stay append-only (as 0001 made them)
SQLITE_APPEND_ONLY = (
    "CREATE TRIGGER IF NOT EXISTS transfers_no_update BEFORE UPDATE ON transfers "
    "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS transfers_no_delete BEFORE DELETE ON transfers "
    "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END",
)
FOREIGN_KEYS = (
    ("fk_transfers_debit_account_id_accounts", "debit_account_id", "accounts"),
    ("fk_transfers_credit_account_id_accounts", "credit_account_id", "accounts"),
    ("fk_transfers_hold_id_holds", "hold_id", "holds"),
)


def upgrade() -> None:
    with op.batch_alter_table("transfers", naming_convention=NAMING) as table:
        for name, _column, _referred in FOREIGN_KEYS:
            table.drop_constraint(name, type_="foreignkey")
    _append_only()


def _append_only() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_APPEND_ONLY:
            op.execute(statement)


def downgrade() -> None:
    with op.batch_alter_table("transfers", naming_convention=NAMING) as table:
        for name, column, referred in FOREIGN_KEYS:
            table.create_foreign_key(name, referred, [column], ["id"])
    _append_only()
