"""scheduler: durable jobs and background spend

Revision ID: scheduler_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "scheduler_0001"
down_revision = None
branch_labels = ("scheduler",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scheduler_jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("agent_id", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("session_mode", sa.String(16), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("deliver_to", sa.String(320), nullable=False),
        sa.Column("approval_mode", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("fire_count", sa.Integer, nullable=False),
        sa.Column("error_count", sa.Integer, nullable=False),
        sa.Column("max_errors", sa.Integer, nullable=False),
        sa.Column("next_run_at", sa.Float, nullable=True),
        sa.Column("last_run_at", sa.Float, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_scheduler_jobs_due", "scheduler_jobs", ["status", "next_run_at"])
    op.create_index("ix_scheduler_jobs_agent", "scheduler_jobs", ["agent_id"])
    op.create_table(
        "scheduler_spend",
        sa.Column("agent_id", sa.String(128), primary_key=True),
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("scheduler_spend")
    op.drop_index("ix_scheduler_jobs_agent", table_name="scheduler_jobs")
    op.drop_index("ix_scheduler_jobs_due", table_name="scheduler_jobs")
    op.drop_table("scheduler_jobs")
