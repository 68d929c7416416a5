"""SQLAlchemy table definitions of the core branch (DESIGN.md §4).

The Alembic revisions in ``beamclaw_core/migrations/versions`` create exactly these
tables; a test compares the two. Timestamps are epoch seconds (float).

* ``conversations`` — one row per session (or sub-agent child): identity, the loop
  state (``state`` kind + ``state_data`` JSON), activity timestamps.
* ``messages`` — append-only; one INSERT per message, ``seq`` increasing per
  conversation. ``kind`` is ``message`` (a :class:`Message` in ``content``), ``summary``
  (a compaction view marker) or ``reset`` (the view starts after it).
* ``owner_epoch`` (conversations) / ``epoch`` (messages) — the ownership lease's fencing
  token (:mod:`beamclaw_core.store.fencing`): a write under an epoch older than the
  conversation's is refused; 0 on a single node.
* ``pending_runs`` — messages queued behind a running turn, so they survive a restart.
* ``always_allowed`` — standing ``/always`` grants, one row per (agent, person, tool), with
  when and in which session it was given. No foreign key: a grant outlives the session it
  was given in (deleting that session keeps it; revoking is how it ends).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

conversations = sa.Table(
    "conversations",
    metadata,
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
    sa.Column("owner_epoch", sa.Integer, nullable=False, server_default="0"),
)

messages = sa.Table(
    "messages",
    metadata,
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
    sa.Column("epoch", sa.Integer, nullable=False, server_default="0"),
    sa.UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
)

pending_runs = sa.Table(
    "pending_runs",
    metadata,
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

always_allowed = sa.Table(
    "always_allowed",
    metadata,
    sa.Column("agent_id", sa.String(128), primary_key=True),
    sa.Column("user_id", sa.String(256), primary_key=True),
    sa.Column("tool", sa.String(256), primary_key=True),
    sa.Column("session_id", sa.String(128), nullable=True),
    sa.Column("granted_at", sa.Float, nullable=False),
)

persons = sa.Table(
    "persons",
    metadata,
    sa.Column("person_id", sa.String(256), primary_key=True),
    sa.Column("session_key", sa.String(256), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
"""A person across channels; ``session_key`` is the user id their sessions are keyed by."""

identity_links = sa.Table(
    "identity_links",
    metadata,
    sa.Column("account", sa.String(256), primary_key=True),
    sa.Column("person_id", sa.String(256), nullable=False),
    sa.Column("linked_at", sa.Float, nullable=False),
)
"""A channel account (``api:ann``, ``tg:123``, ``local:ann``) linked to its person."""

INDEXES = (
    sa.Index("ix_conversations_state", conversations.c.state),
    sa.Index("ix_conversations_agent", conversations.c.agent_id),
    sa.Index("ix_messages_created", messages.c.created_at),
    sa.Index("ix_messages_kind", messages.c.conversation_id, messages.c.kind, messages.c.seq),
    sa.Index(
        "ix_pending_runs_conversation", pending_runs.c.conversation_id, pending_runs.c.position
    ),
)
