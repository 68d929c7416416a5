"""BeamClaw as an MCP server (``beamclaw mcp serve``): five tools over the
:class:`~beamclaw_core.conversation.Conversation` port, on stdio or streamable HTTP.

The MCP SDK loads with this package only (never at gateway start)."""

from beamclaw_gateway.mcp_serve.run import (
    DEFAULT_MCP_PORT,
    check_mcp_bind_policy,
    run_mcp_server,
    serve_conversation,
)
from beamclaw_gateway.mcp_serve.server import build_server, http_app, require_bearer, serve_stdio
from beamclaw_gateway.mcp_serve.tools import ConversationTools, no_answer_in_time
from beamclaw_gateway.mcp_serve.views import (
    ApprovalOutcome,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
    iso_time,
    preview,
)

__all__ = [
    "DEFAULT_MCP_PORT",
    "ApprovalOutcome",
    "ConversationSummary",
    "ConversationTools",
    "MessageView",
    "PendingApproval",
    "SendResult",
    "build_server",
    "check_mcp_bind_policy",
    "http_app",
    "iso_time",
    "no_answer_in_time",
    "preview",
    "require_bearer",
    "run_mcp_server",
    "serve_conversation",
    "serve_stdio",
]
