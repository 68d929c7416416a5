"""SQLAlchemy Core descriptions of the memory tables (created by the migrations).

``memory_entries`` holds every searchable unit of an agent's memory: facts stored through
``store`` and the chunks of indexed workspace files and transcripts. ``changed_at`` moves
forward on every write to a row (value or embedding). ``memory_generations`` counts each
agent's writes and deletes (bumped in the transaction that changes its rows): the
signature a process reads by primary key before every search to know whether its
in-memory index is current, at a cost that does not grow with the rows (no row: both 0).
``line_start``/``line_end`` locate a file chunk in its file (NULL for other rows).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

memory_entries = sa.Table(
    "memory_entries",
    metadata,
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
    sa.Column("changed_at", sa.Float, nullable=False),
    sa.Column("line_start", sa.Integer, nullable=True),
    sa.Column("line_end", sa.Integer, nullable=True),
)

embedding_cache = sa.Table(
    "embedding_cache",
    metadata,
    sa.Column("model", sa.String(256), primary_key=True),
    sa.Column("text_hash", sa.String(64), primary_key=True),
    sa.Column("dimensions", sa.Integer, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

memory_sources = sa.Table(
    "memory_sources",
    metadata,
    sa.Column("agent_id", sa.String(128), primary_key=True),
    sa.Column("source", sa.String(512), primary_key=True),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("mtime_ns", sa.BigInteger, nullable=False),
    sa.Column("indexed_at", sa.Float, nullable=False),
)

memory_generations = sa.Table(
    "memory_generations",
    metadata,
    sa.Column("agent_id", sa.String(128), primary_key=True),
    sa.Column("writes", sa.BigInteger, nullable=False),
    sa.Column("deletes", sa.BigInteger, nullable=False),
)
