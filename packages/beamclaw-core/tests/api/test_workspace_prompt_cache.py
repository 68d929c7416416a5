"""WorkspacePrompt reuses unchanged workspace files and still shows every change."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from beamclaw_core import WorkspacePrompt
from beamclaw_core.messages import Message
from beamclaw_core.sessions.prompts import skills_section_text
from beamclaw_core.workspace import (
    ENVIRONMENT_HEADER,
    FileTextCache,
    agent_dir,
    build_system_prompt,
    create_agent,
    daily_log_path,
)
from beamclaw_tools import SessionRef

SESSION = SessionRef(session_id="s", agent_id="default")
HOUR_NS = 3_600 * 1_000_000_000


def _aged_prompt() -> WorkspacePrompt:
    """A prompt whose file cache sees every file on disk as settled (no racy window)."""
    prompt = WorkspacePrompt()
    prompt.files = FileTextCache(clock=lambda: time.time_ns() + HOUR_NS)
    return prompt


def _by_kind(messages: list[Message]) -> dict[str, str]:
    """Section texts by kind and source (the clock-dependent environment block left out)."""
    return {
        f"{m.meta.get('kind')}:{m.meta.get('source')}": m.text
        for m in messages
        if m.meta.get("kind") != "environment"
    }


async def test_cached_prompt_equals_a_fresh_build() -> None:
    create_agent("default")
    prompt = _aged_prompt()
    first = await prompt(SESSION, None, "hello")
    second = await prompt(SESSION, None, "hello")
    assert prompt.files.cached(agent_dir("default") / "MEMORY.md") is not None
    fresh = build_system_prompt(
        "default",
        now=datetime.now(UTC),
        last_message_at=None,
        skills_section=skills_section_text("default", "hello"),
    )
    assert [m.meta.get("kind") for m in second] == [str(s.kind) for s in fresh.sections]
    assert _by_kind(second) == _by_kind(first)
    assert [m.text for m in second if m.meta.get("kind") != "environment"] == [
        s.text for s in fresh.sections if s.kind != "environment"
    ]


async def test_edits_and_new_daily_logs_show_at_the_next_call() -> None:
    create_agent("default")
    prompt = _aged_prompt()
    await prompt(SESSION, None, "hello")
    (agent_dir("default") / "MEMORY.md").write_text("- likes green tea\n", encoding="utf-8")
    log = daily_log_path(agent_dir("default"), datetime.now(UTC).date())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("- met Bob for lunch\n", encoding="utf-8")
    texts = _by_kind(await prompt(SESSION, None, "hello"))
    assert "likes green tea" in texts["memory:MEMORY.md"]
    assert "met Bob for lunch" in texts[f"daily_log:memory/{log.name}"]
    log.unlink()
    texts = _by_kind(await prompt(SESSION, None, "hello"))
    assert f"daily_log:memory/{log.name}" not in texts


async def test_environment_block_follows_the_clock_and_last_activity() -> None:
    create_agent("default")
    prompt = _aged_prompt()
    await prompt(SESSION, None, "hello")
    two_hours_ago = time.time() - 2 * 3_600 - 30
    env = next(
        m.text
        for m in await prompt(SESSION, two_hours_ago, "hello")
        if m.meta.get("kind") == "environment"
    )
    assert env.startswith(ENVIRONMENT_HEADER)
    assert "since_last_message: 2 hours" in env
    local = datetime.now(UTC).strftime("%Y-%m-%d")
    assert local in env


async def test_fresh_files_are_read_until_they_settle() -> None:
    create_agent("default")
    prompt = WorkspacePrompt()  # the real clock: the files were written just now
    await prompt(SESSION, None, "hello")
    (agent_dir("default") / "USER.md").write_text("Name: Ann\n", encoding="utf-8")
    texts = _by_kind(await prompt(SESSION, None, "hello"))
    assert "Name: Ann" in texts["bootstrap:USER.md"]
