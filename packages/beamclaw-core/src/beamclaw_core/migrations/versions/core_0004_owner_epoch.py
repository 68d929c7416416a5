"""core: the ownership lease's fencing token on conversations and messages

Existing rows keep their data and get epoch 0 (what a single node writes).

Revision ID: core_0004
Revises: core_0003
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0004"
down_revision = "core_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "conversations", sa.Column("owner_epoch", sa.Integer, nullable=False, server_default="0")
    )
    op.add_column("messages", sa.Column("epoch", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("epoch")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("owner_epoch")
