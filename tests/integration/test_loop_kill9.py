"""``kill -9`` of a real process mid-turn: every committed message survives, the history
stays valid, the interrupted tool gets a synthetic result and the queued run resumes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from beamclaw_core.api import Core
from beamclaw_core.loop.history import history_problems
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_memory import Database

RUNNER = Path(__file__).with_name("loop_kill9_runner.py")


async def test_kill_9_mid_tool_then_restart_recovers(tmp_path: Path) -> None:
    db_path = tmp_path / "kill9.db"
    await asyncio.to_thread(_run_and_kill, db_path)

    settings = CoreSettings.model_validate(
        {"queue": {"mode": "followup", "debounce_ms": 0}, "reset": {"daily_hour": None}}
    )
    db = Database(f"sqlite:///{db_path}")
    provider = ScriptedProvider([Reply("Resumed the queued message.")])
    core = Core.create(settings, db, provider=provider, system_prompt="test")
    try:
        await core.start(maintenance=False)
        (session,) = await core.list_sessions()
        await asyncio.wait_for(_settled(core, session.session_id), 20)
        history = await core.history(session.session_id)
        assert history_problems(history) == []
        roles = [m.role.value for m in history]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]
        assert history[0].text == "first message"
        assert history[1].tool_calls[0].name == "slow"
        assert "interrupted by restart" in history[2].text
        assert history[2].is_error
        assert history[3].text == "second message"
        assert history[4].text == "Resumed the queued message."
        assert (await core.status(session.session_id)).state == "idle"
    finally:
        await core.stop()
        await db.dispose()


async def _settled(core: Core, session_id: str) -> None:
    while True:
        status = await core.status(session_id)
        if status.state == "idle" and status.queued == 0:
            history = await core.history(session_id)
            if history and history[-1].role.value == "assistant" and not history[-1].tool_calls:
                return
        await asyncio.sleep(0.05)


def _run_and_kill(db_path: Path) -> None:
    """Start the runner, wait until its tool runs (call committed), then SIGKILL it."""
    with subprocess.Popen(
        [sys.executable, str(RUNNER), str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "READY", proc.stderr.read() if proc.stderr else line
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
