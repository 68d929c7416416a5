"""Shared pieces for Core tests: scripted tools and a core on a migrated SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.settings import CoreSettings
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput, ToolRegistry


class EchoTool:
    """Returns its ``text`` argument; records the order of calls."""

    def __init__(
        self,
        name: str = "echo",
        *,
        approval: bool = False,
        min_autonomy: Autonomy = Autonomy.READ_ONLY,
        delay: float = 0.0,
    ) -> None:
        self.definition = ToolDef(
            name=name,
            description=f"{name} tool",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            requires_approval=approval,
            min_autonomy=min_autonomy,
            timeout_seconds=5,
        )
        self.delay = delay
        self.calls: list[dict[str, Any]] = []
        self.started = asyncio.Event()

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        self.calls.append(args)
        self.started.set()
        if self.delay:
            await asyncio.sleep(self.delay)
        return ToolOutput.ok(f"{self.definition.name}:{args.get('text', '')}")


def make_settings(**loop: Any) -> CoreSettings:
    base = CoreSettings()
    data = base.model_dump()
    data["agentic_loop"].update({"retry_base_delay_seconds": 0.0, **loop})
    data["queue"].update({"debounce_ms": 0})
    data["reset"].update({"daily_hour": None})
    return CoreSettings.model_validate(data)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'core.db'}"


@pytest.fixture
async def make_core(db_url: str) -> AsyncIterator[Callable[..., Core]]:
    cores: list[Core] = []
    dbs: list[Database] = []

    def factory(
        provider: Any, *tools: Any, settings: CoreSettings | None = None, **kw: Any
    ) -> Core:
        registry = ToolRegistry()
        for t in tools:
            registry.register(t)
        db = Database(db_url)
        dbs.append(db)
        kw.setdefault("system_prompt", "You are a test agent.")
        core = Core.create(settings or make_settings(), db, provider=provider, tools=registry, **kw)
        cores.append(core)
        return core

    yield factory
    for core in cores:
        await core.stop()
    for db in dbs:
        await db.dispose()
