"""Running BeamClaw as an MCP server (``beamclaw mcp serve``): stdio or streamable HTTP.

Embedded, the whole agent system runs in this process (:class:`GatewayRuntime`: database,
memory, tools, MCP servers, providers, core) behind a
:class:`~beamclaw_core.conversation.LocalConversation`; attached (``beamclaw mcp serve``
beside a running gateway), the CLI passes a conversation that reaches the gateway over its
API. The tools are the same (:class:`~beamclaw_gateway.mcp_serve.tools.ConversationTools`).

* stdio (default): the MCP protocol on stdin/stdout; logs go to stderr and
  ``$BEAMCLAW_HOME/logs``; the server ends when the client closes stdin.
* HTTP: the streamable-HTTP app at ``/mcp`` under uvicorn. Like the gateway it binds
  loopback unless a bearer token is set (DESIGN.md section 7).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import uvicorn

from beamclaw_core.conversation import Conversation, LocalConversation
from beamclaw_core.providers import Provider
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_gateway.errors import GatewayConfigError
from beamclaw_gateway.mcp_serve.server import http_app, serve_stdio
from beamclaw_gateway.mcp_serve.tools import ConversationTools
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.server import _GatewayServer, check_port_free, is_loopback  # pyright: ignore[reportPrivateUsage]

DEFAULT_MCP_PORT = 18801


def check_mcp_bind_policy(host: str, token: str | None) -> None:
    """Refuse a non-loopback HTTP bind without a token."""
    if not is_loopback(host) and not token:
        raise GatewayConfigError(
            f"refusing to serve MCP on {host} without a token: pass --token-env VAR "
            "(a variable holding the bearer token) or bind to 127.0.0.1"
        )


async def run_mcp_server(
    config: BeamclawConfig,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = DEFAULT_MCP_PORT,
    token: str | None = None,
    home: Path | None = None,
    provider_factory: Callable[[str], Provider] | None = None,
) -> None:
    """Run the agent system and serve it over MCP until the client (stdio) or a signal
    (HTTP) ends it; the system is stopped cleanly either way."""
    if http:
        check_mcp_bind_policy(host, token)
        check_port_free(host, port)
    runtime = GatewayRuntime(config, home=home, provider_factory=provider_factory)
    try:
        await runtime.start()
        conversation = LocalConversation(lambda: runtime.core)
        try:
            await serve_conversation(
                conversation,
                default_agent=config.core.default_agent,
                http=http,
                host=host,
                port=port,
                token=token,
            )
        finally:
            await conversation.drain()
    finally:
        await runtime.stop()


async def serve_conversation(
    conversation: Conversation,
    *,
    default_agent: str,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = DEFAULT_MCP_PORT,
    token: str | None = None,
) -> None:
    """Serve ``conversation`` over MCP until the client (stdio) or a signal (HTTP) ends it
    (also the attached mode of ``mcp serve``, whose conversation is a running gateway's);
    a new conversation goes to ``default_agent``."""
    backend = ConversationTools(conversation, default_agent=default_agent)
    if not http:
        await serve_stdio(backend)
        return
    check_mcp_bind_policy(host, token)
    server = _GatewayServer(
        uvicorn.Config(
            http_app(backend, token=token, host=host),
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            access_log=False,
            server_header=False,
        )
    )
    await server.serve()
    if not server.started:
        raise GatewayConfigError(f"the MCP HTTP listener on {host}:{port} failed to start")
