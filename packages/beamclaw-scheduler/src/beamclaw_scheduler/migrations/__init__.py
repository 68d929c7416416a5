"""Alembic revisions of the scheduler branch (``versions/``, registered by entry point)."""
