"""core: standing /always grants per agent, person and tool

Revision ID: core_0002
Revises: core_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0002"
down_revision = "core_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "always_allowed",
        sa.Column("agent_id", sa.String(128), primary_key=True),
        sa.Column("user_id", sa.String(256), primary_key=True),
        sa.Column("tool", sa.String(256), primary_key=True),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("granted_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("always_allowed")
