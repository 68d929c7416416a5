"""``GET /api/tasks``: each agent's ``TASKS.md`` (issue 26), token-guarded.

Read from the agents' workspaces as they are on disk (the agent edits its own list; the
scheduler tool links tasks to jobs). An agent without a ``TASKS.md`` has no task; an
unknown ``agent_id`` is 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel

from beamclaw_core.workspace import TASKS_FILENAME, agent_dir, parse_tasks, read_tasks
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of

router = APIRouter(prefix="/api", tags=["tasks"], dependencies=[Depends(require_token)])


class TaskOut(BaseModel):
    agent_id: str
    text: str
    done: bool
    schedule_id: str | None
    """The job the task is linked to (``[scheduled:<id>]``)."""
    line: int
    """1-based line in the agent's ``TASKS.md``."""


class TaskList(BaseModel):
    tasks: list[TaskOut]
    """Per agent in catalog order, in file order; open and done."""


@router.get("/tasks", response_model=TaskList, responses=error_responses(401, 404, 429))
async def list_tasks(
    request: Request,
    agent_id: str | None = Query(default=None, min_length=1, max_length=128),
    open_only: bool = Query(default=False, alias="open"),
) -> TaskList:
    services = services_of(request)
    agents = services.agents.ids()
    if agent_id is not None:
        if agent_id not in agents:
            raise ApiError(404, f"no agent {agent_id!r}", code="agent_not_found", param="agent_id")
        agents = [agent_id]
    home = services.runtime.home
    out: list[TaskOut] = []
    for agent in agents:
        try:
            text = read_tasks(agent_dir(agent, home) / TASKS_FILENAME)
        except (OSError, UnicodeDecodeError):
            text = ""
        out.extend(
            TaskOut(
                agent_id=agent,
                text=t.text,
                done=t.done,
                schedule_id=t.schedule_id,
                line=t.line + 1,
            )
            for t in parse_tasks(text)
            if not (open_only and t.done)
        )
    return TaskList(tasks=out)
