"""System-prompt sources: the agent's workspace and skills, a fixed text, and the per-turn
wrapper the core puts around either (the turn's user message, memory auto-context).

Every source is an async callable ``(session, last_activity_at, latest_user_message)``
(:class:`~beamclaw_core.sessions.runtime.SystemPromptSource`), called before each LLM
request; its messages are part of the LLM view only, never stored.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from beamclaw_core.messages import Message
from beamclaw_core.sessions.memory_context import AutoContext
from beamclaw_core.sessions.runtime import SystemPromptSource
from beamclaw_core.sessions.short_term import ShortTerm
from beamclaw_core.skills import (
    EligibilityCache,
    SkillCatalog,
    SkillsRenderer,
    build_skills_section,
    discover_skills,
    eligible_skills,
)
from beamclaw_core.skills.model import Skill
from beamclaw_core.workspace import CacheMiss, FileTextCache, PromptCache
from beamclaw_core.workspace.sections import ReadText
from beamclaw_core.workspace.watched_inputs import (
    Inputs,
    OutsideInputsError,
    Recorder,
    WatchedInputs,
)
from beamclaw_tools import SessionRef

LatestMessage = Callable[[str], Awaitable[tuple[Hashable, str | None]]]
"""``session_id -> (turn key, text)`` of the message that started the current turn."""


def skills_section_text(
    agent_id: str, latest_user_message: str | None, home: Path | None = None
) -> str:
    """The skills section of ``agent_id``'s prompt, computed from scratch (discovery,
    eligibility, rendering): eligible skills only, the best match of the message
    promoted, ``{baseDir}`` replaced. Empty when no skill is eligible.
    :class:`WorkspacePrompt` renders the same text from its caches."""
    eligible, _refused = eligible_skills(discover_skills(agent_id, home=home).skills)
    return build_skills_section(eligible, latest_user_message).text


class WorkspacePrompt:
    """The default system prompt: the agent's workspace files and skills.

    Sections in order (docs/workspaces.md): the bootstrap files, the skills section
    (docs/skills.md), the ``[user:environment]`` block in ``timezone``, the daily logs of
    yesterday and today, then MEMORY.md.

    Every call gives the prompt of that moment, but only what changed is rebuilt:

    * ``files`` (:class:`FileTextCache`) ``stat``\\ s each workspace file and re-reads
      it only when its identity changed; ``skill_files`` (:class:`SkillCatalog`) does
      the same for every SKILL.md and lists a skills directory again only when the
      directory changed. Both trust nothing changed within the last 2 s.
    * ``eligibility`` (:class:`EligibilityCache`) re-checks programs and variables when
      PATH or a required variable changes, else at most once a second.
    * each section's message is remembered by its inputs (:class:`PromptCache`; the
      environment block per minute, the skills section per message via
      :class:`SkillsRenderer`).

    When nothing must be read, the prompt is built on the event loop (about seventeen
    ``stat`` calls); when a file must be read or a skill parsed, the whole build runs in
    a worker thread. And while ``inputs`` (:class:`WatchedInputs`, inotify) reports that
    nothing a verified build read has changed, its texts and skills are used as they
    are, with no ``stat`` at all. The caches are attributes so tests can replace them
    (e.g. with another clock).
    """

    MAX_RENDERERS = 64

    def __init__(
        self, timezone: str | None = None, *, skills: bool = True, home: Path | None = None
    ) -> None:
        self.timezone = timezone
        self.skills = skills
        self.home = home
        self.files = FileTextCache()
        self.skill_files = SkillCatalog()
        self.eligibility = EligibilityCache()
        self.inputs = WatchedInputs()
        self._prompts = PromptCache()
        self._renderers: dict[int, SkillsRenderer] = {}

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]:
        last = datetime.fromtimestamp(last_activity_at, UTC) if last_activity_at else None
        now = datetime.now(UTC)
        # another home (``$BEAMCLAW_HOME``) means other paths: kept inputs raise
        # OutsideInputsError for them, so the key need not name it
        agent, key = session.agent_id, (session.agent_id, self.home)
        kept = self.inputs.kept(key)
        if kept is not None:
            try:
                return self._build(agent, now, last, latest_user_message, kept.read, kept.skills)
            except OutsideInputsError:
                self.inputs.drop(key)
        seen = Recorder()
        try:
            messages = self.build(agent, now, last, latest_user_message, True, seen)
        except CacheMiss:
            messages = await asyncio.to_thread(
                self.build, agent, now, last, latest_user_message, False, seen
            )
        self._verify(key, agent, seen)
        return messages

    def _verify(self, key: Hashable, agent: str, seen: Recorder) -> None:
        """Keep what ``seen`` recorded if, checked again once its directories are
        watched, the stat caches still give exactly that (see :mod:`.watched_inputs`)."""
        root = self._prompts.paths(agent, self.home).directory
        if not self.inputs.worth_trying(key, root):
            return
        sources = self.skill_files.sources(agent, self.home) if self.skills else None
        if self.skills and sources is None:
            return
        armed = self.inputs.arm(
            key,
            root,
            seen.texts,
            sources.directories if sources is not None else (),
            sources.files if sources is not None else (),
        )
        if not armed:
            return
        try:
            same = all(self.files.cached(p) is text for p, text in seen.texts.items()) and (
                not self.skills
                or self.skill_files.skills(agent, self.home, cached_only=True) is seen.skills
            )
        except CacheMiss:
            same = False
        self.inputs.settle(key, Inputs(dict(seen.texts), seen.skills) if same else None)

    def _skills_text(
        self, agent_id: str, latest_user_message: str | None, skills: tuple[Skill, ...]
    ) -> str:
        eligible = self.eligibility.eligible(skills)
        renderer = self._renderers.get(id(eligible))
        if renderer is None or renderer.skills is not eligible:
            renderer = SkillsRenderer(eligible)
            if len(self._renderers) >= self.MAX_RENDERERS:
                self._renderers.clear()
            self._renderers[id(eligible)] = renderer
        return renderer.section(latest_user_message).text

    def build(
        self,
        agent_id: str,
        now: datetime,
        last_message_at: datetime | None,
        latest_user_message: str | None,
        cached_only: bool = False,
        seen: Recorder | None = None,
    ) -> list[Message]:
        """The prompt's messages (one per section, ``meta.kind`` naming it), synchronously,
        through the stat caches (``seen`` records what it read).

        Raises:
            CacheMiss: with ``cached_only``, when a file would have to be read.
        """
        read = self.files.cached if cached_only else self.files.read
        skills = (
            self.skill_files.skills(agent_id, self.home, cached_only=cached_only)
            if self.skills
            else None
        )
        if seen is not None:
            read, seen.skills = seen.reading(read), skills
        return self._build(agent_id, now, last_message_at, latest_user_message, read, skills)

    def _build(
        self,
        agent_id: str,
        now: datetime,
        last_message_at: datetime | None,
        latest_user_message: str | None,
        read: ReadText,
        skills: tuple[Skill, ...] | None,
    ) -> list[Message]:
        section = (
            self._skills_text(agent_id, latest_user_message, skills) if skills is not None else None
        )
        return self._prompts.messages(
            agent_id,
            now=now,
            last_message_at=last_message_at,
            read=read,
            timezone=self.timezone,
            skills_section=section,
            home=self.home,
        )


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
    the caller has none, it is looked up with ``latest``), plus the short-term memory
    block (after a reset) and the auto-context message, in that order."""

    def __init__(
        self,
        source: SystemPromptSource,
        latest: LatestMessage,
        auto_context: AutoContext | None = None,
        short_term: ShortTerm | None = None,
    ) -> None:
        self.source = source
        self.latest = latest
        self.pass_latest = takes_latest_message(source)
        self.auto_context = auto_context
        self.short_term = short_term

    async def drain(self, grace_seconds: float) -> None:
        """Wait up to ``grace_seconds`` for memory lookups still running in the background,
        then cancel them (the core's stop)."""
        if self.auto_context is not None:
            await self.auto_context.drain(grace_seconds)

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
        if self.short_term is not None:
            carried = await self.short_term.message(session.session_id)
            if carried is not None:
                messages.append(carried)
        if self.auto_context is not None and text is not None:
            extra = await self.auto_context.message(session.session_id, session.agent_id, key, text)
            if extra is not None:
                messages.append(extra)
        return messages
