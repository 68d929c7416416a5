"""``INSERT`` with ``ON CONFLICT`` in the database's dialect (SQLite or PostgreSQL).

The dialect's module is imported when a statement is first built for it: a gateway on
SQLite never loads SQLAlchemy's PostgreSQL dialect (19 modules, ~2.3 MB resident).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert


def dialect_insert(dialect: str, table: sa.Table) -> PostgresInsert | SqliteInsert:
    """``INSERT INTO table`` of ``dialect`` (``"postgresql"``; anything else is SQLite),
    with its ``on_conflict_do_nothing``/``on_conflict_do_update`` and ``excluded``."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)
