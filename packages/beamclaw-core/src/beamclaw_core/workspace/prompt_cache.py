"""The system prompt of successive turns, rebuilding only the sections whose inputs changed.

:class:`PromptCache` returns exactly ``build_system_prompt(...).as_messages()`` (as a
list), but remembers each section's message keyed by everything it is made of:

* the preamble and bootstrap files (plus the resolved timezone and MEMORY.md's section)
  by the texts of the agent's eight bootstrap files — one entry per agent and options
  (configured timezone, heartbeat flag, size limit), replaced when a text changes;
* the skills section by its text (a few entries: the promoted skill varies by turn);
* the ``[user:environment]`` block (and today's date in the user's timezone) by the
  timezone, the UTC minute of ``now`` and the whole minutes since the last message —
  everything the block shows (it has minute resolution);
* a daily log's section by its text — one entry per log file and options.

It never decides whether a file changed: texts come from the ``read`` function the caller
passes each time (a :class:`~beamclaw_core.workspace.file_cache.FileTextCache` method,
which ``stat``\\ s every file on every call and returns the *same* string object for an
unchanged file, so the keys above hash and compare in constant time). Paths are kept as
strings per agent, so a call does no :mod:`pathlib` work.

Invariant: for the same inputs and file texts the result equals
:func:`~beamclaw_core.workspace.prompt.build_system_prompt`'s ``as_messages()``; the
messages are shared between calls (frozen models — callers must not mutate their
``meta``). Thread-safe without a lock: values are immutable and each table is a dict
whose operations are atomic; a race costs at most a duplicate computation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import UserTimezone, resolve_timezone
from beamclaw_core.workspace.layout import agent_dir, daily_log_path
from beamclaw_core.workspace.prompt import (
    daily_log_days,
    daily_log_section,
    environment_section,
    head_sections,
    in_prompt_order,
    memory_section,
    section_message,
    skills_section_of,
)
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile
from beamclaw_core.workspace.truncate import MAX_FILE_BYTES

ReadPath = Callable[[str], "str | None"]
"""How files are read: a path string to its text, or None when absent, unreadable or
blank (:meth:`FileTextCache.cached` or :meth:`FileTextCache.read`)."""

MAX_ENTRIES = 256
"""Per table; a full table is emptied (entries are cheap to rebuild)."""
MAX_SKILL_TEXTS = 16
"""Skills sections remembered (they can be large: promoted skills are included whole)."""

_MINUTE = timedelta(minutes=1)
_USER = BOOTSTRAP_FILES.index(BootstrapFile.USER)
_MEMORY = BOOTSTRAP_FILES.index(BootstrapFile.MEMORY)


@dataclass(frozen=True, slots=True)
class _Layout:
    """One agent's workspace paths as strings (resolved once: no pathlib per call)."""

    directory: str
    files: tuple[str, ...]
    """The bootstrap files, in :data:`BOOTSTRAP_FILES` order."""
    logs: dict[date, tuple[tuple[str, date, str], ...]] = field(
        default_factory=dict[date, tuple[tuple[str, date, str], ...]], compare=False, hash=False
    )
    """``today -> ((path, day, "yesterday"|"today"), ...)``."""


@dataclass(frozen=True, slots=True)
class _Head:
    messages: tuple[Message, ...]
    zone: UserTimezone
    memory: Message | None


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime")


def _whole_minute_offset(zone: ZoneInfo, minute: int) -> bool:
    """Whether ``zone``'s UTC offset is the same whole number of minutes throughout UTC
    minute ``minute`` (then local minute and date are functions of the UTC minute)."""
    start = datetime.fromtimestamp(minute * 60, UTC)
    first = start.astimezone(zone).utcoffset()
    last = (start + _MINUTE - timedelta(microseconds=1)).astimezone(zone).utcoffset()
    return first is not None and first == last and first.total_seconds() % 60 == 0


def _put(table: dict[Any, Any], key: object, value: object) -> None:
    if len(table) >= MAX_ENTRIES:
        table.clear()
    table[key] = value


