"""BeamClaw as an MCP server: conversations and approvals for other MCP clients.

:func:`build_server` wraps :class:`~beamclaw_gateway.mcp_serve.tools.ConversationTools` in
the SDK's ``MCPServer`` with five tools — ``list_conversations``, ``read_messages``,
``send_message``, ``list_pending_approvals``, ``respond_to_approval`` — each returning
structured content. :func:`serve_stdio` runs it on stdin/stdout; :func:`http_app` returns
the streamable-HTTP ASGI app (served by the caller's ASGI server — the CLI/gateway layer),
guarded by a bearer token when one is given (constant-time comparison).

Invariants: failures never crash the server (they become tool errors, see the tools'
error contract); every text sent to the client passes the scrubber.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

from loguru import logger
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from beamclaw_gateway._version import __version__
from beamclaw_gateway.mcp_serve.tools import ConversationTools
from beamclaw_gateway.mcp_serve.views import (
    ApprovalList,
    ApprovalOutcome,
    ConversationList,
    MessageList,
    SendResult,
)
from beamclaw_obs import scrub

_T = TypeVar("_T")

SERVER_NAME = "beamclaw"
MAX_LIMIT = 500

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _guard(call: Awaitable[_T]) -> _T:
    try:
        return await call
    except (LookupError, ValueError, TimeoutError) as exc:
        raise ToolError(scrub(str(exc) or type(exc).__name__)) from exc
    except ToolError:
        raise
    except Exception as exc:
        logger.exception("MCP serve tool failed")
        raise ToolError("internal error in BeamClaw (see its log)") from exc


def build_server(backend: ConversationTools, *, name: str = SERVER_NAME) -> MCPServer:
    """An ``MCPServer`` exposing ``backend``'s tools (see the module docstring)."""
    server: MCPServer = MCPServer(
        name,
        version=__version__,
        instructions=(
            "Drive BeamClaw: list conversations, read their messages, send a message and "
            "get the agent's answer, and approve or deny pending tool calls."
        ),
    )

    async def list_conversations(agent: str | None = None, limit: int = 20) -> ConversationList:
        """List BeamClaw conversations, most recently updated first."""
        limit = max(1, min(limit, MAX_LIMIT))
        found = await _guard(backend.list_conversations(agent=agent, limit=limit))
        return ConversationList(conversations=found)

    async def read_messages(
        conversation_id: str, limit: int = 50, before_sequence: int | None = None
    ) -> MessageList:
        """Read the last messages of a conversation (oldest first)."""
        limit = max(1, min(limit, MAX_LIMIT))
        found = await _guard(
            backend.read_messages(conversation_id, limit=limit, before_sequence=before_sequence)
        )
        return MessageList(
            conversation_id=conversation_id,
            messages=[m.model_copy(update={"content": scrub(m.content)}) for m in found],
        )

    async def send_message(
        text: str,
        conversation_id: str | None = None,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        """Send a message to an agent and wait for its answer (a new conversation when no
        conversation_id is given). Stops early when the agent needs an approval."""
        if not text.strip():
            raise ToolError("text is empty")
        wait = max(1.0, min(wait_seconds, 3600.0))
        result = await _guard(
            backend.send_message_and_wait(conversation_id, text, agent=agent, wait_seconds=wait)
        )
        return result.model_copy(update={"answer": scrub(result.answer)})

    async def list_pending_approvals(conversation_id: str | None = None) -> ApprovalList:
        """List tool calls waiting for approval."""
        found = await _guard(backend.list_pending_approvals(conversation_id))
        return ApprovalList(approvals=found)

    async def respond_to_approval(
        approval_id: str, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        """Approve (approve=true) or deny a pending tool call."""
        return await _guard(
            backend.respond_to_approval(approval_id, approve=approve, reason=reason)
        )

    for fn in (
        list_conversations,
        read_messages,
        send_message,
        list_pending_approvals,
        respond_to_approval,
    ):
        server.add_tool(fn)
    return server


async def serve_stdio(backend: ConversationTools) -> None:
    """Serve ``backend``'s tools over stdin/stdout until the client closes stdin."""
    await build_server(backend).run_stdio_async()


def http_app(
    backend: ConversationTools,
    *,
    token: str | None = None,
    path: str = "/mcp",
    host: str = "127.0.0.1",
) -> ASGIApp:
    """The streamable-HTTP ASGI app for ``backend``; with ``token``, every HTTP request
    must carry ``Authorization: Bearer <token>`` (else 401)."""
    app: ASGIApp = build_server(backend).streamable_http_app(streamable_http_path=path, host=host)
    return app if token is None else require_bearer(app, token)


def require_bearer(app: ASGIApp, token: str) -> ASGIApp:
    """Wrap an ASGI app so HTTP requests need ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            headers: list[tuple[bytes, bytes]] = scope.get("headers") or []
            given = next((v for k, v in headers if k.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error":"unauthorized"}'})
                return
        await app(scope, receive, send)

    return guarded
