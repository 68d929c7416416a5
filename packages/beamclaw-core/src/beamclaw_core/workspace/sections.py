"""The sections of the system prompt, each made by one pure function of its inputs.

:func:`~beamclaw_core.workspace.prompt.assemble_prompt` puts them in the prompt's order;
:class:`~beamclaw_core.workspace.prompt_cache.PromptCache` memoises them (as messages) by
those same inputs. No clock, and no reads but :func:`read_text`'s (the default reader):
texts and times come from the caller.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Generic, TypeVar

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import UserTimezone, environment_block, resolve_timezone
from beamclaw_core.workspace.layout import MEMORY_DIRNAME
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile
from beamclaw_core.workspace.truncate import truncate_for_prompt

ReadText = Callable[[str], "str | None"]
"""How the prompt reads a file, given its path as a string: its text, or None when absent,
unreadable or blank (:func:`read_text`, or a
:class:`~beamclaw_core.workspace.file_cache.FileTextCache` method)."""


_Part = TypeVar("_Part")
_Other = TypeVar("_Other")

_USER = BOOTSTRAP_FILES.index(BootstrapFile.USER)
_MEMORY = BOOTSTRAP_FILES.index(BootstrapFile.MEMORY)


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


def read_text(path: str | Path) -> str | None:
    """The file's text (UTF-8, undecodable bytes replaced); None when absent, unreadable
    or only whitespace. The default :data:`ReadText`."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
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


@dataclass(frozen=True, slots=True)
class Head(Generic[_Part]):
    """What the bootstrap files' texts make: the parts before the skills, the timezone
    they resolve to, and the MEMORY.md part (which comes last)."""

    parts: tuple[_Part, ...]
    zone: UserTimezone
    memory: _Part | None

    def map(self, convert: Callable[[_Part], _Other]) -> Head[_Other]:
        memory = convert(self.memory) if self.memory is not None else None
        return Head(tuple(convert(p) for p in self.parts), self.zone, memory)


def workspace_head(
    agent: str,
    *,
    found: bool,
    texts: tuple[str | None, ...],
    timezone: str | None,
    include_heartbeat: bool,
    max_file_bytes: int,
) -> Head[PromptSection]:
    """The :class:`Head` of ``texts``, the bootstrap files' texts in
    :data:`BOOTSTRAP_FILES` order (empty when the workspace was not ``found``)."""
    files = dict(zip(BOOTSTRAP_FILES, texts, strict=True)) if found else {}
    sections = head_sections(
        agent,
        found=found,
        files=files,
        include_heartbeat=include_heartbeat,
        max_file_bytes=max_file_bytes,
    )
    zone = resolve_timezone(timezone, texts[_USER] if found else None)
    memory = memory_section(texts[_MEMORY], max_file_bytes) if found else None
    return Head(tuple(sections), zone, memory)


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
