"""System prompt assembly from an agent's workspace (seed 003 ``bc_system_prompt``).

Order (MEMORY last, closest to the conversation)::

    preamble
    IDENTITY  SOUL  USER  TOOLS  AGENTS  [HEARTBEAT]  BOOTSTRAP   bootstrap files
    skills                                                       given by the caller
    [user:environment]                                           local time, time since last message
    memory/<yesterday>.md  memory/<today>.md                     daily logs
    MEMORY

HEARTBEAT.md is included only for heartbeat turns (``include_heartbeat=True``): it is the
checklist for waking up unprompted, noise in an ordinary conversation. Missing and
empty files are skipped; each file is cut at 20 KB (:mod:`.truncate`). "Today" and
"yesterday" are dates in the user's timezone at ``now``. When the agent has no workspace
a single fallback section stands in for the bootstrap files.

One routine, :func:`assemble_prompt`, reads the files and orders the parts; what a part
is made of is a :class:`PromptParts`: :class:`Sections` builds each afresh
(:func:`build_system_prompt`), :class:`~beamclaw_core.workspace.prompt_cache.PromptCache`
memoises the same builders' messages by their inputs.

Invariants: no clock and no writes — the result depends only on the files, ``now`` and
the arguments; the sections' order is the order above whatever the files contain.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import UserTimezone
from beamclaw_core.workspace.layout import agent_dir, daily_log_path
from beamclaw_core.workspace.sections import (
    Head,
    PromptSection,
    ReadText,
    daily_log_days,
    daily_log_section,
    environment_section,
    read_text,
    section_message,
    skills_section_of,
    workspace_head,
)
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES
from beamclaw_core.workspace.truncate import MAX_FILE_BYTES

SECTION_SEPARATOR = "\n\n"

_Part = TypeVar("_Part")
_PartT = TypeVar("_PartT")


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """The assembled system prompt of one turn."""

    agent: str
    sections: tuple[PromptSection, ...]
    timezone: UserTimezone
    workspace_found: bool

    @property
    def text(self) -> str:
        """All sections joined by blank lines."""
        return SECTION_SEPARATOR.join(s.text for s in self.sections)

    def as_message(self) -> Message:
        """The whole prompt as one system message (what most providers want)."""
        return Message.system(self.text, meta={"kind": "system_prompt", "agent": self.agent})

    def as_messages(self) -> tuple[Message, ...]:
        """One system message per section, in order (seed 003's original shape)."""
        return tuple(section_message(s) for s in self.sections)

    def sources(self) -> tuple[str, ...]:
        """The files that made it into the prompt, in order."""
        return tuple(s.source for s in self.sections if s.source is not None)


@dataclass(frozen=True, slots=True)
class WorkspacePaths:
    """An agent's workspace as path strings: its directory and bootstrap files (in
    :data:`BOOTSTRAP_FILES` order)."""

    directory: str
    files: tuple[str, ...]

    @classmethod
    def of(cls, agent: str, home: Path | None) -> WorkspacePaths:
        """Raises :class:`InvalidAgentNameError` for a bad name (it never reads elsewhere)."""
        directory = agent_dir(agent, home)
        return cls(str(directory), tuple(str(directory / f.value) for f in BOOTSTRAP_FILES))


class PromptParts(Protocol[_PartT]):
    """How :func:`assemble_prompt` makes each part, from the inputs it gathered."""

    def paths(self, agent: str, home: Path | None) -> WorkspacePaths: ...

    def daily_logs(self, paths: WorkspacePaths, today: date) -> tuple[tuple[str, date, str], ...]:
        """``((path, day, "yesterday"|"today"), ...)`` in prompt order."""
        ...

    def head(
        self,
        agent: str,
        *,
        found: bool,
        texts: tuple[str | None, ...],
        timezone: str | None,
        include_heartbeat: bool,
        max_file_bytes: int,
    ) -> Head[_PartT]: ...

    def skills(self, text: str | None) -> _PartT | None: ...

    def environment(
        self, now: datetime, last_message_at: datetime | None, zone: UserTimezone
    ) -> tuple[_PartT, date]:
        """The environment part and today's date in ``zone``."""
        ...

    def daily_log(
        self, path: str, day: date, when: str, text: str, max_file_bytes: int
    ) -> _PartT: ...


class Sections:
    """The :class:`PromptParts` that builds every part afresh as a :class:`PromptSection`."""

    def paths(self, agent: str, home: Path | None) -> WorkspacePaths:
        return WorkspacePaths.of(agent, home)

    def daily_logs(self, paths: WorkspacePaths, today: date) -> tuple[tuple[str, date, str], ...]:
        directory = Path(paths.directory)
        return tuple((str(daily_log_path(directory, d)), d, w) for d, w in daily_log_days(today))

    def head(
        self,
        agent: str,
        *,
        found: bool,
        texts: tuple[str | None, ...],
        timezone: str | None,
        include_heartbeat: bool,
        max_file_bytes: int,
    ) -> Head[PromptSection]:
        return workspace_head(
            agent,
            found=found,
            texts=texts,
            timezone=timezone,
            include_heartbeat=include_heartbeat,
            max_file_bytes=max_file_bytes,
        )

    def skills(self, text: str | None) -> PromptSection | None:
        return skills_section_of(text)

    def environment(
        self, now: datetime, last_message_at: datetime | None, zone: UserTimezone
    ) -> tuple[PromptSection, date]:
        section = environment_section(now=now, last_message_at=last_message_at, zone=zone)
        return section, now.astimezone(zone.zone).date()

    def daily_log(
        self, path: str, day: date, when: str, text: str, max_file_bytes: int
    ) -> PromptSection:
        return daily_log_section(text, day, when, max_file_bytes)


@dataclass(frozen=True, slots=True)
class Assembled(Generic[_Part]):
    """The prompt's parts in order, the user's timezone, whether the workspace exists."""

    parts: list[_Part]
    zone: UserTimezone
    found: bool


def in_prompt_order(
    head: Iterable[_Part],
    skills: _Part | None,
    environment: _Part,
    daily_logs: Iterable[_Part],
    memory: _Part | None,
) -> list[_Part]:
    """The parts in the prompt's order (module docstring), skipping absent ones: the one
    place that order lives."""
    out = list(head)
    if skills is not None:
        out.append(skills)
    out.append(environment)
    out.extend(daily_logs)
    if memory is not None:
        out.append(memory)
    return out


def assemble_prompt(
    parts: PromptParts[_Part],
    agent: str,
    *,
    now: datetime,
    last_message_at: datetime | None,
    read: ReadText,
    timezone: str | None = None,
    skills_section: str | None = None,
    include_heartbeat: bool = False,
    home: Path | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> Assembled[_Part]:
    """Read the workspace with ``read`` and make its parts with ``parts``, in order
    (arguments as :func:`build_system_prompt`'s)."""
    paths = parts.paths(agent, home)
    found = os.path.isdir(paths.directory)
    texts = tuple(read(path) for path in paths.files) if found else ()
    head = parts.head(
        agent,
        found=found,
        texts=texts,
        timezone=timezone,
        include_heartbeat=include_heartbeat,
        max_file_bytes=max_file_bytes,
    )
    environment, today = parts.environment(now, last_message_at, head.zone)
    logs: list[_Part] = []
    if found:
        for path, day, when in parts.daily_logs(paths, today):
            text = read(path)
            if text is not None:
                logs.append(parts.daily_log(path, day, when, text, max_file_bytes))
    skills = parts.skills(skills_section)
    ordered = in_prompt_order(head.parts, skills, environment, logs, head.memory)
    return Assembled(ordered, head.zone, found)


_SECTIONS = Sections()


def build_system_prompt(
    agent: str,
    *,
    now: datetime,
    last_message_at: datetime | None,
    timezone: str | None = None,
    skills_section: str | None = None,
    include_heartbeat: bool = False,
    home: Path | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    read: ReadText = read_text,
) -> SystemPrompt:
    """Assemble the system prompt of agent ``agent`` for a turn starting at ``now``.

    Args:
        agent: the agent's name (validated; a bad name raises, it never reads elsewhere).
        now: the turn's start, timezone-aware (the caller's clock; none is read here).
        last_message_at: when the previous message of the conversation arrived, or None.
        timezone: the configured IANA timezone; overrides USER.md's ``Timezone:`` line.
        skills_section: the eligible skills rendered as text by the skills system.
        include_heartbeat: add HEARTBEAT.md (heartbeat turns only).
        home: ``$BEAMCLAW_HOME`` override.
        max_file_bytes: the per-file limit (20 KB).
        read: how files are read, given a path string (:func:`read_text`; a
            :class:`~beamclaw_core.workspace.file_cache.FileTextCache` method to reuse
            texts of unchanged files). Whatever it raises propagates.

    Raises:
        InvalidAgentNameError: ``agent`` breaks the name rules.
        ValueError: ``now`` or ``last_message_at`` is naive.
    """
    built = assemble_prompt(
        _SECTIONS,
        agent,
        now=now,
        last_message_at=last_message_at,
        read=read,
        timezone=timezone,
        skills_section=skills_section,
        include_heartbeat=include_heartbeat,
        home=home,
        max_file_bytes=max_file_bytes,
    )
    return SystemPrompt(agent, tuple(built.parts), built.zone, built.found)


async def build_system_prompt_async(
    agent: str,
    *,
    now: datetime,
    last_message_at: datetime | None,
    timezone: str | None = None,
    skills_section: str | None = None,
    include_heartbeat: bool = False,
    home: Path | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> SystemPrompt:
    """:func:`build_system_prompt` in a worker thread, so file reads never block the loop."""
    return await asyncio.to_thread(
        build_system_prompt,
        agent,
        now=now,
        last_message_at=last_message_at,
        timezone=timezone,
        skills_section=skills_section,
        include_heartbeat=include_heartbeat,
        home=home,
        max_file_bytes=max_file_bytes,
    )