class PromptCache:
    """``build_system_prompt(...).as_messages()`` for successive turns, memoised per
    section (see the module docstring for the keys)."""

    def __init__(self) -> None:
        self._layouts: dict[tuple[object, ...], _Layout] = {}
        self._heads: dict[tuple[object, ...], tuple[tuple[str | None, ...], _Head]] = {}
        self._skills: dict[str, Message | None] = {}
        self._environments: dict[tuple[object, ...], tuple[Message, date]] = {}
        self._logs: dict[tuple[object, ...], tuple[str, Message]] = {}

    def _layout(self, agent: str, home: Path | None) -> _Layout:
        if home is not None:
            key: tuple[object, ...] = (agent, home)
        else:  # $BEAMCLAW_HOME, or ~/.beamclaw: both read at call time, like beamclaw_home()
            key = (agent, None, os.environ.get("BEAMCLAW_HOME"), os.environ.get("HOME"))
        layout = self._layouts.get(key)
        if layout is None:
            directory = agent_dir(agent, home)  # validates the name
            layout = _Layout(
                str(directory), tuple(str(directory / f.value) for f in BOOTSTRAP_FILES)
            )
            _put(self._layouts, key, layout)
        return layout

    def messages(
        self,
        agent: str,
        *,
        now: datetime,
        last_message_at: datetime | None,
        read: ReadPath,
        timezone: str | None = None,
        skills_section: str | None = None,
        include_heartbeat: bool = False,
        home: Path | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> list[Message]:
        """The prompt's messages, as :func:`build_system_prompt` with the same arguments
        would give them (``read`` takes a path string).

        Raises:
            InvalidAgentNameError: ``agent`` breaks the name rules.
            ValueError: ``now`` or ``last_message_at`` is naive.
            Whatever ``read`` raises (e.g. :class:`CacheMiss`).
        """
        _require_aware(now, "now")
        layout = self._layout(agent, home)
        found = os.path.isdir(layout.directory)
        texts = tuple(read(path) for path in layout.files) if found else ()
        head = self._head(agent, found, texts, timezone, include_heartbeat, max_file_bytes)
        environment, today = self._environment(now, last_message_at, head.zone)
        logs: list[Message] = []
        if found:
            days = layout.logs.get(today)
            if days is None:
                directory = Path(layout.directory)
                days = tuple(
                    (str(daily_log_path(directory, day)), day, when)
                    for day, when in daily_log_days(today)
                )
                _put(layout.logs, today, days)
            for path, day, when in days:
                text = read(path)
                if text is not None:
                    logs.append(self._log(path, day, when, text, max_file_bytes))
        skills = self._skills_message(skills_section)
        return in_prompt_order(head.messages, skills, environment, logs, head.memory)

    def _head(
        self,
        agent: str,
        found: bool,
        texts: tuple[str | None, ...],
        timezone: str | None,
        include_heartbeat: bool,
        max_file_bytes: int,
    ) -> _Head:
        key = (agent, found, timezone, include_heartbeat, max_file_bytes)
        entry = self._heads.get(key)
        if entry is not None and entry[0] == texts:  # same str objects: identity compares
            return entry[1]
        files = dict(zip(BOOTSTRAP_FILES, texts, strict=True)) if found else {}
        zone = resolve_timezone(timezone, texts[_USER] if found else None)
        sections = head_sections(
            agent,
            found=found,
            files=files,
            include_heartbeat=include_heartbeat,
            max_file_bytes=max_file_bytes,
        )
        memory = memory_section(texts[_MEMORY], max_file_bytes) if found else None
        head = _Head(
            tuple(section_message(s) for s in sections),
            zone,
            section_message(memory) if memory is not None else None,
        )
        _put(self._heads, key, (texts, head))
        return head

    def _skills_message(self, text: str | None) -> Message | None:
        if not text:
            return None
        if text in self._skills:
            return self._skills[text]
        section = skills_section_of(text)
        message = section_message(section) if section is not None else None
        if len(self._skills) >= MAX_SKILL_TEXTS:
            self._skills.clear()
        self._skills[text] = message
        return message

    def _environment(
        self, now: datetime, last_message_at: datetime | None, zone: UserTimezone
    ) -> tuple[Message, date]:
        minute = int(now.timestamp() // 60)
        elapsed: int | None = None
        if last_message_at is not None:
            _require_aware(last_message_at, "last_message_at")
            seconds = int((now - last_message_at).total_seconds())
            elapsed = seconds // 60 if seconds >= 60 else 0  # format_elapsed's resolution
        key = (zone.zone, zone.source, minute, elapsed)
        entry = self._environments.get(key)
        if entry is None:
            section = environment_section(now=now, last_message_at=last_message_at, zone=zone)
            entry = (section_message(section), now.astimezone(zone.zone).date())
            if _whole_minute_offset(zone.zone, minute):
                _put(self._environments, key, entry)
        return entry

    def _log(self, path: str, day: date, when: str, text: str, max_file_bytes: int) -> Message:
        key = (path, when, max_file_bytes)
        entry = self._logs.get(key)
        if entry is not None and entry[0] == text:
            return entry[1]
        message = section_message(daily_log_section(text, day, when, max_file_bytes))
        _put(self._logs, key, (text, message))
        return message

    def clear(self) -> None:
        """Forget every memoised section."""
        for table in (self._layouts, self._heads, self._skills, self._environments, self._logs):
            table.clear()
