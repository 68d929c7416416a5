"""A real process embedding Core on SQLite, for the kill -9 test.

Usage: ``python loop_kill9_runner.py DB_PATH``. Sends one message whose turn calls a slow
tool, queues a second message behind it, prints ``READY`` once the tool is running (so
the tool call is committed) and then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_memory import Database
from beamclaw_tools import SessionRef, ToolDef, ToolOutput, ToolRegistry

ADDRESS = SessionAddress("local:kill9", "default", "tui")


class SlowTool:
    definition = ToolDef(name="slow", description="takes forever", timeout_seconds=600)

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        self.started.set()
        await asyncio.sleep(600)
        return ToolOutput.ok("never")


async def main(db_path: str) -> None:
    tool = SlowTool()
    registry = ToolRegistry()
    registry.register(tool)
    settings = CoreSettings.model_validate(
        {"queue": {"mode": "followup", "debounce_ms": 0}, "reset": {"daily_hour": None}}
    )
    provider = ScriptedProvider([CallTool("slow", {}, text="Working on it."), Reply("unused")])
    core = Core.create(
        settings,
        Database(f"sqlite:///{db_path}"),
        provider=provider,
        tools=registry,
        system_prompt="test",
    )
    await core.start(maintenance=False)
    await core.send(ADDRESS, "first message")
    await tool.started.wait()
    await core.send(ADDRESS, "second message")
    print("READY", flush=True)
    await asyncio.sleep(600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
