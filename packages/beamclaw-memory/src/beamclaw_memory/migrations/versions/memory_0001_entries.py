"""memory: entries (with embeddings) and the persistent embedding cache

Revision ID: memory_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "memory_0001"
down_revision = None
branch_labels = ("memory",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("agent_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(512), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("category", sa.String(32), nullable=False),
        sa.Column("source", sa.String(512), nullable=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("embedding", sa.LargeBinary, nullable=True),
        sa.Column("embedding_model", sa.String(256), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.UniqueConstraint("agent_id", "key", name="uq_memory_entries_agent_key"),
    )
    op.create_index("ix_memory_entries_agent_category", "memory_entries", ["agent_id", "category"])
    op.create_table(
        "embedding_cache",
        sa.Column("model", sa.String(256), primary_key=True),
        sa.Column("text_hash", sa.String(64), primary_key=True),
        sa.Column("dimensions", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("embedding_cache")
    op.drop_index("ix_memory_entries_agent_category", table_name="memory_entries")
    op.drop_table("memory_entries")
