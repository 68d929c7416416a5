"""``beamclaw approvals list|revoke``: standing ``/always`` grants per agent and person.

``list`` reads the database directly (``[memory] database_url`` or
``$BEAMCLAW_HOME/beamclaw.db``), the grants' truth, whether or not a daemon runs.
``revoke`` goes through the running gateway's ``DELETE /api/approvals/always/...`` when
one holds the home lock (its sessions read grants from memory, so it must forget them
itself), and straight to the database otherwise, as ``beamclaw sessions delete`` does.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import typer

from beamclaw_cli.errors import BeamclawCliError, UsageError
from beamclaw_cli.home_access import gateway_delete, with_database
from beamclaw_cli.output import local_time

if TYPE_CHECKING:
    from beamclaw_core.approvals import AlwaysAllowlist, AlwaysGrant
    from beamclaw_memory import Database

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)


class GrantNotFoundError(BeamclawCliError):
    pass


def _with_grants(config: Path | None, action: Callable[[AlwaysAllowlist], Awaitable[T]]) -> T:
    async def on(database: Database) -> T:
        import time

        from beamclaw_core.approvals import AlwaysAllowlist

        return await action(AlwaysAllowlist(database, time.time))

    return with_database(config, on)


def grant_json(grant: AlwaysGrant) -> dict[str, Any]:
    return {
        "agent_id": grant.agent_id,
        "user_id": grant.user_id,
        "tool": grant.tool,
        "granted_at": grant.granted_at,
        "session_id": grant.session_id,
    }


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="List and revoke standing /always tool approvals.", no_args_is_help=True
    )
    app.add_typer(group, name="approvals")

    @group.command("list")
    def list_(
        config: Path | None = _CONFIG,
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
        agent: str | None = typer.Option(None, "--agent", "-a", help="Only this agent's."),
        user: str | None = typer.Option(None, "--user", "-u", help="Only this person's."),
    ) -> None:
        """List standing /always grants by agent, person and tool."""

        async def action(grants: AlwaysAllowlist) -> list[AlwaysGrant]:
            return await grants.list(agent_id=agent, user_id=user)

        found = _with_grants(config, action)
        if as_json:
            print(json.dumps([grant_json(g) for g in found], indent=2))
            return
        if not found:
            print("no standing approvals")
            return
        print(f"{'AGENT':<12} {'USER':<24} {'TOOL':<24} {'GRANTED':<19} SESSION")
        for g in found:
            print(
                f"{g.agent_id:<12} {g.user_id:<24} {g.tool:<24} {local_time(g.granted_at):<19} "
                f"{g.session_id or '-'}"
            )

    @group.command("revoke")
    def revoke(
        agent: str = typer.Argument(..., help="Agent id."),
        user: str = typer.Argument(..., help="The person's user id (see `approvals list`)."),
        tool: str | None = typer.Argument(None, help="Tool name (omit with --all)."),
        every: bool = typer.Option(False, "--all", help="Every tool this person granted."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Revoke a standing /always grant; the person is asked again from the next turn."""
        from beamclaw_cli.daemon import running_pid
        from beamclaw_obs import beamclaw_home

        if (tool is None) != every:
            raise UsageError("name one TOOL, or pass --all (not both)")
        pid = running_pid(beamclaw_home())
        if pid is not None:
            revoked = _revoke_via_gateway(config, agent, user, tool, pid)
        else:

            async def action(grants: AlwaysAllowlist) -> int:
                return await grants.revoke(agent, user, tool)

            revoked = _with_grants(config, action)
        what = f"{tool!r}" if tool is not None else "any tool"
        if tool is not None and not revoked:
            raise GrantNotFoundError(f"{user} has no standing approval of {what} for {agent}")
        print(
            f"revoked {revoked} standing approval{'s' if revoked != 1 else ''} of {user} for {agent}"
        )


def _revoke_via_gateway(
    config: Path | None, agent: str, user: str, tool: str | None, pid: int
) -> int:
    """Ask the running gateway to revoke (its sessions hold the grants in memory)."""
    parts = [agent, user] + ([tool] if tool is not None else [])
    path = "/api/approvals/always/" + "/".join(quote(p, safe="") for p in parts)
    response = gateway_delete(config, path, pid)
    if response.status_code == 404:
        return 0
    if response.status_code != 200:
        raise BeamclawCliError(
            f"the gateway refused to revoke: HTTP {response.status_code} {response.text[:200]}"
        )
    revoked: int = response.json()["revoked"]
    return revoked
