"""``beamclaw mcp list|tools|call|serve``: the MCP servers BeamClaw uses, and BeamClaw as one.

``mcp list`` shows the live status from a running gateway (its ``/health``) when one is
reachable; otherwise — and always for ``tools`` and ``call`` — the configured servers are
started right here from ``[mcp]`` (only the one asked for, when a server is named), given
``--wait`` seconds to connect, used, and stopped. Exit code 1 when a call fails or the
tool reports an error.

``mcp serve`` runs the whole agent system in this process and exposes its conversations
and approvals as an MCP server: on stdin/stdout by default, or over streamable HTTP
(``--http``, path ``/mcp``; loopback only unless ``--token-env`` names the variable that
holds a bearer token). It holds the home lock, like ``beamclaw serve`` — unless a gateway
holds it already: then it attaches to that gateway and serves the same sessions and
approvals through its API (:mod:`beamclaw_cli.remote`).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from beamclaw_cli.daemon import Endpoint, fetch_json
from beamclaw_cli.errors import BeamclawCliError, GatewayUnreachableError, UsageError

if TYPE_CHECKING:  # heavy packages load inside the commands (keeps `beamclaw --help` fast)
    from beamclaw_mcp import MCPManager, MCPSettings, ServerStatus

_CONFIG_OPTION = typer.Option(
    None,
    "--config",
    "-c",
    help="Config file (default: lookup order).",
    exists=True,
    dir_okay=False,
)
_WAIT_OPTION = typer.Option(30.0, "--wait", help="Seconds to wait for servers to connect.")
_JSON_OPTION = typer.Option(False, "--json", help="Machine-readable output.")


def _mcp_settings(config: Path | None, server: str | None = None) -> tuple[MCPSettings, Any]:
    from beamclaw_gateway import load_config

    cfg = load_config(config).settings
    mcp: MCPSettings = cfg.mcp
    if server is not None:
        entry = mcp.server(server)
        if entry is None:
            known = ", ".join(s.name for s in mcp.servers) or "none configured"
            raise UsageError(f"no MCP server {server!r} (known: {known})")
        mcp = mcp.model_copy(update={"servers": [entry]})
    return mcp, cfg


def _daemon_statuses(cfg: Any) -> list[dict[str, Any]] | None:
    """Server statuses from a running gateway's ``/health``, or None when none answers."""
    from beamclaw_gateway import effective_port

    endpoint = Endpoint(cfg.gateway.http.host, effective_port(cfg))
    try:
        code, body = fetch_json(endpoint, "/health", timeout=1.5)
    except (GatewayUnreachableError, ValueError):
        return None
    if code != 200 or not isinstance(body, dict):
        return None
    component = body.get("components", {}).get("mcp")
    if not isinstance(component, dict) or not isinstance(component.get("servers"), dict):
        return None
    servers: dict[str, dict[str, Any]] = component["servers"]
    return list(servers.values())


async def _with_manager(settings: MCPSettings, wait: float, action: Any) -> Any:
    from beamclaw_mcp import MCPManager

    manager = MCPManager(settings)
    manager.start()
    try:
        await manager.wait_settled(wait)
        return await action(manager)
    finally:
        await manager.stop()


