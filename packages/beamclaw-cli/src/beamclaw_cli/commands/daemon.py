"""``beamclaw start|stop|restart|status``: the gateway as a background daemon."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from beamclaw_cli.daemon import (
    DAEMON_LOG,
    AlreadyRunningError,
    DaemonStartError,
    Endpoint,
    fetch_json,
    running_pid,
    spawn_gateway,
    stop_pid,
    tail,
    wait_ready,
)
from beamclaw_cli.errors import BeamclawCliError, GatewayUnreachableError
from beamclaw_obs import beamclaw_home, ensure_home


def _endpoint(config: Path | None) -> Endpoint:
    """``[gateway.http]`` alone: ``status`` and ``start`` need two keys (the gateway that
    ``start`` launches loads and checks the whole file)."""
    from beamclaw_cli.light_config import gateway_address

    return Endpoint(*gateway_address(config))


def start_daemon(config: Path | None, timeout: float) -> tuple[int, Endpoint]:
    home = ensure_home(beamclaw_home())
    pid = running_pid(home)
    if pid is not None:
        raise AlreadyRunningError(pid, home)
    endpoint = _endpoint(config)
    args = ["--config", str(config)] if config else []
    proc = spawn_gateway(home, args, dict(os.environ))
    try:
        wait_ready(proc, endpoint, timeout)
    except DaemonStartError as exc:
        if proc.poll() is None:
            proc.kill()
        log = tail(home / "logs" / DAEMON_LOG, 5).replace("\n", " | ")
        raise DaemonStartError(f"{exc}; last log lines: {log}") from exc
    return proc.pid, endpoint


def stop_daemon(timeout: float) -> tuple[int | None, bool]:
    home = beamclaw_home()
    pid = running_pid(home)
    if pid is None:
        return None, True
    return pid, stop_pid(pid, home, timeout)


def register(app: typer.Typer) -> None:
    config_opt = typer.Option(
        None, "--config", "-c", help="Config file.", exists=True, dir_okay=False
    )

    @app.command("start")
    def start(
        config: Path | None = config_opt,
        timeout: float = typer.Option(30.0, help="Seconds to wait for /ready."),
    ) -> None:
        """Start the gateway in the background and wait until it is ready."""
        pid, endpoint = start_daemon(config, timeout)
        print(
            f"BeamClaw started (pid {pid}) on {endpoint.base_url}; "
            f"logs in {beamclaw_home() / 'logs'}"
        )

    @app.command("stop")
    def stop(timeout: float = typer.Option(30.0, help="Seconds before SIGKILL.")) -> None:
        """Stop the background gateway gracefully (SIGTERM; SIGKILL after the timeout)."""
        pid, graceful = stop_daemon(timeout)
        if pid is None:
            print("BeamClaw is not running (nothing to stop)")
            return
        print(f"BeamClaw stopped (pid {pid})" + ("" if graceful else " — killed after timeout"))

    @app.command("restart")
    def restart(
        config: Path | None = config_opt,
        timeout: float = typer.Option(30.0, help="Seconds for each of stop and start."),
    ) -> None:
        """Stop (if running) and start the background gateway."""
        stop_daemon(timeout)
        pid, endpoint = start_daemon(config, timeout)
        print(f"BeamClaw restarted (pid {pid}) on {endpoint.base_url}")

    @app.command("status")
    def status(
        config: Path | None = config_opt,
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Show whether the gateway runs, and each component's state (from /health)."""
        endpoint = _endpoint(config)
        pid = running_pid(beamclaw_home())
        try:
            code, body = fetch_json(endpoint, "/health")
        except (GatewayUnreachableError, ValueError) as exc:
            if as_json:
                print(json.dumps({"running": False, "pid": pid, "url": endpoint.base_url}))
            raise BeamclawCliError(f"BeamClaw is not running at {endpoint.base_url}") from exc
        if as_json:
            print(
                json.dumps(
                    {
                        "running": True,
                        "pid": pid,
                        "url": endpoint.base_url,
                        "http_status": code,
                        **body,
                    }
                )
            )
            return
        print(
            f"BeamClaw {body.get('version')} running on {endpoint.base_url}"
            + (f" (pid {pid})" if pid else "")
            + f": {body.get('status')}, up {float(body.get('uptime_seconds', 0)):.0f}s"
        )
        for name, comp in sorted(body.get("components", {}).items()):
            detail = comp.get("detail") or ""
            print(f"  {name:<20} {comp.get('status'):<10} {detail}".rstrip())
            if name == "channels":
                for channel, state in sorted(comp.items()):
                    if isinstance(state, dict) and "run" in state:
                        print(f"    {channel:<18} {_channel_line(state)}")


_CHANNEL_KEYS = ("state", "bot", "updates", "watchdog_restarts", "restarts", "error", "last_error")


def _channel_line(state: dict[str, Any]) -> str:
    """One channel of ``/health``: its run, then what it reports of itself."""
    parts = [f"{state.get('status')}/{state.get('run')}"]
    parts += [f"{k}={state[k]}" for k in _CHANNEL_KEYS if state.get(k) not in (None, "")]
    return " ".join(parts)
