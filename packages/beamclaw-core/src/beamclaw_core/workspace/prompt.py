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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import (
    UserTimezone,
    environment_block,
    resolve_timezone,
)
from beamclaw_core.workspace.layout import agent_dir, daily_log_path
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile
from beamclaw_core.workspace.truncate import MAX_FILE_BYTES, truncate_for_prompt

SECTION_SEPARATOR = "\n\n"

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
        return tuple(
            Message.system(s.text, meta={"kind": str(s.kind), "source": s.source})
            for s in self.sections
        )

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
    sections: list[PromptSection] = []
    if found:
        sections.append(PromptSection(SectionKind.PREAMBLE, _preamble(agent)))
        for file in BOOTSTRAP_FILES:
            text = files[file]
            if file is BootstrapFile.MEMORY or text is None:
                continue
            if file is BootstrapFile.HEARTBEAT and not include_heartbeat:
                continue
            sections.append(
                _file_section(SectionKind.BOOTSTRAP, text, file.value, file.value, max_file_bytes)
            )
    else:
        sections.append(PromptSection(SectionKind.FALLBACK, _fallback(agent)))
    if skills_section and skills_section.strip():
        sections.append(PromptSection(SectionKind.SKILLS, skills_section.strip("\n")))
    sections.append(
        PromptSection(
            SectionKind.ENVIRONMENT,
            environment_block(now=now, last_message_at=last_message_at, timezone=zone),
        )
    )
    if found:
        today = now.astimezone(zone.zone).date()
        for day, when in ((today - timedelta(days=1), "yesterday"), (today, "today")):
            path = daily_log_path(directory, day)
            text = read(path)
            if text is not None:
                source = f"memory/{path.name}"
                title = f"Daily log {day.isoformat()} ({when})"
                sections.append(
                    _file_section(SectionKind.DAILY_LOG, text, source, title, max_file_bytes)
                )
        memory = files[BootstrapFile.MEMORY]
        if memory is not None:
            sections.append(
                _file_section(
                    SectionKind.MEMORY,
                    memory,
                    BootstrapFile.MEMORY.value,
                    BootstrapFile.MEMORY.value,
                    max_file_bytes,
                )
            )
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
