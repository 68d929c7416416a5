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


class StorageUnavailableError(StorageError):
    """The database refused a unit of work for a passing reason: it is locked by another
    writer (``busy``), its disk or quota is full (``full``), or its disk failed to read or
    write (``io``). Nothing of the unit was committed; the same unit may succeed later.

    Attributes:
        url: the database URL with any password masked.
        reason: ``busy``, ``full`` or ``io``.
        detail: the driver's message.
    """

    def __init__(self, url: str, reason: str, detail: str) -> None:
        self.url = url
        self.reason = reason
        self.detail = detail
        super().__init__(f"database {url}: {describe_unavailable(reason)} ({detail})")


def describe_unavailable(reason: str) -> str:
    """A sentence for a client about why the database is unavailable (no URL, no detail)."""
    return f"{unavailable_state(reason)}; nothing was saved"


def unavailable_state(reason: str) -> str:
    """What is wrong with the database, for a client (no URL, no detail)."""
    if reason == "full":
        return "the database's disk is full"
    if reason == "io":
        return "the database's disk failed to read or write"
    if reason == "unreachable":
        return "the database cannot be reached"
    return "the database is busy (locked by another writer)"


class MigrationError(StorageError):
    """Applying schema migrations failed."""


class UnitOfWorkError(StorageError):
    """A unit of work was misused (a programming error; nothing was committed)."""


class NestedUnitError(UnitOfWorkError):
    """A unit of work started another (``Database.read``/``write`` called from inside one):
    the inner one could neither see nor join the outer transaction."""


class UnitClosedError(UnitOfWorkError):
    """A :class:`~beamclaw_memory.Unit` was used after its transaction ended."""


class InvalidMemoryInputError(BeamclawMemoryError):
    """A store/forget request the service refuses (bad key, oversized value).

    Attributes:
        field: which argument was wrong (``key``, ``value``, ``category``).
        reason: a sentence the agent can act on.
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid {field}: {reason}")


class EmbeddingError(BeamclawMemoryError):
    """Embeddings could not be obtained; search degrades to keyword.

    Attributes:
        model: the embedding model asked for.
        reason: a short, secret-free explanation (logged and put in ``degraded_reason``).
    """

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"embedding model {model}: {reason}")


class EmbeddingUnavailableError(EmbeddingError):
    """The endpoint failed: HTTP error status, timeout, connection error, missing key."""


class EmbeddingResponseError(EmbeddingError):
    """The endpoint answered with something that is not a list of vectors."""


class EmbeddingDimensionError(EmbeddingError):
    """Vectors of an unexpected size (e.g. after a model change).

    Attributes:
        expected: the configured or indexed dimension.
        actual: the dimension received.
    """

    def __init__(self, model: str, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(model, f"dimension mismatch: expected {expected}, got {actual}")
