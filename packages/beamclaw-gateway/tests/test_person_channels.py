"""Where to reach a person (issue 26): every channel message remembers its sender's
channel, persistently, and a job with no explicit target reaches the last one used —
also after a restart."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.person_channels import PersonChannels
from beamclaw_memory import Database

from .conftest import gateway_config, live_gateway
from .test_channel_adapters import Inbox


def _config() -> BeamclawConfig:
    config = gateway_config()
    config.scheduler.enabled = True
    config.scheduler.tick_seconds = 0.1
    return config


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'reach.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


async def test_known_channels_are_upserted_and_ordered_newest_first(db_url: str) -> None:
    db = Database(db_url)
    await db.migrate()
    now = [100.0]
    store = PersonChannels(db, lambda: now[0])
    assert await store.reach("ann") == []
    await store.seen("ann", "telegram", "42")
    now[0] = 200.0
    await store.seen("ann", "ws", "s-1")
    await store.seen("bob", "telegram", "7")
    assert await store.reach("ann") == ["ws:s-1", "telegram:42"]
    now[0] = 300.0
    await store.seen("ann", "telegram", "42")
    [latest, older] = await store.known("ann")
    assert latest.deliver_to == "telegram:42"
    assert (latest.first_seen_at, latest.last_used_at) == (100.0, 300.0)
    assert older.deliver_to == "ws:s-1"
    await db.dispose()


async def test_a_job_without_a_target_reaches_the_last_used_channel_after_a_restart() -> None:
    at = (datetime.now(UTC) + timedelta(seconds=8)).isoformat()
    provider = ScriptedProvider(
        [
            CallTool("scheduler", {"action": "create", "prompt": "water the plants", "at": at}),
            Reply("I will remind you."),
            Reply("Time to water the plants!"),
        ]
    )
    before = Inbox()
    async with live_gateway(provider, _config()) as gw:
        gw.app.state.services.channels.register(before)
        before.send("42", "remind me to water the plants soon", "m-1")
        assert await asyncio.wait_for(before.delivered.get(), 10) == ("42", "I will remind you.")
        scheduler = gw.app.state.services.scheduler
        [job] = await scheduler.list()
        assert job.deliver_to == "last" and job.user_id == "inbox:42"
        await scheduler.stop()  # it fires only in the gateway started again
    after = Inbox()  # the same channel, in the gateway started again
    async with live_gateway(provider, _config()) as gw:
        gw.app.state.services.channels.register(after)
        delivered = await asyncio.wait_for(after.delivered.get(), 20)
    assert delivered == ("42", "Time to water the plants!")
    assert before.delivered.empty()
