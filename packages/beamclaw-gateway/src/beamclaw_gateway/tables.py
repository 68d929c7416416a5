"""SQLAlchemy tables of the gateway branch (created by ``migrations/versions``).

* ``gateway_idempotency`` — one row per ``Idempotency-Key`` (scoped by token): the
  request fingerprint, ``in_progress``/``done`` and the stored answer, kept until
  ``expires_at``. It survives restarts, so a retried request never runs a second turn.
  An ``in_progress`` row names its ``owner`` (a gateway instance) and that owner's
  ``lease_until`` (refreshed while it lives), and the ``session_id``/``turn_id``/``model``
  needed to settle it from the conversation store when the owner died.
* ``gateway_a2a_tasks`` — A2A tasks: state, the session and turn behind them, and the
  task's JSON (history, artifacts, status message) in ``data``.
* ``telegram_updates`` — every Telegram update received, by ``update_id``, with its
  JSON: ``received`` until the message is durable in its session (``handed``), then
  ``done`` once its answer is in the outbox. A restart re-reads what is not ``done``
  (never answering twice, never losing one); the next poll's offset is the highest id + 1.
  ``node``: the cluster node handling it (NULL: a single node).
* ``telegram_outbox`` — Telegram messages to send, each once: ``ref`` names what it
  answers (``reply:<chat>:<message>``; unique), ``sent_chunks`` how far a long one got.
* ``telegram_pairings`` — pairing codes given to strangers (one per Telegram user, with
  an expiry), and ``telegram_access`` — the Telegram users let in, with an optional agent.
* ``person_channels`` — every (person, channel, target) a person wrote from, with when
  first and last: where a job or heartbeat with no explicit target reaches them (the
  newest one first).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

idempotency = sa.Table(
    "gateway_idempotency",
    metadata,
    sa.Column("key", sa.String(320), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("status_code", sa.Integer, nullable=True),
    sa.Column("response", sa.JSON, nullable=True),
    sa.Column("session_id", sa.String(128), nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("owner", sa.String(64), nullable=True),
    sa.Column("lease_until", sa.Float, nullable=True),
    sa.Column("turn_id", sa.String(64), nullable=True),
    sa.Column("model", sa.String(256), nullable=True),
)

a2a_tasks = sa.Table(
    "gateway_a2a_tasks",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("context_id", sa.String(128), nullable=False),
    sa.Column("session_id", sa.String(128), nullable=False),
    sa.Column("turn_id", sa.String(64), nullable=True),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

telegram_updates = sa.Table(
    "telegram_updates",
    metadata,
    sa.Column("update_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("chat_id", sa.BigInteger, nullable=True),
    sa.Column("message_id", sa.BigInteger, nullable=True),
    sa.Column("session_id", sa.String(128), nullable=True),
    sa.Column("received_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("node", sa.String(128), nullable=True),
)

telegram_outbox = sa.Table(
    "telegram_outbox",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ref", sa.String(128), nullable=False, unique=True),
    sa.Column("chat_id", sa.BigInteger, nullable=False),
    sa.Column("reply_to", sa.BigInteger, nullable=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("sent_chunks", sa.Integer, nullable=False, default=0),
    sa.Column("message_ids", sa.JSON, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("sent_at", sa.Float, nullable=True),
)

telegram_pairings = sa.Table(
    "telegram_pairings",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("user_id", sa.BigInteger, nullable=False, unique=True),
    sa.Column("chat_id", sa.BigInteger, nullable=False),
    sa.Column("username", sa.String(128), nullable=True),
    sa.Column("name", sa.String(256), nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

telegram_access = sa.Table(
    "telegram_access",
    metadata,
    sa.Column("user_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("chat_id", sa.BigInteger, nullable=True),
    sa.Column("username", sa.String(128), nullable=True),
    sa.Column("person", sa.String(256), nullable=True),
    sa.Column("agent", sa.String(128), nullable=True),
    sa.Column("approved_at", sa.Float, nullable=False),
)

person_channels = sa.Table(
    "person_channels",
    metadata,
    sa.Column("user_id", sa.String(256), primary_key=True),
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("target", sa.String(256), primary_key=True),
    sa.Column("first_seen_at", sa.Float, nullable=False),
    sa.Column("last_used_at", sa.Float, nullable=False),
    sa.Index("ix_person_channels_user_last", "user_id", "last_used_at"),
)
