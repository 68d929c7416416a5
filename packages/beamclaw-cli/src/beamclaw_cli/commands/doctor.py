"""``beamclaw doctor``: one ``[ok]``/``[warn]``/``[fail]`` line per check; exit 1 on a fail."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Register ``doctor`` (this module is imported lazily, see ``doctor_command``)."""
    app.command("doctor")(doctor_command)


def doctor_command(
    config: Path | None = typer.Option(None, "--config", "-c", exists=True, dir_okay=False),
    offline: bool = typer.Option(False, "--offline", help="Skip network reachability checks."),
    timeout: float = typer.Option(3.0, help="Seconds per network check."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check the installation, configuration, dependencies and exposure."""
    from beamclaw_cli.doctor_checks import run_checks

    checks = run_checks(config, offline, timeout)
    if as_json:
        print(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        for c in checks:
            print(f"[{c.level}] {c.name}: {c.detail}")
    if any(c.level == "fail" for c in checks):
        raise typer.Exit(1)
