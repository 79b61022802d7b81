"""Ledger: accounts, append-only transfers, holds, idempotency keys.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)

# Transfers are history: the database itself refuses to change or delete one.
APPEND_ONLY = {
    "sqlite": [
        "CREATE TRIGGER transfers_no_update BEFORE UPDATE ON transfers "
        "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END",
        "CREATE TRIGGER transfers_no_delete BEFORE DELETE ON transfers "
        "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION transfers_append_only() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'transfers are append-only'; END $$",
        "CREATE TRIGGER transfers_no_change BEFORE UPDATE OR DELETE ON transfers "
        "FOR EACH ROW EXECUTE FUNCTION transfers_append_only()",
    ],
}


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.UniqueConstraint("kind", "owner", "currency", name="uq_accounts_kind_owner_currency"),
        sa.CheckConstraint(
            "kind IN ('receivable', 'house', 'cash') OR balance >= 0", name="ck_accounts_balance_not_negative"
        ),
    )
    op.create_table(
        "holds",
        sa.Column("id", BIG_ID, primary_key=True),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("round_id", sa.String(64), nullable=False),
        sa.Column("wager_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("resolved_at", WHEN, nullable=True),
        sa.CheckConstraint("amount > 0", name="ck_holds_amount_positive"),
        sa.CheckConstraint("status IN ('pending', 'posted', 'voided')", name="ck_holds_status_known"),
    )
    op.create_index("ix_holds_round_status", "holds", ["round_id", "status"])
    op.create_table(
        "transfers",
        sa.Column("id", BIG_ID, primary_key=True),
        sa.Column("debit_account_id", sa.Integer(), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("credit_account_id", sa.Integer(), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("round_id", sa.String(64), nullable=True),
        sa.Column("wager_id", sa.String(64), nullable=True),
        sa.Column("hold_id", BIG_ID, sa.ForeignKey("holds.id"), nullable=True),
        sa.Column("request_key", sa.String(128), nullable=True),
        sa.Column("memo", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.CheckConstraint("amount > 0", name="ck_transfers_amount_positive"),
        sa.CheckConstraint("debit_account_id <> credit_account_id", name="ck_transfers_distinct_accounts"),
    )
    op.create_index("ix_transfers_round", "transfers", ["round_id"])
    op.create_index("ix_transfers_debit", "transfers", ["debit_account_id", "id"])
    op.create_index("ix_transfers_credit", "transfers", ["credit_account_id", "id"])
    op.create_table(
        "idempotency_keys",
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    for statement in APPEND_ONLY.get(op.get_bind().dialect.name, []):
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS transfers_no_change ON transfers")
        op.execute("DROP FUNCTION IF EXISTS transfers_append_only()")
    for table in ("idempotency_keys", "transfers", "holds", "accounts"):
        op.drop_table(table)
