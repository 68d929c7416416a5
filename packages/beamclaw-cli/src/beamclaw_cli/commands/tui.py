"""``beamclaw tui``: chat with an agent in the terminal (bare ``beamclaw`` on a TTY too)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import typer

from beamclaw_cli.errors import UsageError

BACKENDS = ("auto", "daemon", "embedded")


def needs_terminal() -> bool:
    return not (sys.stdin.isatty() and sys.stdout.isatty())


def launch(config: Path | None = None, agent: str | None = None, backend: str = "auto") -> None:
    """Run the TUI (raises :class:`UsageError` without a terminal or with a bad backend)."""
    if backend not in BACKENDS:
        raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if needs_terminal():
        raise UsageError("the TUI needs a terminal (stdin and stdout must be a TTY)")
    from beamclaw_cli.tui.run import run_tui

    mode: Literal["auto", "daemon", "embedded"] = backend  # type: ignore[assignment]
    import asyncio

    asyncio.run(run_tui(config, agent, mode))


def register(app: typer.Typer) -> None:
    @app.command("tui")
    def tui(
        agent: str | None = typer.Option(
            None, "--agent", "-a", help="Agent to talk to (default: [core] default_agent)."
        ),
        config: Path | None = typer.Option(
            None, "--config", "-c", help="Config file.", exists=True, dir_okay=False
        ),
        backend: str = typer.Option(
            "auto",
            "--backend",
            help="auto: the running daemon's /ws if it answers, else in-process; "
            "daemon or embedded to force one.",
        ),
    ) -> None:
        """Chat with an agent in the terminal: streaming, tools, approvals, history."""
        launch(config, agent, backend)
