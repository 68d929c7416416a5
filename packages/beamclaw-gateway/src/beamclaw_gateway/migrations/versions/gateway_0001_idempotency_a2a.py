"""gateway: idempotency keys and A2A tasks

Revision ID: gateway_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "gateway_0001"
down_revision = None
branch_labels = ("gateway",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_idempotency",
        sa.Column("key", sa.String(320), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=True),
        sa.Column("response", sa.JSON, nullable=True),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_gateway_idempotency_expires", "gateway_idempotency", ["expires_at"])
    op.create_table(
        "gateway_a2a_tasks",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("context_id", sa.String(128), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("turn_id", sa.String(64), nullable=True),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_gateway_a2a_tasks_context", "gateway_a2a_tasks", ["context_id"])
    op.create_index("ix_gateway_a2a_tasks_updated", "gateway_a2a_tasks", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_gateway_a2a_tasks_updated", table_name="gateway_a2a_tasks")
    op.drop_index("ix_gateway_a2a_tasks_context", table_name="gateway_a2a_tasks")
    op.drop_table("gateway_a2a_tasks")
    op.drop_index("ix_gateway_idempotency_expires", table_name="gateway_idempotency")
    op.drop_table("gateway_idempotency")
