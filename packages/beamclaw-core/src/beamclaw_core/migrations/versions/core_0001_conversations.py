"""core: conversations, append-only messages and pending runs

Revision ID: core_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "core_0001"
down_revision = None
branch_labels = ("core",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("agent_id", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("channel", sa.String(128), nullable=True),
        sa.Column(
            "parent_id",
            sa.String(128),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("state_data", sa.JSON, nullable=False),
        sa.Column("last_activity_at", sa.Float, nullable=False),
        sa.Column("state_updated_at", sa.Float, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_conversations_state", "conversations", ["state"])
    op.create_index("ix_conversations_agent", "conversations", ["agent_id"])
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "conversation_id",
            sa.String(128),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("role", sa.String(16), nullable=True),
        sa.Column("content", sa.JSON, nullable=False),
        sa.Column("usage", sa.JSON, nullable=True),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
    )
    op.create_index("ix_messages_created", "messages", ["created_at"])
    op.create_table(
        "pending_runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(128),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_pending_runs_conversation", "pending_runs", ["conversation_id", "position"])


def downgrade() -> None:
    op.drop_index("ix_pending_runs_conversation", table_name="pending_runs")
    op.drop_table("pending_runs")
    op.drop_index("ix_messages_created", table_name="messages")
    op.drop_table("messages")
    op.drop_index("ix_conversations_agent", table_name="conversations")
    op.drop_index("ix_conversations_state", table_name="conversations")
    op.drop_table("conversations")
