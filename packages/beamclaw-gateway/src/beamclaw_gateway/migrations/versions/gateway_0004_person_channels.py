"""gateway: each person's known channels and when they last used each

Revision ID: gateway_0004
Revises: gateway_0003

A new table only; nothing existing changes.
"""

import sqlalchemy as sa
from alembic import op

revision = "gateway_0004"
down_revision = "gateway_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "person_channels",
        sa.Column("user_id", sa.String(256), primary_key=True),
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("target", sa.String(256), primary_key=True),
        sa.Column("first_seen_at", sa.Float, nullable=False),
        sa.Column("last_used_at", sa.Float, nullable=False),
    )
    op.create_index("ix_person_channels_user_last", "person_channels", ["user_id", "last_used_at"])


def downgrade() -> None:
    op.drop_index("ix_person_channels_user_last", "person_channels")
    op.drop_table("person_channels")
