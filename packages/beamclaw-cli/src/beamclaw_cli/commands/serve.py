"""``beamclaw serve``: run the gateway in the foreground."""

from __future__ import annotations

import os
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        config: Path | None = typer.Option(
            None,
            "--config",
            "-c",
            help="Config file (default: lookup order).",
            exists=True,
            dir_okay=False,
        ),
        host: str | None = typer.Option(None, "--host", help="Override [gateway.http] host."),
        port: int | None = typer.Option(None, "--port", help="Override the port."),
    ) -> None:
        """Run the gateway in the foreground (Ctrl-C stops it cleanly)."""
        from beamclaw_gateway.gc_tuning import pause_for_startup

        pause_for_startup()  # on again once the runtime has started
        from beamclaw_cli.daemon import home_lock
        from beamclaw_gateway import load_config, serve
        from beamclaw_obs import beamclaw_home, ensure_home

        loaded = load_config(config)
        cfg = loaded.settings
        if host is not None:
            cfg.gateway.http.host = host
        if port is not None:
            cfg.gateway.http.port = port
            os.environ.pop("BEAMCLAW_PORT", None)
        print(f"config: {loaded.source}", flush=True)
        home = ensure_home(beamclaw_home())
        with home_lock(home):
            serve(cfg)
