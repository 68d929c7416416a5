"""core: persons across channels and the channel accounts linked to them

Revision ID: core_0003
Revises: core_0002
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0003"
down_revision = "core_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "persons",
        sa.Column("person_id", sa.String(256), primary_key=True),
        sa.Column("session_key", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "identity_links",
        sa.Column("account", sa.String(256), primary_key=True),
        sa.Column("person_id", sa.String(256), nullable=False),
        sa.Column("linked_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("identity_links")
    op.drop_table("persons")
