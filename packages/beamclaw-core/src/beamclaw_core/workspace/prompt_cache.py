"""The system prompt of successive turns, rebuilding only the sections whose inputs changed.

:class:`PromptCache` is the :class:`~beamclaw_core.workspace.prompt.PromptParts` whose
parts are messages, each memoised by everything it is made of and built, on a miss, by
the same section builder :func:`~beamclaw_core.workspace.prompt.build_system_prompt`
uses; :func:`~beamclaw_core.workspace.prompt.assemble_prompt` reads the files and
orders the parts for both. The keys:

* the preamble and bootstrap files (plus the resolved timezone and MEMORY.md's section)
  by the texts of the agent's eight bootstrap files — one entry per agent and options
  (configured timezone, heartbeat flag, size limit), replaced when a text changes;
* the skills section by its text (a few entries: the promoted skill varies by turn);
* the ``[user:environment]`` block (and today's date in the user's timezone) by the
  timezone, the UTC minute of ``now`` and the whole minutes since the last message —
  everything the block shows (it has minute resolution);
* a daily log's section by its text — one entry per log file and options;
* an agent's paths (and its daily logs' per day) as strings, so a call does no
  :mod:`pathlib` work.

It never decides whether a file changed: texts come from the ``read`` function the caller
passes each time (a :class:`~beamclaw_core.workspace.file_cache.FileTextCache` method,
which ``stat``\\ s every file on every call and returns the *same* string object for an
unchanged file, so the keys above hash and compare in constant time).

Invariant: for the same inputs and file texts the result equals
:func:`~beamclaw_core.workspace.prompt.build_system_prompt`'s ``as_messages()``; the
messages are shared between calls (frozen models — callers must not mutate their
``meta``). Thread-safe without a lock: values are immutable and each table is a dict
whose operations are atomic; a race costs at most a duplicate computation.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from beamclaw_core.messages import Message
from beamclaw_core.workspace.environment import UserTimezone
from beamclaw_core.workspace.prompt import Sections, WorkspacePaths, assemble_prompt
from beamclaw_core.workspace.sections import Head, ReadText, section_message
from beamclaw_core.workspace.truncate import MAX_FILE_BYTES

MAX_ENTRIES = 256
"""Per table; a full table is emptied (entries are cheap to rebuild)."""
MAX_SKILL_TEXTS = 16
"""Skills sections remembered (they can be large: promoted skills are included whole)."""

_MINUTE = timedelta(minutes=1)
_BUILD = Sections()


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
        self._paths: dict[tuple[object, ...], WorkspacePaths] = {}
        self._logs: dict[tuple[str, date], tuple[tuple[str, date, str], ...]] = {}
        self._heads: dict[tuple[object, ...], tuple[tuple[str | None, ...], Head[Message]]] = {}
        self._skills: dict[str, Message | None] = {}
        self._environments: dict[tuple[object, ...], tuple[Message, date]] = {}
        self._log_messages: dict[tuple[object, ...], tuple[str, Message]] = {}

    def messages(
        self,
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
    ) -> list[Message]:
        """The prompt's messages, as :func:`build_system_prompt` with the same arguments
        would give them.

        Raises:
            InvalidAgentNameError: ``agent`` breaks the name rules.
            ValueError: ``now`` or ``last_message_at`` is naive.
            Whatever ``read`` raises (e.g. :class:`CacheMiss`).
        """
        _require_aware(now, "now")
        return assemble_prompt(
            self,
            agent,
            now=now,
            last_message_at=last_message_at,
            read=read,
            timezone=timezone,
            skills_section=skills_section,
            include_heartbeat=include_heartbeat,
            home=home,
            max_file_bytes=max_file_bytes,
        ).parts

    # ------------------------------------------------------------ PromptParts

    def paths(self, agent: str, home: Path | None) -> WorkspacePaths:
        if home is not None:
            key: tuple[object, ...] = (agent, home)
        else:  # $BEAMCLAW_HOME, or ~/.beamclaw: both read at call time, like beamclaw_home()
            key = (agent, None, os.environ.get("BEAMCLAW_HOME"), os.environ.get("HOME"))
        paths = self._paths.get(key)
        if paths is None:
            paths = _BUILD.paths(agent, home)  # validates the name
            _put(self._paths, key, paths)
        return paths

    def daily_logs(self, paths: WorkspacePaths, today: date) -> tuple[tuple[str, date, str], ...]:
        key = (paths.directory, today)
        logs = self._logs.get(key)
        if logs is None:
            logs = _BUILD.daily_logs(paths, today)
            _put(self._logs, key, logs)
        return logs

    def head(
        self,
        agent: str,
        *,
        found: bool,
        texts: tuple[str | None, ...],
        timezone: str | None,
        include_heartbeat: bool,
        max_file_bytes: int,
    ) -> Head[Message]:
        key = (agent, found, timezone, include_heartbeat, max_file_bytes)
        entry = self._heads.get(key)
        if entry is not None and entry[0] == texts:  # same str objects: identity compares
            return entry[1]
        head = _BUILD.head(
            agent,
            found=found,
            texts=texts,
            timezone=timezone,
            include_heartbeat=include_heartbeat,
            max_file_bytes=max_file_bytes,
        ).map(section_message)
        _put(self._heads, key, (texts, head))
        return head

    def skills(self, text: str | None) -> Message | None:
        if not text:
            return None
        if text in self._skills:
            return self._skills[text]
        section = _BUILD.skills(text)
        message = section_message(section) if section is not None else None
        if len(self._skills) >= MAX_SKILL_TEXTS:
            self._skills.clear()
        self._skills[text] = message
        return message

    def environment(
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
            section, today = _BUILD.environment(now, last_message_at, zone)
            entry = (section_message(section), today)
            if _whole_minute_offset(zone.zone, minute):
                _put(self._environments, key, entry)
        return entry

    def daily_log(self, path: str, day: date, when: str, text: str, max_file_bytes: int) -> Message:
        key = (path, when, max_file_bytes)
        entry = self._log_messages.get(key)
        if entry is not None and entry[0] == text:
            return entry[1]
        message = section_message(_BUILD.daily_log(path, day, when, text, max_file_bytes))
        _put(self._log_messages, key, (text, message))
        return message

    def clear(self) -> None:
        """Forget every memoised section."""
        tables: tuple[dict[Any, Any], ...] = (
            self._paths,
            self._logs,
            self._heads,
            self._skills,
            self._environments,
            self._log_messages,
        )
        for table in tables:
            table.clear()
