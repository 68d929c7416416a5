"""WorkspacePrompt reuses unchanged workspace files and skills and still shows every change."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from beamclaw_core import WorkspacePrompt
from beamclaw_core.messages import Message
from beamclaw_core.sessions.prompts import skills_section_text
from beamclaw_core.skills import EligibilityCache, SkillCatalog
from beamclaw_core.workspace import (
    ENVIRONMENT_HEADER,
    FileTextCache,
    agent_dir,
    build_system_prompt,
    create_agent,
    daily_log_path,
)
from beamclaw_tools import SessionRef

from .conftest import FakeClock, an_hour_from_now_ns

SESSION = SessionRef(session_id="s", agent_id="default")


def _aged_prompt() -> WorkspacePrompt:
    """A prompt whose caches see every file on disk as settled (no racy window)."""
    prompt = WorkspacePrompt()
    prompt.files = FileTextCache(clock=an_hour_from_now_ns)
    prompt.skill_files = SkillCatalog(clock=an_hour_from_now_ns)
    return prompt


def _skill(root: Path, name: str, requires: str = "{}", body: str = "Body.") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: The {name} skill\n"
        f"metadata: {{requires: {requires}}}\n---\n{body}\n",
        encoding="utf-8",
    )
    return path


async def _skills_text(prompt: WorkspacePrompt, message: str = "hello") -> str:
    return next(
        m.text for m in await prompt(SESSION, None, message) if m.meta.get("kind") == "skills"
    )


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


async def test_skill_files_added_edited_and_removed_show_at_the_next_call() -> None:
    create_agent("default")
    prompt = _aged_prompt()
    root = agent_dir("default") / "skills"
    assert "tide" not in await _skills_text(prompt)
    path = _skill(root, "tide", body="Read the TIDE TABLE first.")
    assert "- tide: The tide skill" in await _skills_text(prompt)
    assert "TIDE TABLE" in await _skills_text(prompt, "tide please")  # promoted in full
    path.write_text(path.read_text("utf-8").replace("TIDE TABLE", "MOON CHART"), "utf-8")
    assert "MOON CHART" in await _skills_text(prompt, "tide please")
    path.unlink()
    assert "tide" not in await _skills_text(prompt, "tide please")


async def test_a_program_installed_on_path_makes_its_skill_eligible_within_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_agent("default")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    clock = FakeClock()
    prompt = _aged_prompt()
    prompt.eligibility = EligibilityCache(clock=clock)
    _skill(agent_dir("default") / "skills", "tide", requires="{bins: [bctide]}")
    assert "tide" not in await _skills_text(prompt)
    program = bin_dir / "bctide"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    clock.now += 1.0
    assert "- tide: The tide skill" in await _skills_text(prompt)
    program.unlink()
    clock.now += 1.0
    assert "tide" not in await _skills_text(prompt)


async def test_a_required_variable_counts_at_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    create_agent("default")
    prompt = _aged_prompt()
    prompt.eligibility = EligibilityCache(clock=FakeClock())  # the clock never moves
    _skill(agent_dir("default") / "skills", "tide", requires="{env: [BC_TIDE_KEY]}")
    assert "tide" not in await _skills_text(prompt)
    monkeypatch.setenv("BC_TIDE_KEY", "k")
    assert "- tide: The tide skill" in await _skills_text(prompt)
    monkeypatch.delenv("BC_TIDE_KEY")
    assert "tide" not in await _skills_text(prompt)


async def test_the_today_log_follows_the_date_without_any_file_change() -> None:
    create_agent("default")
    prompt = _aged_prompt()
    directory = agent_dir("default")
    (directory / "memory").mkdir(exist_ok=True)
    for day in (1, 2, 3):
        daily_log_path(directory, datetime(2026, 3, day).date()).write_text(
            f"- log of day {day}\n", encoding="utf-8"
        )

    def logs(now: datetime) -> list[str]:
        messages = prompt.build("default", now, None, "hello")
        return [m.text for m in messages if m.meta.get("kind") == "daily_log"]

    yesterday, today = logs(datetime(2026, 3, 2, 23, 59, 59, tzinfo=UTC))
    assert "day 1" in yesterday and "day 2" in today
    yesterday, today = logs(datetime(2026, 3, 3, 0, 0, 1, tzinfo=UTC))
    assert "day 2" in yesterday and "day 3" in today
