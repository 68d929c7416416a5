"""memory: per-agent write and delete counters (the search index's signature)

Revision ID: memory_0004
Revises: memory_0003

Adds ``memory_generations`` (one row per agent: ``writes``, ``deletes``), bumped by every
write path in the transaction that changes the agent's rows. A search used to compare
``count(*)`` and ``max(changed_at)`` of the agent's rows, which reads every row's index
entry and grew with stored memory on every turn. No existing row is touched: an agent
without a counter row reads as (0, 0), and every process's first search of an agent
reads all its rows anyway.
"""

import sqlalchemy as sa
from alembic import op

revision = "memory_0004"
down_revision = "memory_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_generations",
        sa.Column("agent_id", sa.String(128), primary_key=True),
        sa.Column("writes", sa.BigInteger, nullable=False),
        sa.Column("deletes", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("memory_generations")
