"""SQLAlchemy tables of the gateway branch (created by ``migrations/versions``).

* ``gateway_idempotency`` — one row per ``Idempotency-Key`` (scoped by token): the
  request fingerprint, ``in_progress``/``done`` and the stored answer, kept until
  ``expires_at``. It survives restarts, so a retried request never runs a second turn.
  An ``in_progress`` row names its ``owner`` (a gateway instance) and that owner's
  ``lease_until`` (refreshed while it lives), and the ``session_id``/``turn_id``/``model``
  needed to settle it from the conversation store when the owner died.
* ``gateway_a2a_tasks`` — A2A tasks: state, the session and turn behind them, and the
  task's JSON (history, artifacts, status message) in ``data``.
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
