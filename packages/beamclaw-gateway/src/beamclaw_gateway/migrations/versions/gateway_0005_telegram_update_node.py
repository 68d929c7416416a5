"""gateway: the cluster node handling each stored Telegram update

Revision ID: gateway_0005
Revises: gateway_0004

One nullable column: existing rows keep NULL (no node recorded — a single node, or one
that a cluster's sweeping node takes up).
"""

import sqlalchemy as sa
from alembic import op

revision = "gateway_0005"
down_revision = "gateway_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("telegram_updates") as batch:
        batch.add_column(sa.Column("node", sa.String(128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("telegram_updates") as batch:
        batch.drop_column("node")
