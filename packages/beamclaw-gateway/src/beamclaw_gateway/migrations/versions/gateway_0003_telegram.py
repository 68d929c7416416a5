"""gateway: Telegram updates (dedup), outbox, pairing codes and approved users

Revision ID: gateway_0003
Revises: gateway_0002

New tables only; nothing existing changes.
"""

import sqlalchemy as sa
from alembic import op

revision = "gateway_0003"
down_revision = "gateway_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "telegram_updates",
        sa.Column("update_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("chat_id", sa.BigInteger, nullable=True),
        sa.Column("message_id", sa.BigInteger, nullable=True),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_telegram_updates_state", "telegram_updates", ["state"])
    op.create_table(
        "telegram_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ref", sa.String(128), nullable=False, unique=True),
        sa.Column("chat_id", sa.BigInteger, nullable=False),
        sa.Column("reply_to", sa.BigInteger, nullable=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("sent_chunks", sa.Integer, nullable=False),
        sa.Column("message_ids", sa.JSON, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("sent_at", sa.Float, nullable=True),
    )
    op.create_index("ix_telegram_outbox_state", "telegram_outbox", ["state"])
    op.create_table(
        "telegram_pairings",
        sa.Column("code", sa.String(16), primary_key=True),
        sa.Column("user_id", sa.BigInteger, nullable=False, unique=True),
        sa.Column("chat_id", sa.BigInteger, nullable=False),
        sa.Column("username", sa.String(128), nullable=True),
        sa.Column("name", sa.String(256), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "telegram_access",
        sa.Column("user_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("chat_id", sa.BigInteger, nullable=True),
        sa.Column("username", sa.String(128), nullable=True),
        sa.Column("person", sa.String(256), nullable=True),
        sa.Column("agent", sa.String(128), nullable=True),
        sa.Column("approved_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("telegram_access")
    op.drop_table("telegram_pairings")
    op.drop_index("ix_telegram_outbox_state", "telegram_outbox")
    op.drop_table("telegram_outbox")
    op.drop_index("ix_telegram_updates_state", "telegram_updates")
    op.drop_table("telegram_updates")
