"""gateway: idempotency keys know their owner, lease, turn and model

Revision ID: gateway_0002
Revises: gateway_0001

Existing rows are kept: a ``done`` row replays as before; an ``in_progress`` row without
an owner counts as owned by a dead process and is settled at the next start or claim.
"""

import sqlalchemy as sa
from alembic import op

revision = "gateway_0002"
down_revision = "gateway_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("gateway_idempotency", sa.Column("owner", sa.String(64), nullable=True))
    op.add_column("gateway_idempotency", sa.Column("lease_until", sa.Float, nullable=True))
    op.add_column("gateway_idempotency", sa.Column("turn_id", sa.String(64), nullable=True))
    op.add_column("gateway_idempotency", sa.Column("model", sa.String(256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("gateway_idempotency") as batch:
        batch.drop_column("model")
        batch.drop_column("turn_id")
        batch.drop_column("lease_until")
        batch.drop_column("owner")