def _print_statuses(rows: list[dict[str, Any]], source: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"source": source, "servers": rows}, indent=2))
        return
    if not rows:
        print("no MCP servers configured ([[mcp.servers]] in beamclaw.toml)")
        return
    print(f"{'NAME':<16} {'STATE':<11} {'TRANSPORT':<16} {'TOOLS':>5} {'RESTARTS':>8}  ERROR")
    for r in rows:
        error = (r.get("last_error") or "")[:100] if r.get("state") != "up" else ""
        print(
            f"{r['name']:<16} {r['state']:<11} {r['transport']:<16} {r['tool_count']:>5} "
            f"{r['restarts']:>8}  {error}"
        )
    print(f"(source: {source})")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="mcp",
        help="Inspect and call the configured MCP servers; serve BeamClaw over MCP.",
        no_args_is_help=True,
    )
    app.add_typer(group, name="mcp")

    @group.command("list")
    def list_command(
        config: Path | None = _CONFIG_OPTION,
        wait: float = _WAIT_OPTION,
        as_json: bool = _JSON_OPTION,
        local: bool = typer.Option(
            False, "--local", help="Start the servers here even if a gateway is running."
        ),
    ) -> None:
        """Servers with their status, transport, tool count, restarts and last error."""
        settings, cfg = _mcp_settings(config)
        rows = None if local else _daemon_statuses(cfg)
        if rows is not None:
            _print_statuses(rows, "running gateway", as_json)
            return

        async def statuses(manager: MCPManager) -> list[ServerStatus]:
            return manager.status()

        found: list[ServerStatus] = asyncio.run(_with_manager(settings, wait, statuses))
        _print_statuses([st.as_dict() for st in found], "started from config", as_json)

    @group.command("tools")
    def tools_command(
        server: str | None = typer.Argument(None, help="Only this server's tools."),
        config: Path | None = _CONFIG_OPTION,
        wait: float = _WAIT_OPTION,
        as_json: bool = _JSON_OPTION,
    ) -> None:
        """The tools the model sees (exposed name, server, description)."""
        settings, _cfg = _mcp_settings(config, server)

        async def collect(manager: MCPManager) -> tuple[list[Any], list[ServerStatus]]:
            return [t.definition for t in manager.tools()], manager.status()

        definitions, statuses = asyncio.run(_with_manager(settings, wait, collect))
        if as_json:
            print(json.dumps([d.model_dump(mode="json") for d in definitions], indent=2))
        else:
            for d in definitions:
                summary = (d.description.strip().splitlines() or [""])[0][:80]
                print(f"{d.name:<32} {d.source[4:]:<14} {summary}")
        down = [st for st in statuses if st.state.value != "up"]
        for st in down:
            typer.echo(f"server {st.name} is {st.state.value}: {st.last_error or ''}", err=True)
        if server is not None and down:
            raise typer.Exit(1)

    @group.command("call")
    def call_command(
        server: str = typer.Argument(..., help="Server name."),
        tool: str = typer.Argument(..., help="Tool name as the server lists it."),
        args: str = typer.Option("{}", "--args", help="Arguments as a JSON object."),
        config: Path | None = _CONFIG_OPTION,
        wait: float = _WAIT_OPTION,
        timeout: float | None = typer.Option(None, "--timeout", help="Call timeout (s)."),
        as_json: bool = _JSON_OPTION,
    ) -> None:
        """Call one tool and print its result (exit 1 when it fails)."""
        try:
            arguments = json.loads(args)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc.msg} at position {exc.pos}") from exc
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
        settings, _cfg = _mcp_settings(config, server)
        from beamclaw_mcp import BeamclawMCPError

        async def call(manager: MCPManager) -> Any:
            return await manager.call_tool(server, tool, arguments, timeout_seconds=timeout)

        try:
            output = asyncio.run(_with_manager(settings, wait, call))
        except BeamclawMCPError as exc:
            raise BeamclawCliError(str(exc)) from exc
        if as_json:
            print(json.dumps(output.model_dump(mode="json"), indent=2))
        else:
            print(output.content)
        if output.is_error:
            raise typer.Exit(1)

    @group.command("serve")
    def serve_command(
        config: Path | None = _CONFIG_OPTION,
        http: bool = typer.Option(False, "--http", help="Streamable HTTP instead of stdio."),
        host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address."),
        port: int = typer.Option(18801, "--port", help="HTTP port."),
        token_env: str | None = typer.Option(
            None, "--token-env", help="Environment variable holding the HTTP bearer token."
        ),
    ) -> None:
        """Serve BeamClaw's conversations and approvals to MCP clients (stdio by default)."""
        from beamclaw_cli.daemon import home_lock, running_pid
        from beamclaw_gateway import load_config, run_mcp_server
        from beamclaw_obs import beamclaw_home, ensure_home

        token: str | None = None
        if token_env is not None:
            token = os.environ.get(token_env) or None
            if token is None:
                raise UsageError(f"--token-env {token_env}: the variable is not set or empty")
        if token is not None and not http:
            raise UsageError("--token-env only applies to --http")
        cfg = load_config(config).settings
        home = ensure_home(beamclaw_home())
        pid = running_pid(home)
        if pid is not None:
            typer.echo(f"attached to the running gateway (pid {pid})", err=True)
            asyncio.run(_attached(cfg, http=http, host=host, port=port, token=token))
            return
        with home_lock(home):
            if http:
                typer.echo(f"BeamClaw MCP server on http://{host}:{port}/mcp", err=True)
            asyncio.run(
                run_mcp_server(cfg, http=http, host=host, port=port, token=token, home=home)
            )


async def _attached(cfg: Any, *, http: bool, host: str, port: int, token: str | None) -> None:
    """``mcp serve`` beside a running gateway: its sessions through its API."""
    from beamclaw_cli.remote import RemoteConversation
    from beamclaw_gateway import effective_port, serve_conversation

    endpoint = Endpoint(cfg.gateway.http.host, effective_port(cfg))
    secret = cfg.gateway.http.token
    conversation = RemoteConversation(
        endpoint.base_url, token=secret.resolve("the gateway token") if secret else None
    )
    try:
        await serve_conversation(
            conversation,
            default_agent=cfg.core.default_agent,
            http=http,
            host=host,
            port=port,
            token=token,
        )
    finally:
        await conversation.aclose()
