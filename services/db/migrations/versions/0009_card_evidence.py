"""Card evidence and video links: each journaled shoe message keeps how it was read (source, confidence, the
device's raw bytes, a camera's crop of the card as a JPEG); a table may name its video recorder's URL for operators
to jump to a card's moment.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("shoe_journal") as table:
        table.add_column(sa.Column("source", sa.String(16), nullable=False, server_default=""))
        table.add_column(sa.Column("confidence", sa.Float()))
        table.add_column(sa.Column("raw", sa.Text(), nullable=False, server_default=""))
        table.add_column(sa.Column("crop", sa.LargeBinary()))
    with op.batch_alter_table("game_tables") as table:
        table.add_column(sa.Column("video_url_template", sa.String(500), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("game_tables") as table:
        table.drop_column("video_url_template")
    with op.batch_alter_table("shoe_journal") as table:
        table.drop_column("crop")
        table.drop_column("raw")
        table.drop_column("confidence")
        table.drop_column("source")
