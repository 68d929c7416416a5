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

Invariants: no clock and no writes — the result depends only on the files, ``now`` and
the arguments; the sections' order is the order above whatever the files contain.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import (
    UserTimezone,
    environment_block,
    resolve_timezone,
)
from beamclaw_core.workspace.layout import MEMORY_DIRNAME, agent_dir, daily_log_path
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile
from beamclaw_core.workspace.truncate import MAX_FILE_BYTES, truncate_for_prompt

SECTION_SEPARATOR = "\n\n"

_Part = TypeVar("_Part")

ReadText = Callable[[Path], "str | None"]
"""How the prompt reads a file: its text, or None when absent, unreadable or blank."""


class SectionKind(enum.StrEnum):
    """What a prompt section is made of; :mod:`.context` groups token counts by it."""

    PREAMBLE = "preamble"
    BOOTSTRAP = "bootstrap"
    FALLBACK = "fallback"
    SKILLS = "skills"
    ENVIRONMENT = "environment"
    DAILY_LOG = "daily_log"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class PromptSection:
    """One part of the system prompt. ``source`` is the workspace-relative file, if any."""

    kind: SectionKind
    text: str
    source: str | None = None
    truncated: bool = False


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


def _preamble(agent: str) -> str:
    return (
        f"You are the agent '{agent}'. The sections below come from your workspace files; "
        "they define who you are, who you work for and what you remember. They are yours: "
        "keep them current with the workspace memory tool."
    )


def _fallback(agent: str) -> str:
    return (
        "You are a helpful, honest personal assistant running in BeamClaw. "
        f"(The workspace of agent '{agent}' does not exist yet, so no identity, user "
        "profile or memory is loaded. Create it with `beamclaw agent create "
        f"{agent}`.)"
    )


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, undecodable bytes replaced); None when absent, unreadable
    or only whitespace. The default :data:`ReadText`."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # absent, a directory or unreadable: the section is skipped
        return None
    return text if text.strip() else None


def _file_section(
    kind: SectionKind, text: str, source: str, title: str, limit: int
) -> PromptSection:
    cut = truncate_for_prompt(text.strip("\n"), label=source, limit_bytes=limit)
    return PromptSection(kind, f"## {title}\n\n{cut.text}", source, cut.truncated)


def section_message(section: PromptSection) -> Message:
    """``section`` as the system message :meth:`SystemPrompt.as_messages` gives it."""
    return Message.system(section.text, meta={"kind": str(section.kind), "source": section.source})


def head_sections(
    agent: str,
    *,
    found: bool,
    files: Mapping[BootstrapFile, str | None],
    include_heartbeat: bool,
    max_file_bytes: int,
) -> list[PromptSection]:
    """The sections before the skills: the preamble and the bootstrap files (MEMORY.md
    excepted) when the workspace was ``found``, else the single fallback section."""
    if not found:
        return [PromptSection(SectionKind.FALLBACK, _fallback(agent))]
    sections = [PromptSection(SectionKind.PREAMBLE, _preamble(agent))]
    for file in BOOTSTRAP_FILES:
        text = files.get(file)
        if file is BootstrapFile.MEMORY or text is None:
            continue
        if file is BootstrapFile.HEARTBEAT and not include_heartbeat:
            continue
        sections.append(
            _file_section(SectionKind.BOOTSTRAP, text, file.value, file.value, max_file_bytes)
        )
    return sections


def skills_section_of(text: str | None) -> PromptSection | None:
    """The skills section for the text the skills system rendered (None when blank)."""
    if text and text.strip():
        return PromptSection(SectionKind.SKILLS, text.strip("\n"))
    return None


def environment_section(
    *, now: datetime, last_message_at: datetime | None, zone: UserTimezone
) -> PromptSection:
    """The ``[user:environment]`` section (:func:`environment_block`)."""
    return PromptSection(
        SectionKind.ENVIRONMENT,
        environment_block(now=now, last_message_at=last_message_at, timezone=zone),
    )


def daily_log_days(today: date) -> tuple[tuple[date, str], ...]:
    """``((yesterday, "yesterday"), (today, "today"))``: the logs shown, in prompt order."""
    return ((today - timedelta(days=1), "yesterday"), (today, "today"))


def daily_log_section(text: str, day: date, when: str, max_file_bytes: int) -> PromptSection:
    """The section of the daily log of ``day`` (``when`` is "yesterday" or "today")."""
    source = f"{MEMORY_DIRNAME}/{day.isoformat()}.md"
    title = f"Daily log {day.isoformat()} ({when})"
    return _file_section(SectionKind.DAILY_LOG, text, source, title, max_file_bytes)


def memory_section(text: str | None, max_file_bytes: int) -> PromptSection | None:
    """The MEMORY.md section (None when the file is absent or blank)."""
    if text is None:
        return None
    name = BootstrapFile.MEMORY.value
    return _file_section(SectionKind.MEMORY, text, name, name, max_file_bytes)


def in_prompt_order(
    head: Iterable[_Part],
    skills: _Part | None,
    environment: _Part,
    daily_logs: Iterable[_Part],
    memory: _Part | None,
) -> list[_Part]:
    """The parts in the prompt's order (module docstring), skipping absent ones: the one
    place that order lives, for :func:`build_system_prompt` (sections) and
    :class:`~beamclaw_core.workspace.prompt_cache.PromptCache` (memoised messages)."""
    out = list(head)
    if skills is not None:
        out.append(skills)
    out.append(environment)
    out.extend(daily_logs)
    if memory is not None:
        out.append(memory)
    return out


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
        read: how files are read (:func:`read_text`; a
            :class:`~beamclaw_core.workspace.file_cache.FileTextCache` method to reuse
            texts of unchanged files). Whatever it raises propagates.

    Raises:
        InvalidAgentNameError: ``agent`` breaks the name rules.
        ValueError: ``now`` or ``last_message_at`` is naive.
    """
    directory = agent_dir(agent, home)
    found = directory.is_dir()
    files = {f: read(directory / f.value) for f in BOOTSTRAP_FILES} if found else {}
    zone = resolve_timezone(timezone, files.get(BootstrapFile.USER))
    head = head_sections(
        agent,
        found=found,
        files=files,
        include_heartbeat=include_heartbeat,
        max_file_bytes=max_file_bytes,
    )
    environment = environment_section(now=now, last_message_at=last_message_at, zone=zone)
    logs: list[PromptSection] = []
    if found:
        for day, when in daily_log_days(now.astimezone(zone.zone).date()):
            text = read(daily_log_path(directory, day))
            if text is not None:
                logs.append(daily_log_section(text, day, when, max_file_bytes))
    memory = memory_section(files[BootstrapFile.MEMORY], max_file_bytes) if found else None
    sections = in_prompt_order(head, skills_section_of(skills_section), environment, logs, memory)
    return SystemPrompt(agent, tuple(sections), zone, found)


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
