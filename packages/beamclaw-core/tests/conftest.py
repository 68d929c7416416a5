"""Fixtures shared by beamclaw-core's tests: a :class:`Core` on a migrated SQLite file.

The doubles themselves (``EchoTool``, ``VirtualTime``, ``quiet_core_settings``) ship in
``beamclaw_core.testing`` so embedders can use them too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import VirtualTime, quiet_core_settings
from beamclaw_memory import Database
from beamclaw_tools import ToolRegistry


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'core.db'}"


@pytest.fixture
def vt() -> VirtualTime:
    return VirtualTime()


@pytest.fixture
async def core_factory(db_url: str, vt: VirtualTime) -> AsyncIterator[Callable[..., Core]]:
    """``factory(provider, *tools, settings=None, virtual=False, **Core.create kwargs)``.

    ``virtual=True`` drives the core's clock and timers by the ``vt`` fixture. Every core
    made here is stopped, and its database disposed, after the test.
    """
    cores: list[Core] = []
    dbs: list[Database] = []

    def factory(
        provider: Any,
        *tools: Any,
        settings: CoreSettings | None = None,
        virtual: bool = False,
        **kw: Any,
    ) -> Core:
        registry = ToolRegistry()
        for t in tools:
            registry.register(t)
        db = Database(db_url)
        dbs.append(db)
        if virtual:
            kw.setdefault("clock", vt.clock)
            kw.setdefault("sleep", vt.sleep)
        kw.setdefault("system_prompt", "You are a test agent.")
        core = Core.create(
            settings or quiet_core_settings(), db, provider=provider, tools=registry, **kw
        )
        cores.append(core)
        return core

    yield factory
    for core in cores:
        await core.stop()
    for db in dbs:
        await db.dispose()


@pytest.fixture
def make_core(core_factory: Callable[..., Core]) -> Callable[..., Core]:
    return core_factory
