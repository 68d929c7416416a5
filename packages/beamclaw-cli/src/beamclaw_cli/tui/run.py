"""Start the TUI: load the configuration, open the conversation (daemon or embedded),
run the app.

Backend errors at start (the daemon refuses the WebSocket, the home is locked by a
daemon that does not answer, the database is unreachable) propagate *before* the screen
is taken over, so they print as the CLI's usual one-line error.
"""

from __future__ import annotations

from pathlib import Path

from beamclaw_cli.daemon import Endpoint
from beamclaw_cli.tui.backend import BackendMode, agent_model, choose_backend, history_path
from beamclaw_cli.tui.chat import TuiChat, open_daemon, open_embedded
from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import StatusLine


async def run_tui(config_path: Path | None, agent: str | None, mode: BackendMode) -> None:
    """Run the TUI until the user quits; the backend is always closed afterwards."""
    from beamclaw_cli.tui.app import BeamclawTui
    from beamclaw_core.store import local_user_id
    from beamclaw_gateway import effective_port, load_config
    from beamclaw_obs import beamclaw_home, ensure_home

    cfg = load_config(config_path).settings
    home = ensure_home(beamclaw_home())
    endpoint = Endpoint(cfg.gateway.http.host, effective_port(cfg))
    choice = choose_backend(mode, endpoint)
    agent_id = agent or cfg.core.default_agent
    user_id = local_user_id()
    backend: TuiChat
    if choice.mode == "daemon":
        token_secret = cfg.gateway.http.token
        token = token_secret.resolve("the gateway token") if token_secret is not None else None
        backend = await open_daemon(endpoint, agent=agent_id, user_id=user_id, token=token)
    else:
        backend = await open_embedded(cfg, agent=agent_id, user_id=user_id, home=home)
    try:
        status = StatusLine(
            agent=agent_id, model=agent_model(cfg, agent_id), backend=backend.description
        )
        banner = f"BeamClaw — {backend.description} ({choice.reason}). /help for keys."
        app = BeamclawTui(backend, InputHistory(history_path(home)), status, banner)
        await app.run_async()
        if app.return_code not in (None, 0):
            from beamclaw_cli.errors import BeamclawCliError

            raise BeamclawCliError(f"the TUI stopped with an error (exit {app.return_code})")
    finally:
        await backend.close()
