"""memory: change tracking on entries and the indexed-source table

Revision ID: memory_0002
Revises: memory_0001
"""

import sqlalchemy as sa
from alembic import op

revision = "memory_0002"
down_revision = "memory_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_entries") as batch:
        batch.add_column(sa.Column("changed_at", sa.Float, nullable=True))
    op.execute("UPDATE memory_entries SET changed_at = updated_at")
    with op.batch_alter_table("memory_entries") as batch:
        batch.alter_column("changed_at", existing_type=sa.Float, nullable=False)
    op.create_index("ix_memory_entries_agent_source", "memory_entries", ["agent_id", "source"])
    op.create_index("ix_memory_entries_agent_changed", "memory_entries", ["agent_id", "changed_at"])
    op.create_table(
        "memory_sources",
        sa.Column("agent_id", sa.String(128), primary_key=True),
        sa.Column("source", sa.String(512), primary_key=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("mtime_ns", sa.BigInteger, nullable=False),
        sa.Column("indexed_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("memory_sources")
    op.drop_index("ix_memory_entries_agent_changed", table_name="memory_entries")
    op.drop_index("ix_memory_entries_agent_source", table_name="memory_entries")
    with op.batch_alter_table("memory_entries") as batch:
        batch.drop_column("changed_at")
