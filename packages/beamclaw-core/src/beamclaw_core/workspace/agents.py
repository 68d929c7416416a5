"""Agent workspaces on disk: create, list, show, delete, rehatch (the CLI's ``agent`` group).

A workspace is ``$BEAMCLAW_HOME/agents/<name>/`` holding the bootstrap files, ``memory/``
(daily logs), ``skills/`` and, after a rehatch, ``archive/``.

Invariants:

* a workspace appears whole or not at all: it is built in a hidden sibling directory and
  renamed into place; a deletion renames it away before removing it;
* ``default`` can be rehatched but never deleted;
* a rehatch never destroys text: every file it replaces is copied to
  ``archive/rehatch-<UTC time>/`` first, and ``memory/`` and ``skills/`` are never touched.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from beamclaw_core.workspace.errors import (
    AgentExistsError,
    AgentNotFoundError,
    ProtectedAgentError,
    WorkspaceIOError,
)
from beamclaw_core.workspace.layout import (
    ARCHIVE_DIRNAME,
    MEMORY_DIRNAME,
    SKILLS_DIRNAME,
    agent_dir,
    agents_root,
    is_addressable,
)
from beamclaw_core.workspace.names import PROTECTED_AGENTS, validate_agent_name
from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile, default_template

_DAILY_LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}")

REHATCH_RESETS: tuple[BootstrapFile, ...] = (
    BootstrapFile.IDENTITY,
    BootstrapFile.SOUL,
    BootstrapFile.TOOLS,
    BootstrapFile.AGENTS,
    BootstrapFile.BOOTSTRAP,
)
"""Files a rehatch restores: the agent's self (name, character) and its operating manual,
plus BOOTSTRAP.md so the first-run ritual happens again."""

REHATCH_KEEPS: tuple[BootstrapFile, ...] = (
    BootstrapFile.USER,
    BootstrapFile.MEMORY,
    BootstrapFile.HEARTBEAT,
)
"""Files a rehatch keeps unless ``full=True``: what belongs to the person (their profile,
the curated memory, the things they asked to be watched)."""


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """One agent as ``agent list`` shows it."""

    name: str
    path: Path
    files: tuple[BootstrapFile, ...]
    """Bootstrap files present and non-empty, in prompt order."""
    skills: tuple[str, ...]
    """Directory names under ``skills/`` holding a ``SKILL.md``, sorted."""
    daily_logs: int
    hatched: bool
    """True once BOOTSTRAP.md is gone or empty (the first-run ritual is over)."""


@dataclass(frozen=True, slots=True)
class BootstrapFileContent:
    """One bootstrap file as ``agent show`` prints it; ``content`` is None when absent."""

    file: BootstrapFile
    content: str | None

    @property
    def size_bytes(self) -> int:
        return len(self.content.encode("utf-8")) if self.content is not None else 0


@dataclass(frozen=True, slots=True)
class AgentDetails:
    """Everything ``agent show`` reports."""

    summary: AgentSummary
    files: tuple[BootstrapFileContent, ...]
    """Every bootstrap file in prompt order, present or not."""
    daily_log_dates: tuple[date, ...]
    """Dates of the daily logs, oldest first."""


@dataclass(frozen=True, slots=True)
class RehatchResult:
    """What a rehatch did."""

    agent: str
    reset: tuple[BootstrapFile, ...]
    kept: tuple[str, ...]
    """Files and directories left untouched (``USER.md``, ``memory/``, ``skills/`` …)."""
    archive: Path | None
    """Where the replaced files were copied; None when none differed from the template."""


def _io_error(agent: str, path: Path, exc: OSError) -> WorkspaceIOError:
    return WorkspaceIOError(agent, str(path), exc.strerror or str(exc))


def _write_templates(directory: Path, name: str, files: Iterable[BootstrapFile]) -> None:
    for file in files:
        (directory / file.value).write_text(default_template(file, name), encoding="utf-8")


def create_agent(name: str, *, home: Path | None = None) -> AgentSummary:
    """Create the workspace of agent ``name`` with every bootstrap template.

    Raises:
        InvalidAgentNameError: the name breaks the rules.
        AgentExistsError: the workspace already exists.
        WorkspaceIOError: the file system refused.
    """
    target = agent_dir(validate_agent_name(name), home)
    if target.exists():
        raise AgentExistsError(name)
    root = target.parent
    staging = root / f".creating-{name}-{uuid.uuid4().hex[:8]}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging.mkdir()
        _write_templates(staging, name, BOOTSTRAP_FILES)
        (staging / MEMORY_DIRNAME).mkdir()
        (staging / SKILLS_DIRNAME).mkdir()
        try:
            staging.rename(target)
        except OSError as exc:
            if target.exists():
                raise AgentExistsError(name) from exc
            raise
    except OSError as exc:
        raise _io_error(name, target, exc) from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return _summary(name, target)


def ensure_agent(name: str, *, home: Path | None = None) -> AgentSummary:
    """The agent's summary, creating its workspace first when it does not exist."""
    target = agent_dir(name, home)
    if not target.is_dir():
        try:
            return create_agent(name, home=home)
        except AgentExistsError:
            pass  # created concurrently by someone else: theirs is as good as ours
    return _summary(name, target)


