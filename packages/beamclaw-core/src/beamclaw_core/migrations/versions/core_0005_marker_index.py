"""core: an index that finds a conversation's summary and reset markers without a scan

The last reset (short-term memory asks on every turn) and the last marker (a session's
LLM view) were found by reading every message row of the conversation: a turn cost more
the longer the conversation. No row changes.

Revision ID: core_0005
Revises: core_0004
"""

from alembic import op

revision = "core_0005"
down_revision = "core_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_messages_kind", "messages", ["conversation_id", "kind", "seq"])


def downgrade() -> None:
    op.drop_index("ix_messages_kind", table_name="messages")
