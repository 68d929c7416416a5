"""System-prompt sources: the agent's workspace and skills, a fixed text, and the per-turn
wrapper the core puts around either (the turn's user message, memory auto-context).

Every source is an async callable ``(session, last_activity_at, latest_user_message)``
(:class:`~beamclaw_core.sessions.runtime.SystemPromptSource`), called before each LLM
request; its messages are part of the LLM view only, never stored.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from beamclaw_core.messages import Message
from beamclaw_core.sessions.memory_context import AutoContext
from beamclaw_core.sessions.runtime import SystemPromptSource
from beamclaw_core.skills import (
    SKILL_FILE,
    Skill,
    agent_skills_dir,
    build_skills_section,
    bundled_skills_dir,
    discover_skills,
    eligible_skills,
    global_skills_dir,
)
from beamclaw_tools import SessionRef

LatestMessage = Callable[[str], Awaitable[tuple[Hashable, str | None]]]
"""``session_id -> (turn key, text)`` of the message that started the current turn."""

_Fingerprint = tuple[tuple[str, int, int], ...]
_discovered: dict[tuple[str, str], tuple[_Fingerprint, tuple[Skill, ...]]] = {}
_discovered_lock = threading.Lock()


def _fingerprint(agent_id: str, home: Path | None) -> _Fingerprint:
    """Path, mtime and size of every SKILL.md discovery would read (cheap: stats only)."""
    found: list[tuple[str, int, int]] = []
    directories = (bundled_skills_dir(), global_skills_dir(home), agent_skills_dir(agent_id, home))
    for directory in directories:
        if not directory.is_dir():
            continue
        for child in sorted(directory.iterdir(), key=lambda p: p.name):
            try:
                st = (child / SKILL_FILE).stat()
            except OSError:
                continue
            found.append((str(child / SKILL_FILE), st.st_mtime_ns, st.st_size))
    return tuple(found)


def agent_skills(agent_id: str, home: Path | None = None) -> tuple[Skill, ...]:
    """The skills discovered for ``agent_id``, parsed again only when a SKILL.md changed
    (or appeared, or vanished)."""
    fingerprint = _fingerprint(agent_id, home)
    key = (str(home), agent_id)
    with _discovered_lock:
        cached = _discovered.get(key)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    skills = discover_skills(agent_id, home=home).skills
    with _discovered_lock:
        _discovered[key] = (fingerprint, skills)
    return skills


def skills_section_text(
    agent_id: str, latest_user_message: str | None, home: Path | None = None
) -> str:
    """The skills section of ``agent_id``'s prompt: eligible skills only (checked each
    time: programs and variables come and go), the best match of the message promoted,
    ``{baseDir}`` replaced. Empty when no skill is eligible."""
    eligible, _refused = eligible_skills(agent_skills(agent_id, home))
    return build_skills_section(eligible, latest_user_message).text


class WorkspacePrompt:
    """The default system prompt: the agent's workspace files and skills.

    Sections in order (docs/workspaces.md): the bootstrap files, the skills section
    (docs/skills.md), the ``[user:environment]`` block in ``timezone``, the daily logs of
    yesterday and today, then MEMORY.md. Files are read in a worker thread.
    """

    def __init__(
        self, timezone: str | None = None, *, skills: bool = True, home: Path | None = None
    ) -> None:
        self.timezone = timezone
        self.skills = skills
        self.home = home

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]:
        last = datetime.fromtimestamp(last_activity_at, UTC) if last_activity_at else None
        return await asyncio.to_thread(
            self.build, session.agent_id, datetime.now(UTC), last, latest_user_message
        )

    def build(
        self,
        agent_id: str,
        now: datetime,
        last_message_at: datetime | None,
        latest_user_message: str | None,
    ) -> list[Message]:
        """The prompt's messages (one per section, ``meta.kind`` naming it), synchronously."""
        from beamclaw_core.workspace import build_system_prompt

        skills = (
            skills_section_text(agent_id, latest_user_message, self.home) if self.skills else None
        )
        prompt = build_system_prompt(
            agent_id,
            now=now,
            last_message_at=last_message_at,
            timezone=self.timezone,
            skills_section=skills,
            home=self.home,
        )
        return list(prompt.as_messages())


class StaticPrompt:
    """A fixed system prompt (embedding without agent workspaces)."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]:
        return [Message.system(self.text)] if self.text else []


def takes_latest_message(source: Any) -> bool:
    """Whether ``source`` accepts ``latest_user_message`` (older sources take two args)."""
    try:
        params = inspect.signature(source).parameters
    except (TypeError, ValueError):
        return True
    return "latest_user_message" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )


class TurnPrompt:
    """The source the lanes call: the configured one, given the turn's user message (when
    the caller has none, it is looked up with ``latest``), plus the auto-context message."""

    def __init__(
        self,
        source: SystemPromptSource,
        latest: LatestMessage,
        auto_context: AutoContext | None = None,
    ) -> None:
        self.source = source
        self.latest = latest
        self.pass_latest = takes_latest_message(source)
        self.auto_context = auto_context

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]:
        key: Hashable = latest_user_message
        text = latest_user_message
        if text is None:
            key, text = await self.latest(session.session_id)
        if self.pass_latest:
            messages = list(await self.source(session, last_activity_at, text))
        else:
            messages = list(await self.source(session, last_activity_at))
        if self.auto_context is not None and text is not None:
            extra = await self.auto_context.message(session.session_id, session.agent_id, key, text)
            if extra is not None:
                messages.append(extra)
        return messages
