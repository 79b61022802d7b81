"""Rounds: players, threshold changes, game tables, rounds, wagers, the round command log.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.UniqueConstraint("token_hash", name="uq_players_token_hash"),
        sa.CheckConstraint("role IN ('player', 'dealer', 'operator')", name="ck_players_role_known"),
    )
    op.create_table(
        "threshold_changes",
        sa.Column("id", BIG_ID, primary_key=True),
        sa.Column("player", sa.String(64), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("changed_at", WHEN, nullable=False),
        sa.CheckConstraint("threshold BETWEEN 1 AND 5", name="ck_threshold_changes_threshold_range"),
    )
    op.create_index("ix_threshold_changes_player", "threshold_changes", ["player"])
    op.create_table(
        "game_tables",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("table_id", sa.String(64), sa.ForeignKey("game_tables.id"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("opened_at", WHEN, nullable=False),
        sa.Column("betting_closes_at", WHEN, nullable=False),
        sa.Column("window_closes_at", WHEN, nullable=True),
        sa.Column("settled_at", WHEN, nullable=True),
        sa.Column("voided_at", WHEN, nullable=True),
        sa.Column("video_ref", sa.String(128), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("log_length", sa.Integer(), nullable=False),
        sa.UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),
    )
    op.create_index("ix_rounds_table_phase", "rounds", ["table_id", "phase"])
    op.create_table(
        "wagers",
        sa.Column("seq", BIG_ID, primary_key=True),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("round_id", sa.String(64), sa.ForeignKey("rounds.id"), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("side", sa.String(8), nullable=False),
        sa.Column("seat", sa.String(8), nullable=False),
        sa.Column("stake", sa.BigInteger(), nullable=False),
        sa.Column("net", sa.BigInteger(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.UniqueConstraint("id", name="uq_wagers_id"),
        sa.UniqueConstraint("round_id", "player", "side", "seat", name="uq_wagers_round_player_side_seat"),
        sa.CheckConstraint("stake > 0", name="ck_wagers_stake_positive"),
    )
    op.create_index("ix_wagers_player_round", "wagers", ["player", "round_id"])
    op.create_table(
        "round_log",
        sa.Column("round_id", sa.String(64), sa.ForeignKey("rounds.id"), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("command", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )


def downgrade() -> None:
    for table in ("round_log", "wagers", "rounds", "game_tables", "threshold_changes", "players"):
        op.drop_table(table)
