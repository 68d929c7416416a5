"""The beamclaw-memory error tree."""

from __future__ import annotations


class BeamclawMemoryError(Exception):
    """Base of every error raised by beamclaw-memory."""


class StorageError(BeamclawMemoryError):
    """The database could not be used."""


class DatabaseUnavailableError(StorageError):
    """The database could not be reached or opened.

    Attributes:
        url: the database URL with any password masked.
        reason: the driver's explanation.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"database {url} is unavailable: {reason}")


class MigrationError(StorageError):
    """Applying schema migrations failed."""
