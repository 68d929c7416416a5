"""Fixtures shared by every package's tests and the cross-package suite.

* Real network calls are impossible: connecting to anything but loopback raises.
* Every test gets its own ``BEAMCLAW_HOME`` and no provider keys from the environment.
* ``postgres_url`` yields a fresh, empty database on the real PostgreSQL server that
  ``make test`` starts; when the server is not configured the test fails (CI never skips).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if host in ("localhost", ""):
            return
        try:
            ip = ipaddress.ip_address(host.split("%")[0])
        except ValueError:
            raise OSError(f"tests may not resolve or reach external host {host!r}") from None
        if not ip.is_loopback:
            raise OSError(f"tests may not reach non-loopback address {host}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check_address(address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]  # network guard for tests
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]

_SECRET_VARS = (
    "OPENROUTER_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "BRAVE_API_KEY",
    "TELEGRAM_BOT_TOKEN",
    "BEAMCLAW_GATEWAY_TOKEN",
)


@pytest.fixture(autouse=True)
def beamclaw_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated ``BEAMCLAW_HOME`` per test, with no config or keys leaking in."""
    home = tmp_path / "beamclaw-home"
    monkeypatch.setenv("BEAMCLAW_HOME", str(home))
    for var in list(os.environ):
        if (
            var.startswith("BEAMCLAW_")
            and var not in ("BEAMCLAW_HOME",)
            and not var.startswith("BEAMCLAW_TEST_")
        ):
            monkeypatch.delenv(var, raising=False)
    for var in _SECRET_VARS:
        monkeypatch.delenv(var, raising=False)
    return home


def _service_url(var: str, what: str) -> str:
    url = os.environ.get(var)
    if not url:
        pytest.fail(
            f"{var} is not set: {what} tests need the real server that `make test` starts "
            f"(scripts/test-services.sh start; then export the lines of .test-services/env)"
        )
    return url


@pytest.fixture
def postgres_admin_url() -> str:
    """URL of the test PostgreSQL server's maintenance database."""
    return _service_url("BEAMCLAW_TEST_POSTGRES_URL", "PostgreSQL")


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh database on the real PostgreSQL server, dropped after the test."""
    import asyncio

    import asyncpg  # type: ignore[import-untyped]

    name = f"bc_test_{uuid.uuid4().hex[:12]}"
    admin = postgres_admin_url

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    base = admin.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each kind in turn: a SQLite file, then a PostgreSQL database
    (for code that must behave the same on both)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db.sqlite'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def redis_url() -> str:
    """URL of the real Redis server that ``make test`` starts."""
    return _service_url("BEAMCLAW_TEST_REDIS_URL", "Redis")
