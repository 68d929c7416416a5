"""scheduler: the outbox of jobs' answers (delivered at least once, with a stable id)

Revision ID: scheduler_0002
Revises: scheduler_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "scheduler_0002"
down_revision = "scheduler_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scheduler_deliveries",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("job_id", sa.String(32), nullable=False),
        sa.Column("deliver_to", sa.String(320), nullable=False),
        sa.Column("person", sa.String(256), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("ref", sa.String(128), nullable=False),
        sa.Column("text", sa.Text, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.Float, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index(
        "ix_scheduler_deliveries_state", "scheduler_deliveries", ["state", "next_attempt_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_scheduler_deliveries_state", table_name="scheduler_deliveries")
    op.drop_table("scheduler_deliveries")
