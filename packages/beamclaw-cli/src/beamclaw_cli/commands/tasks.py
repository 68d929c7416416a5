"""``beamclaw tasks``: the agents' own task lists (``TASKS.md`` in each workspace).

Read from the workspaces on disk, so it works with or without a running gateway; the
agent keeps the list itself (and its heartbeat reviews it), the CLI only shows it.
"""

from __future__ import annotations

import json

import typer

from beamclaw_cli.errors import BeamclawCliError


def register(app: typer.Typer) -> None:
    @app.command("tasks")
    def tasks(
        agent: str | None = typer.Option(None, "--agent", help="Only this agent's tasks."),
        show_all: bool = typer.Option(False, "--all", help="Done tasks too."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Each agent's TASKS.md: open tasks (and done ones with --all), with the
        scheduled job each is linked to."""
        from beamclaw_core.workspace import (
            TASKS_FILENAME,
            agent_dir,
            list_agents,
            parse_tasks,
            read_tasks,
        )

        names = [a.name for a in list_agents()]
        if agent is not None:
            if agent not in names:
                raise BeamclawCliError(f"no agent {agent!r} (see beamclaw agent list)")
            names = [agent]
        rows: list[dict[str, object]] = []
        for name in names:
            for task in parse_tasks(read_tasks(agent_dir(name) / TASKS_FILENAME)):
                if show_all or not task.done:
                    rows.append({"agent_id": name, **task.view()})
        if as_json:
            print(json.dumps(rows, indent=2))
            return
        if not rows:
            print("no open tasks" if not show_all else "no tasks")
            return
        for row in rows:
            box = "x" if row["done"] else " "
            linked = f"  (scheduled as {row['schedule_id']})" if row["schedule_id"] else ""
            print(f"{row['agent_id']:<16} [{box}] {row['text']}{linked}")
