"""``beamclaw ui``: the address of the running gateway's web page, with its token.

The token travels in the address *fragment* (``/ui/#token=...``): browsers never send a
fragment to a server, and the page moves it into the tab's sessionStorage and removes it
from the address bar at once. It is printed only on this terminal, never logged.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import typer

from beamclaw_cli.daemon import Endpoint, fetch_json
from beamclaw_cli.errors import GatewayUnreachableError


def ui_url(base_url: str, token: str | None) -> str:
    """``<base_url>/ui/``, with ``#token=<token>`` (URL-encoded) when there is one."""
    url = f"{base_url.rstrip('/')}/ui/"
    return f"{url}#token={quote(token, safe='')}" if token else url


def register(app: typer.Typer) -> None:
    @app.command("ui")
    def ui(
        config: Path | None = typer.Option(
            None, "--config", "-c", help="Config file.", exists=True, dir_okay=False
        ),
        open_browser: bool = typer.Option(
            False, "--open", help="Open the page in the default browser as well."
        ),
    ) -> None:
        """Print (and with --open, open) the web page of the running gateway, signed in."""
        from beamclaw_gateway import effective_port, load_config

        cfg = load_config(config).settings
        endpoint = Endpoint(cfg.gateway.http.host, effective_port(cfg))
        secret = cfg.gateway.http.token
        url = ui_url(endpoint.base_url, secret.resolve("the gateway token") if secret else None)
        typer.echo(url)
        try:
            fetch_json(endpoint, "/health")
        except (GatewayUnreachableError, ValueError):
            typer.echo(
                f"(no gateway answers at {endpoint.base_url} yet: start it with "
                "`beamclaw start` or `make run`; the page keeps trying)",
                err=True,
            )
        if open_browser:
            import webbrowser

            if not webbrowser.open(url):
                typer.echo("could not open a browser: open the address above", err=True)