def agent_exists(name: str, *, home: Path | None = None) -> bool:
    """True when agent ``name`` (validated) has a workspace directory."""
    return agent_dir(name, home).is_dir()


def list_agents(*, home: Path | None = None) -> tuple[AgentSummary, ...]:
    """Every agent workspace, sorted by name.

    Directories whose names are not safe agent names (hidden ones, staging directories)
    are ignored; one created by hand with an older, looser name (``My.Agent``) is listed.
    """
    root = agents_root(home)
    if not root.is_dir():
        return ()
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir() and is_addressable(p.name))
    except OSError as exc:
        raise _io_error("*", root, exc) from exc
    return tuple(_summary(p.name, p) for p in entries)


def show_agent(name: str, *, home: Path | None = None) -> AgentDetails:
    """The agent's summary, every bootstrap file's content and its daily log dates.

    Raises:
        AgentNotFoundError: no such workspace.
    """
    directory = _existing(name, home)
    files = tuple(
        BootstrapFileContent(file, _read_optional(directory / file.value))
        for file in BOOTSTRAP_FILES
    )
    return AgentDetails(_summary(name, directory), files, _daily_log_dates(directory))


def delete_agent(name: str, *, home: Path | None = None) -> None:
    """Delete the agent's workspace and everything in it.

    Raises:
        ProtectedAgentError: ``name`` is ``default``.
        AgentNotFoundError: no such workspace.
    """
    if name in PROTECTED_AGENTS:
        raise ProtectedAgentError(name)
    directory = _existing(name, home)
    doomed = directory.parent / f".deleting-{name}-{uuid.uuid4().hex[:8]}"
    try:
        directory.rename(doomed)
        shutil.rmtree(doomed)
    except OSError as exc:
        raise _io_error(name, directory, exc) from exc


def rehatch_agent(
    name: str, *, full: bool = False, now: datetime | None = None, home: Path | None = None
) -> RehatchResult:
    """Give the agent a fresh start: restore its bootstrap files from the templates.

    Resets :data:`REHATCH_RESETS`; with ``full=True`` also :data:`REHATCH_KEEPS`. Always
    keeps ``memory/`` (daily logs), ``skills/``, ``archive/`` and any other file. Replaced
    files that differ from their template are first copied to
    ``archive/rehatch-<UTC time>/``. ``now`` names that directory (defaults to the clock).

    Raises:
        AgentNotFoundError: no such workspace.
    """
    directory = _existing(name, home)
    reset = REHATCH_RESETS + (REHATCH_KEEPS if full else ())
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    archive = directory / ARCHIVE_DIRNAME / f"rehatch-{moment:%Y%m%dT%H%M%S%fZ}"
    archived = False
    try:
        for file in reset:
            current = _read_optional(directory / file.value)
            if current is not None and current != default_template(file, name):
                archive.mkdir(parents=True, exist_ok=True)
                (archive / file.value).write_text(current, encoding="utf-8")
                archived = True
        _write_templates(directory, name, reset)
        (directory / MEMORY_DIRNAME).mkdir(exist_ok=True)
        (directory / SKILLS_DIRNAME).mkdir(exist_ok=True)
        kept = sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in directory.iterdir()
            if p.name not in {f.value for f in reset}
        )
    except OSError as exc:
        raise _io_error(name, directory, exc) from exc
    return RehatchResult(name, reset, tuple(kept), archive if archived else None)


def _existing(name: str, home: Path | None) -> Path:
    directory = agent_dir(name, home)
    if not directory.is_dir():
        raise AgentNotFoundError(name)
    return directory


def _read_optional(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # absent, a directory, unreadable: the file does not count
        return None


def _summary(name: str, directory: Path) -> AgentSummary:
    present = tuple(
        f for f in BOOTSTRAP_FILES if (_read_optional(directory / f.value) or "").strip()
    )
    skills_dir = directory / SKILLS_DIRNAME
    skills: tuple[str, ...] = ()
    if skills_dir.is_dir():
        skills = tuple(sorted(p.name for p in skills_dir.iterdir() if (p / "SKILL.md").is_file()))
    return AgentSummary(
        name=name,
        path=directory,
        files=present,
        skills=skills,
        daily_logs=len(_daily_log_dates(directory)),
        hatched=BootstrapFile.BOOTSTRAP not in present,
    )


def _daily_log_dates(directory: Path) -> tuple[date, ...]:
    memory = directory / MEMORY_DIRNAME
    if not memory.is_dir():
        return ()
    found: list[date] = []
    for path in memory.glob("*.md"):
        if not _DAILY_LOG_NAME.fullmatch(path.stem):
            continue
        try:
            found.append(date.fromisoformat(path.stem))
        except ValueError:
            continue
    return tuple(sorted(found))
