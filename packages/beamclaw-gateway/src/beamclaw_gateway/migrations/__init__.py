"""Alembic revisions of the gateway branch (``versions/``, registered by entry point)."""
