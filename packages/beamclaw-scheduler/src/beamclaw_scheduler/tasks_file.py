"""Where an agent's ``TASKS.md`` is, and its open tasks as the heartbeat reads them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from beamclaw_core.workspace import TASKS_FILENAME, Task, open_tasks, read_tasks

if TYPE_CHECKING:  # the package binds this module at import: its ports are the runner's
    from beamclaw_scheduler.ports import SchedulerPorts


def tasks_file(ports: SchedulerPorts, agent_id: str) -> Path:
    """Agent ``agent_id``'s ``TASKS.md``: next to its ``HEARTBEAT.md``, in its workspace."""
    return ports.heartbeat_file(agent_id).with_name(TASKS_FILENAME)


def read_open_tasks(ports: SchedulerPorts, agent_id: str) -> list[Task]:
    """The open tasks of the agent's ``TASKS.md`` (none when it is missing or unreadable)."""
    try:
        return open_tasks(read_tasks(tasks_file(ports, agent_id)))
    except (OSError, UnicodeDecodeError):
        return []
