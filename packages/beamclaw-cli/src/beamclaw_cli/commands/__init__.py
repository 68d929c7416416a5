"""Command groups; each module exposes ``register(app)``."""
