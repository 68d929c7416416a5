"""Fixtures for beamclaw-memory tests: a service per backend, embedders, a clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from beamclaw_memory import (
    Database,
    Embedder,
    IndexedMemory,
    MemorySettings,
    create_memory_service,
)
from beamclaw_memory.testing import HashingEmbedder

BACKENDS = [
    pytest.param("memory", id="in-memory"),
    pytest.param("sqlite", id="sql-sqlite"),
    pytest.param("postgres", id="sql-postgres", marks=pytest.mark.postgres),
]


class FakeClock:
    """A settable wall clock (epoch seconds)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'memory.db'}")
    await db.migrate()
    yield db
    await db.dispose()


ServiceFactory = Callable[..., IndexedMemory]


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    """``(backend, database url)``; resolved outside the event loop (postgres_url is sync)."""
    kind: str = request.param
    if kind == "memory":
        return kind, None
    if kind == "sqlite":
        return kind, f"sqlite:///{tmp_path / 'memory.db'}"
    return kind, str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def backend_db(
    backend_url: tuple[str, str | None],
) -> AsyncIterator[tuple[str, Database | None]]:
    """``(backend, migrated database)``; the database is None for in-memory."""
    kind, url = backend_url
    if url is None:
        yield kind, None
        return
    db = Database(url)
    await db.migrate()
    yield kind, db
    await db.dispose()


@pytest.fixture
def make_service(
    backend_db: tuple[str, Database | None], clock: FakeClock, tmp_path: Path
) -> ServiceFactory:
    """Build a service on the parametrised backend (several may share one database)."""
    kind, db = backend_db

    def build(
        settings: MemorySettings | None = None, embedder: Embedder | str | None = "hashing"
    ) -> IndexedMemory:
        cfg = settings or MemorySettings()
        cfg = cfg.model_copy(update={"backend": "memory" if kind == "memory" else "sql"})
        emb = HashingEmbedder() if isinstance(embedder, str) else embedder
        return create_memory_service(
            cfg,
            db,
            embedder=emb,
            clock=clock,
            home=tmp_path / "home",
        )

    return build


@pytest.fixture
async def service(make_service: ServiceFactory) -> AsyncIterator[IndexedMemory]:
    memory = make_service()
    yield memory
    await memory.aclose()
