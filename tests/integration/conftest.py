"""A real Core with the built-in tools and a scripted provider, for end-to-end turns.

``make_harness(script, ...)`` builds ``Core`` + ``ToolRegistry.with_builtins`` on a
migrated SQLite file in the test's own ``BEAMCLAW_HOME``; ``harness.turn(text)`` sends a
message, answers approvals as told, and returns the turn's events and stored history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, TurnEvent
from beamclaw_core.messages import Message, Role
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import ScriptedProvider, ScriptStep
from beamclaw_core.tools_memory import ToolsMemory
from beamclaw_memory import Database, MemoryService
from beamclaw_obs import beamclaw_home
from beamclaw_tools import Autonomy, ToolPolicy, ToolRegistry, ToolsSettings

ADDRESS = SessionAddress("local:ann", "default", "test")


def core_settings(autonomy: Autonomy = Autonomy.SUPERVISED, **loop: Any) -> CoreSettings:
    settings = CoreSettings()
    settings.autonomy_level = autonomy
    settings.queue.debounce_ms = 0
    settings.reset.daily_hour = None
    settings.maintenance.idle_compaction_minutes = None
    settings.maintenance.nightly_hour = None
    settings.agentic_loop.retry_base_delay_seconds = 0.0
    for key, value in loop.items():
        setattr(settings.agentic_loop, key, value)
    return settings


@dataclass
class Harness:
    core: Core
    provider: ScriptedProvider
    tools: ToolRegistry
    decisions: Mapping[str, str] = field(default_factory=dict[str, str])
    """Tool name → ``yes``/``no``/``always`` for approvals during :meth:`turn`."""

    @property
    def workspace(self) -> Path:
        return beamclaw_home() / "agents" / ADDRESS.agent_id

    @property
    def session_id(self) -> str:
        return self.core.session_id(ADDRESS)

    async def turn(self, text: str) -> tuple[list[TurnEvent], list[Message]]:
        handle = await self.core.send(ADDRESS, text)
        events: list[TurnEvent] = []
        async for event in handle.events():
            events.append(event)
            if isinstance(event, ApprovalRequested):
                decision = self.decisions.get(event.tool, "no")
                await self.core.answer_approval(handle.session_id, event.request_id, decision)  # type: ignore[arg-type]
        return events, await self.core.history(handle.session_id)


def tool_messages(history: Sequence[Message]) -> list[Message]:
    return [m for m in history if m.role is Role.TOOL]


@pytest.fixture
async def make_harness(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    made: list[tuple[Core, Database]] = []

    async def factory(
        script: Sequence[ScriptStep],
        *,
        autonomy: Autonomy = Autonomy.SUPERVISED,
        tools_settings: ToolsSettings | None = None,
        memory: MemoryService | None = None,
        database: Database | None = None,
        system_prompt: str | None = "You are a test agent.",
        decisions: Mapping[str, str] | None = None,
        **core_kw: Any,
    ) -> Harness:
        settings = tools_settings or ToolsSettings()
        registry = ToolRegistry.with_builtins(
            settings, memory=ToolsMemory(memory) if memory is not None else None
        )
        provider = ScriptedProvider(list(script))
        db = database or Database(f"sqlite:///{tmp_path / 'harness.db'}")
        core = Core.create(
            core_settings(autonomy),
            db,
            provider=provider,
            tools=registry,
            tool_policy=lambda agent: ToolPolicy.for_agent(settings, agent),
            system_prompt=system_prompt,
            memory=memory,
            **core_kw,
        )
        await core.start(maintenance=False)
        made.append((core, db))
        (beamclaw_home() / "agents" / ADDRESS.agent_id).mkdir(parents=True, exist_ok=True)
        return Harness(core, provider, registry, dict(decisions or {}))

    yield factory
    for core, db in made:
        await core.stop()
        await db.dispose()
