"""Exploration heartbeats (issue 26): every Nth beat follows one CURIOSITY.md topic,
fetches at most the configured number of URLs (the tool layer refuses the rest), writes
its note to explorations/ and is counted against the background cap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core import HeartbeatSettings
from beamclaw_core.messages import Role, Usage
from beamclaw_core.testing import CallTool, EchoTool, Reply, ScriptedProvider
from beamclaw_scheduler import CappedTool, SchedulerSettings
from beamclaw_scheduler.beats import heartbeat_session
from beamclaw_scheduler.exploration import explored, is_exploration, pick_topic, slug, topics
from beamclaw_tools import ToolRegistry

from .conftest import T0

CURIOSITY = """# CURIOSITY.md
<!-- one topic per line -->
- How do octopuses sleep?
- The history of the Antikythera mechanism
"""


def test_topics_slugs_and_turns_are_pure_choices() -> None:
    assert topics(CURIOSITY) == [
        "How do octopuses sleep?",
        "The history of the Antikythera mechanism",
    ]
    assert slug("How do octopuses sleep?") == "how-do-octopuses-sleep"
    done = explored(["2026-03-01-how-do-octopuses-sleep.md", "notes.md"])
    assert done == {"how-do-octopuses-sleep"}
    assert pick_topic(topics(CURIOSITY), done) == "The history of the Antikythera mechanism"
    assert pick_topic(topics(CURIOSITY), {slug(t) for t in topics(CURIOSITY)}) is None
    assert [n for n in range(1, 7) if is_exploration(n, 3)] == [3, 6]
    assert not any(is_exploration(n, 0) for n in range(1, 7)), "0 is off"


async def test_an_exploration_heartbeat_stays_within_its_fetch_cap(
    world_factory: Callable[..., Any],
) -> None:
    fetch = EchoTool("web_fetch")
    tools = ToolRegistry()
    tools.register(fetch)
    spent = Usage(prompt_tokens=900, completion_tokens=100, total_tokens=1000)
    provider = ScriptedProvider(
        [
            Reply("HEARTBEAT_OK"),  # beat 1: an ordinary beat
            CallTool("web_fetch", {"text": "https://a.example"}),
            CallTool("web_fetch", {"text": "https://b.example"}),
            CallTool("web_fetch", {"text": "https://c.example"}),
            Reply("Octopuses sleep in two stages.", usage=spent),
        ]
    )
    world = await world_factory(provider, tools)
    world.heartbeat_md.write_text("- check the build\n")
    workspace = world.heartbeat_md.parent
    (workspace / "CURIOSITY.md").write_text(CURIOSITY, encoding="utf-8")
    settings = SchedulerSettings(
        enabled=True,
        heartbeat=HeartbeatSettings(
            every_seconds=60,
            deliver_to="rec:me",
            explore_every=2,
            explore_max_fetches=2,
            daily_token_cap=1000,
        ),
    )
    scheduler = world.scheduler(settings)
    quota = scheduler.heartbeats.fetches
    tools.register(CappedTool(fetch, quota), replace=True)  # as the gateway wires it
    for n in range(4):
        world.clock.now = T0 + 61 * n
        await scheduler.tick()
        await scheduler.settle()
    record = scheduler.heartbeats.records["default"]
    assert len(fetch.calls) == 2, "the third fetch never reached the tool"
    assert quota.refused[heartbeat_session("default")] == 1
    third = [m for m in provider.calls[4].messages if m.role is Role.TOOL][-1]
    assert "refused" in third.text and "fetches" in third.text
    assert "How do octopuses sleep?" in provider.calls[1].messages[-1].text
    [note] = list((workspace / "explorations").glob("*.md"))
    assert note.name.endswith("-how-do-octopuses-sleep.md")
    assert "Octopuses sleep in two stages." in note.read_text(encoding="utf-8")
    assert world.channel.sent == [], "a note is kept, not sent"
    assert record.beats == 2
    assert record.last_skip == "daily_cap_reached", "the exploration's spend counts"
    assert len(provider.calls) == 5
