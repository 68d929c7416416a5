"""BeamClaw as an MCP server (``beamclaw mcp serve``): the backend port and the server."""

from beamclaw_mcp.serve.backend import (
    ApprovalOutcome,
    ConversationBackend,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
    iso_time,
    no_answer_in_time,
    preview,
)
from beamclaw_mcp.serve.server import build_server, http_app, require_bearer, serve_stdio

__all__ = [
    "ApprovalOutcome",
    "ConversationBackend",
    "ConversationSummary",
    "MessageView",
    "PendingApproval",
    "SendResult",
    "build_server",
    "http_app",
    "iso_time",
    "no_answer_in_time",
    "preview",
    "require_bearer",
    "serve_stdio",
]
