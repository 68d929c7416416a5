"""``beamclaw integrations list|connect|revoke``: the person's read-only accounts.

Works on the encrypted token store under ``$BEAMCLAW_HOME`` (shared with a running
gateway under a file lock), whether or not a gateway runs. ``connect google`` prints the
consent link (the gateway's callback finishes it, so the gateway must be reachable at
``[tools.integrations] redirect_base_url``); ``connect notion|slack`` reads the token at a
hidden prompt (or one line of standard input when it is not a terminal), checks it with
the service and stores it. The token is never echoed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from beamclaw_cli.errors import BeamclawCliError

if TYPE_CHECKING:
    from beamclaw_tools.integrations import Integrations, Service

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)
_JSON = typer.Option(False, "--json", help="Machine-readable output.")


class IntegrationsOffError(BeamclawCliError):
    pass


def _hub(config: Path | None) -> Integrations:
    from beamclaw_obs import read_section
    from beamclaw_tools.integrations import Integrations, IntegrationsSettings

    settings = read_section(("tools", "integrations"), IntegrationsSettings, config)
    if not settings.enabled:
        raise IntegrationsOffError(
            "integrations are off: set [tools.integrations] enabled = true (docs/integrations.md)"
        )
    return Integrations(settings)


def _service(name: str) -> Service:
    from beamclaw_tools.integrations import service_named

    service = service_named(name)
    if service is None:
        raise BeamclawCliError(
            f"unknown service {name!r}: google (gmail, calendar), notion or slack"
        )
    return service


def _run(work: Coroutine[Any, Any, T]) -> T:
    import asyncio  # not at import: `beamclaw status` and friends load this module

    return asyncio.run(work)


def _read_token(service: str) -> str:
    if sys.stdin.isatty():
        return str(typer.prompt(f"{service} token", hide_input=True))
    return sys.stdin.readline().strip()


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Read-only Gmail, Calendar, Notion and Slack access (docs/integrations.md).",
        no_args_is_help=True,
    )
    app.add_typer(group, name="integrations")

    @group.command("list")
    def list_(config: Path | None = _CONFIG, as_json: bool = _JSON) -> None:
        """Which services are connected (never shows a token)."""
        connections = _hub(config).connections()
        if as_json:
            rows = [
                {
                    "service": c.service,
                    "connected": c.connected,
                    "account": c.account,
                    "expires_at": c.expires_at,
                    "refreshable": c.refreshable,
                    "scopes": list(c.scopes),
                }
                for c in connections
            ]
            typer.echo(json.dumps(rows, indent=2))
            return
        for c in connections:
            if not c.connected:
                typer.echo(f"{c.service:<8} not connected")
                continue
            detail = f" as {c.account}" if c.account else ""
            if c.expires_at is not None:
                until = datetime.fromtimestamp(c.expires_at).astimezone().strftime("%Y-%m-%d %H:%M")
                detail += f", access token until {until}"
                detail += " (refreshed automatically)" if c.refreshable else ""
            typer.echo(f"{c.service:<8} connected{detail}")

    @group.command("connect")
    def connect(
        service: str = typer.Argument(..., help="google (gmail, calendar), notion or slack."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Connect a service: print Google's consent link, or read a pasted token."""
        from beamclaw_tools.integrations import IntegrationError

        hub = _hub(config)
        chosen = _service(service)
        if chosen == "google":
            try:
                typer.echo(hub.connect_instructions("google"))
            except IntegrationError as e:
                raise BeamclawCliError(str(e)) from e
            typer.echo(
                "The gateway must be running and reachable at "
                f"{hub.settings.redirect_base_url} for the consent to complete."
            )
            return
        from beamclaw_tools.integrations.pasted import HOW_TO_GET

        typer.echo(HOW_TO_GET[chosen], err=True)
        token = _read_token(chosen)
        try:
            stored = _run(hub.save_pasted(chosen, token))
        except IntegrationError as e:
            raise BeamclawCliError(str(e)) from e
        who = f" ({stored.account})" if stored.account else ""
        typer.echo(f"{chosen} connected{who}; the token is stored encrypted.")

    @group.command("revoke")
    def revoke(
        service: str = typer.Argument(..., help="google, notion or slack."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Revoke the grant at the service (Google, Slack) and forget the token."""
        from beamclaw_tools.integrations import IntegrationError

        hub = _hub(config)
        chosen = _service(service)
        try:
            outcome = _run(hub.revoke(chosen))
        except IntegrationError as e:
            raise BeamclawCliError(str(e)) from e
        if not outcome.removed:
            typer.echo(f"{chosen} was not connected")
            return
        remote = {
            "confirmed": f"{chosen} confirmed the revocation",
            "failed": f"{chosen} did not confirm the revocation: revoke the app in its settings",
            "not supported": f"remove the integration in {chosen}'s settings to revoke it there",
        }[outcome.remote]
        typer.echo(f"{chosen} disconnected; {remote}")
