"""Alembic environment shared by every BeamClaw package's migration branch.

Migrations always run on a connection handed in through ``config.attributes`` (see
``beamclaw_memory.storage``); there is no offline mode.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
