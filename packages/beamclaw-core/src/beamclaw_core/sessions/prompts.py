"""System-prompt sources: the agent's workspace and skills, a fixed text, and the per-turn
wrapper the core puts around either (the turn's user message, memory auto-context).

Every source is an async callable ``(session, last_activity_at, latest_user_message)``
(:class:`~beamclaw_core.sessions.runtime.SystemPromptSource`), called before each LLM
request; its messages are part of the LLM view only, never stored.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import time
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
from beamclaw_core.workspace import CacheMiss, FileTextCache, build_system_prompt
from beamclaw_core.workspace.file_cache import RACY_WINDOW_NS
from beamclaw_tools import SessionRef

LatestMessage = Callable[[str], Awaitable[tuple[Hashable, str | None]]]
"""``session_id -> (turn key, text)`` of the message that started the current turn."""

_Fingerprint = tuple[tuple[str, int, int, int, int], ...]
_discovered: dict[tuple[str, str], tuple[_Fingerprint, tuple[Skill, ...]]] = {}
_discovered_lock = threading.Lock()


def _fingerprint(agent_id: str, home: Path | None) -> tuple[_Fingerprint, bool]:
    """Path, inode, size, mtime and ctime of every SKILL.md discovery would read (cheap:
    stats only), and whether one changed too recently for its timestamps to be trusted
    (see :mod:`beamclaw_core.workspace.file_cache`)."""
    found: list[tuple[str, int, int, int, int]] = []
    recent = time.time_ns() - RACY_WINDOW_NS
    racy = False
    directories = (bundled_skills_dir(), global_skills_dir(home), agent_skills_dir(agent_id, home))
    for directory in directories:
        try:
            children = sorted(entry.name for entry in os.scandir(directory))
        except OSError:  # absent or not a directory: nothing to discover there
            continue
        for name in children:
            path = os.path.join(directory, name, SKILL_FILE)
            try:
                st = os.stat(path)
            except OSError:
                continue
            racy = racy or max(st.st_mtime_ns, st.st_ctime_ns) >= recent
            found.append((path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(found), racy


def agent_skills(
    agent_id: str, home: Path | None = None, *, cached_only: bool = False
) -> tuple[Skill, ...]:
    """The skills discovered for ``agent_id``, parsed again only when a SKILL.md changed
    (or appeared, or vanished, or was modified within the last two seconds, when its
    mtime cannot tell one edit from the next).

    Raises:
        CacheMiss: with ``cached_only``, when the skills would have to be parsed.
    """
    fingerprint, racy = _fingerprint(agent_id, home)
    key = (str(home), agent_id)
    with _discovered_lock:
        cached = _discovered.get(key)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    if cached_only:
        raise CacheMiss(agent_skills_dir(agent_id, home))
    skills = discover_skills(agent_id, home=home).skills
    if not racy:
        with _discovered_lock:
            _discovered[key] = (fingerprint, skills)
    return skills


def skills_section_text(
    agent_id: str,
    latest_user_message: str | None,
    home: Path | None = None,
    *,
    cached_only: bool = False,
) -> str:
    """The skills section of ``agent_id``'s prompt: eligible skills only (checked each
    time: programs and variables come and go), the best match of the message promoted,
    ``{baseDir}`` replaced. Empty when no skill is eligible.

    Raises:
        CacheMiss: with ``cached_only``, when skills would have to be parsed.
    """
    skills = agent_skills(agent_id, home, cached_only=cached_only)
    eligible, _refused = eligible_skills(skills)
    return build_skills_section(eligible, latest_user_message).text


class WorkspacePrompt:
    """The default system prompt: the agent's workspace files and skills.

    Sections in order (docs/workspaces.md): the bootstrap files, the skills section
    (docs/skills.md), the ``[user:environment]`` block in ``timezone``, the daily logs of
    yesterday and today, then MEMORY.md.

    Every call assembles the prompt afresh (the environment block's clock, today's and
    yesterday's daily logs, the turn's message for skill promotion), but file texts and
    parsed skills come from caches validated by ``stat`` (:class:`FileTextCache`): when
    nothing changed the prompt is built on the event loop with about twenty ``stat``
    calls and no read; when a file must be read the whole build runs in a worker thread.
    ``files`` is that cache (replaceable, e.g. by one with another clock in tests).
    """

    def __init__(
        self, timezone: str | None = None, *, skills: bool = True, home: Path | None = None
    ) -> None:
        self.timezone = timezone
        self.skills = skills
        self.home = home
        self.files = FileTextCache()

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]:
        last = datetime.fromtimestamp(last_activity_at, UTC) if last_activity_at else None
        now = datetime.now(UTC)
        try:
            return self.build(session.agent_id, now, last, latest_user_message, cached_only=True)
        except CacheMiss:
            return await asyncio.to_thread(
                self.build, session.agent_id, now, last, latest_user_message
            )

    def build(
        self,
        agent_id: str,
        now: datetime,
        last_message_at: datetime | None,
        latest_user_message: str | None,
        *,
        cached_only: bool = False,
    ) -> list[Message]:
        """The prompt's messages (one per section, ``meta.kind`` naming it), synchronously.

        Raises:
            CacheMiss: with ``cached_only``, when a file would have to be read.
        """
        skills = (
            skills_section_text(agent_id, latest_user_message, self.home, cached_only=cached_only)
            if self.skills
            else None
        )
        prompt = build_system_prompt(
            agent_id,
            now=now,
            last_message_at=last_message_at,
            timezone=self.timezone,
            skills_section=skills,
            home=self.home,
            read=self.files.cached if cached_only else self.files.read,
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
