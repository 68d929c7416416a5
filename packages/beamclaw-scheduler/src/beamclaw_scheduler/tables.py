"""SQLAlchemy tables of the scheduler branch (created by ``migrations/versions``).

* ``scheduler_jobs`` — one row per job: who (agent, person, session mode and id), when
  (``kind`` and its ``spec`` JSON, ``next_run_at``), what (``prompt``, ``deliver_to``,
  ``approval_mode``) and how it went (``status``, counts, last fire, last error). The row
  is the truth: the runner keeps no timer a restart could lose.
* ``scheduler_spend`` — background tokens and cost per agent and local day (heartbeats and
  jobs), counted apart from people's turns for the heartbeat's daily cap.
* ``scheduler_deliveries`` — the outbox of jobs' answers, one row per fire (``key`` =
  ``<job>:<fire>``, also the delivery id the receiver dedupes on): ``awaiting`` from
  before the turn is sent (``session_id`` and ``ref``, the turn's ``source_message_id``,
  find its answer after a crash), ``pending`` once the answer is in ``text``, then
  ``sent`` or ``failed`` (after ``attempts`` tries; ``next_attempt_at`` spaces them).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

jobs = sa.Table(
    "scheduler_jobs",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("agent_id", sa.String(128), nullable=False),
    sa.Column("user_id", sa.String(256), nullable=False),
    sa.Column("session_mode", sa.String(16), nullable=False),
    sa.Column("session_id", sa.String(128), nullable=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("prompt", sa.Text, nullable=False),
    sa.Column("deliver_to", sa.String(320), nullable=False),
    sa.Column("approval_mode", sa.String(8), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("fire_count", sa.Integer, nullable=False),
    sa.Column("error_count", sa.Integer, nullable=False),
    sa.Column("max_errors", sa.Integer, nullable=False),
    sa.Column("next_run_at", sa.Float, nullable=True),
    sa.Column("last_run_at", sa.Float, nullable=True),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

spend = sa.Table(
    "scheduler_spend",
    metadata,
    sa.Column("agent_id", sa.String(128), primary_key=True),
    sa.Column("day", sa.String(10), primary_key=True),
    sa.Column("tokens", sa.Integer, nullable=False),
    sa.Column("cost_usd", sa.Float, nullable=False),
)

deliveries = sa.Table(
    "scheduler_deliveries",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("job_id", sa.String(32), nullable=False),
    sa.Column("deliver_to", sa.String(320), nullable=False),
    sa.Column("person", sa.String(256), nullable=False),
    sa.Column("session_id", sa.String(128), nullable=False),
    sa.Column("ref", sa.String(128), nullable=False),
    sa.Column("text", sa.Text, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("next_attempt_at", sa.Float, nullable=False),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)
