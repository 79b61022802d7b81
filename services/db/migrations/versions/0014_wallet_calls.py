"""The outbox of calls to an operator's wallet (seamless wallet): recorded before sent, kept until answered; and each
table's wallet (``internal``: the studio's ledger; ``operator``: the operator's wallet, the ledger its mirror).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "wallet_calls",
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("transaction_id", sa.String(128), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("round_id", sa.String(64), nullable=False),
        sa.Column("original_transaction_id", sa.String(128)),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("answer", sa.Text()),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True)),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("mirrored_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("status IN ('pending', 'ok', 'refused')", name="wallet_call_status_known"),
    )
    op.create_index("ix_wallet_calls_status", "wallet_calls", ["status", "created_at"])
    op.create_index("ix_wallet_calls_round", "wallet_calls", ["round_id"])
    op.create_index("ix_wallet_calls_unmirrored", "wallet_calls", ["purpose", "mirrored_at"])
    with op.batch_alter_table("game_tables") as batch:
        batch.add_column(sa.Column("wallet", sa.String(16), nullable=False, server_default="internal"))


def downgrade() -> None:
    with op.batch_alter_table("game_tables") as batch:
        batch.drop_column("wallet")
    op.drop_index("ix_wallet_calls_unmirrored", "wallet_calls")
    op.drop_index("ix_wallet_calls_round", "wallet_calls")
    op.drop_index("ix_wallet_calls_status", "wallet_calls")
    op.drop_table("wallet_calls")
