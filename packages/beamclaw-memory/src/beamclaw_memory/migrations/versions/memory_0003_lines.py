"""memory: line ranges of workspace-file chunks

Revision ID: memory_0003
Revises: memory_0002

Adds nullable ``line_start``/``line_end`` to ``memory_entries`` and forgets the recorded
stat/hash of indexed workspace files (``memory_sources`` rows of ``file:`` sources), so the
next indexing pass re-reads each file once and fills in its chunks' lines. No entry is
touched: chunk keys are content-derived, so no row is rewritten except to set its lines,
and no text is re-embedded.
"""

import sqlalchemy as sa
from alembic import op

revision = "memory_0003"
down_revision = "memory_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_entries") as batch:
        batch.add_column(sa.Column("line_start", sa.Integer, nullable=True))
        batch.add_column(sa.Column("line_end", sa.Integer, nullable=True))
    op.execute("DELETE FROM memory_sources WHERE source LIKE 'file:%'")


def downgrade() -> None:
    with op.batch_alter_table("memory_entries") as batch:
        batch.drop_column("line_end")
        batch.drop_column("line_start")
