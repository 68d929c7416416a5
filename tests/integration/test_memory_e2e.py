"""The agent finds what it learned days ago: memory through the real loop and tools.

A fact stored five days earlier (``memory_store``'s service, with the clock of that day)
and a daily log written five days earlier — neither in the system prompt, which only
carries today's and yesterday's logs — are found by the ``memory_search`` tool in scripted
turns, and the final answers carry them. Afterwards the finished turns are searchable as
conversation memory (indexed in the background). Runs on the in-memory backend and on the
SQL backend over SQLite and PostgreSQL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.loop import TurnDone
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.testing import CallTool, Reply
from beamclaw_core.workspace import create_agent
from beamclaw_memory import (
    Database,
    MemoryCategory,
    MemorySettings,
    SearchMode,
    create_memory_service,
)

from .conftest import Harness

FIVE_DAYS = 5 * 86_400


def _answer_from_memory(messages: Sequence[Message], options: CompletionOptions) -> Reply:
    result = messages[-1]
    assert result.role is Role.TOOL and result.name == "memory_search", result
    assert not result.is_error, result.text
    first_hit = result.text.split("\n\n[1] ", 1)[1].split("\n", 1)[1].split("\n\n[2] ", 1)[0]
    return Reply(f"From my memory: {first_hit.strip()}")


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    if request.param == "memory":
        return "memory", None
    if request.param == "sqlite":
        return "sql", f"sqlite:///{tmp_path / 'memory-e2e.db'}"
    return "sql", str(request.getfixturevalue("postgres_url"))


async def test_facts_from_days_ago_are_found_through_the_tool(
    make_harness: Callable[..., Any], backend: tuple[str, str | None]
) -> None:
    kind, url = backend
    database = Database(url) if url else None
    if database is not None:
        await database.migrate()
    back_then = time.time() - FIVE_DAYS
    settings = MemorySettings(backend=kind)  # type: ignore[arg-type]
    earlier = create_memory_service(settings, database, clock=lambda: back_then)
    await earlier.store(
        "default", "bike-lock", "Ann's bicycle lock code is 4711.", MemoryCategory.CORE
    )
    memory = earlier  # the in-memory backend lives as long as its object
    if database is not None:  # a new process days later: a new service on the same rows
        await earlier.aclose()
        memory = create_memory_service(settings, database)

    create_agent("default")
    day = (date.today() - timedelta(days=5)).isoformat()
    h: Harness = await make_harness(
        [
            CallTool("memory_search", {"query": "where bicycle parked"}),
            _answer_from_memory,
            CallTool("memory_search", {"query": "bicycle lock code"}),
            _answer_from_memory,
        ],
        memory=memory,
        database=database,
        system_prompt=None,
        # the tool's path: auto-context (on by default) would bring the facts unasked
        memory_settings=MemorySettings(auto_context=False),
    )
    log = h.workspace / "memory" / f"{day}.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        f"# {day}\n\n- Ann parked her blue bicycle at the Westbahnhof station.\n",
        encoding="utf-8",
    )

    events, _history = await h.turn("Where did I park my bicycle last week?")
    assert isinstance(events[-1], TurnDone)
    assert "Westbahnhof" in events[-1].text
    events, _history = await h.turn("And what was the lock code?")
    assert isinstance(events[-1], TurnDone)
    assert "4711" in events[-1].text
    prompt = "\n".join(m.text for m in h.provider.calls[0].messages if m.role is Role.SYSTEM)
    assert "Westbahnhof" not in prompt and "4711" not in prompt  # only the tool found them

    await h.core.stop()  # drains background transcript indexing
    found = await memory.search(
        "default", "lock code 4711", mode=SearchMode.KEYWORD, category=MemoryCategory.CONVERSATION
    )
    assert any("From my memory" in hit.text and "4711" in hit.text for hit in found.hits)
    await memory.aclose()
