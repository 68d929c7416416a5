"""``beamclaw agent create|list|show|delete|rehatch``: agent workspaces.

Like every other entry point (gateway, TUI), ``list`` and ``show`` first ensure the
configured default agent (``[core] default_agent``) exists, so a fresh home lists it.
"""

from __future__ import annotations

import json

import typer


def ensure_default_agent() -> str:
    """Create the configured default agent's workspace when missing; returns its name."""
    from beamclaw_cli.light_config import default_agent
    from beamclaw_core.workspace import ensure_agent

    name = default_agent()
    ensure_agent(name)
    return name


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Manage agent workspaces ($BEAMCLAW_HOME/agents/<name>).", no_args_is_help=True
    )
    app.add_typer(group, name="agent")

    @group.command("create")
    def create(name: str) -> None:
        """Create an agent workspace with the default bootstrap files."""
        from beamclaw_core.workspace import create_agent

        summary = create_agent(name)
        print(f"created agent {summary.name} at {summary.path}")

    @group.command("list")
    def list_(
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """List agents."""
        from beamclaw_core.workspace import list_agents

        ensure_default_agent()
        agents = list_agents()
        if as_json:
            print(
                json.dumps(
                    [
                        {
                            "name": a.name,
                            "path": str(a.path),
                            "skills": list(a.skills),
                            "daily_logs": a.daily_logs,
                            "hatched": a.hatched,
                        }
                        for a in agents
                    ]
                )
            )
            return
        for a in agents:
            print(f"{a.name:<24} {len(a.skills)} skills, {a.daily_logs} daily logs  {a.path}")

    @group.command("show")
    def show(
        name: str,
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Show an agent's provider, model, autonomy and bootstrap files."""
        from beamclaw_core import agent_profile
        from beamclaw_core.workspace import show_agent
        from beamclaw_gateway import load_config

        ensure_default_agent()
        details = show_agent(name)
        cfg = load_config().settings
        profile = agent_profile(cfg.core, cfg.agents, details.summary.name)
        model = profile.model(cfg.core)
        if as_json:
            print(
                json.dumps(
                    {
                        "name": details.summary.name,
                        "path": str(details.summary.path),
                        "provider": profile.provider,
                        "model": model,
                        "autonomy_level": profile.autonomy.value,
                        "files": {f.file.value: f.content for f in details.files},
                        "skills": list(details.summary.skills),
                        "daily_logs": [d.isoformat() for d in details.daily_log_dates],
                    }
                )
            )
            return
        print(f"# agent {details.summary.name} ({details.summary.path})")
        print(
            f"provider {profile.provider}, model {model}, autonomy {profile.autonomy.value}"
            + ("" if details.summary.name in cfg.agents else " (the [core] defaults)")
        )
        for f in details.files:
            print(f"\n## {f.file.value}")
            print(f.content if f.content is not None else "(missing)")

    @group.command("delete")
    def delete(
        name: str,
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    ) -> None:
        """Delete an agent workspace (the default agent is protected)."""
        if not yes:
            typer.confirm(f"Delete agent {name} and all its files?", abort=True)
        from beamclaw_core.workspace import delete_agent

        delete_agent(name)
        print(f"deleted agent {name}")

    @group.command("rehatch")
    def rehatch(name: str) -> None:
        """Reset an agent's bootstrap files to the templates, keeping skills and memory."""
        from beamclaw_core.workspace import rehatch_agent

        result = rehatch_agent(name)
        reset = ", ".join(f.value for f in result.reset)
        print(f"rehatched {result.agent}: reset {reset}; kept {', '.join(result.kept)}")
