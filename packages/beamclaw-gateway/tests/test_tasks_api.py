"""``GET /api/tasks``: each agent's ``TASKS.md`` as the web page shows it."""

from __future__ import annotations

import httpx

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_core.workspace import TASKS_FILENAME, agent_dir, write_tasks
from beamclaw_obs import beamclaw_home

from .conftest import live_gateway

TASKS = "# TASKS.md\n<!-- - [ ] an example -->\n- [ ] Water the plants [scheduled:j1]\n- [x] Book the dentist\n"


async def test_tasks_are_listed_from_the_agents_workspaces() -> None:
    provider = ScriptedProvider([Reply("x")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        assert (await c.get("/api/tasks")).json() == {"tasks": []}, "no TASKS.md yet"
        write_tasks(agent_dir("default", beamclaw_home()) / TASKS_FILENAME, TASKS)
        listed = (await c.get("/api/tasks")).json()["tasks"]
        assert listed == [
            {
                "agent_id": "default",
                "text": "Water the plants",
                "done": False,
                "schedule_id": "j1",
                "line": 3,
            },
            {
                "agent_id": "default",
                "text": "Book the dentist",
                "done": True,
                "schedule_id": None,
                "line": 4,
            },
        ]
        only_open = (await c.get("/api/tasks?open=true")).json()["tasks"]
        assert [t["text"] for t in only_open] == ["Water the plants"]
        unknown = await c.get("/api/tasks?agent_id=nobody")
        assert unknown.status_code == 404
        assert unknown.json()["error"]["param"] == "agent_id"
