"""The beamclaw-mcp error tree.

Every error carries the server name (and the tool, where one is involved) as fields, so a
caller can render one clear line. Tool implementations turn these into
``ToolOutput.error`` for the model; the CLI prints them.

::

    BeamclawMCPError
    ├── MCPConnectError          spawning / connecting failed (command missing, refused …)
    ├── MCPHandshakeError        initialize or tools/list failed or timed out
    ├── MCPServerUnavailableError  a call reached a server that is not up (fails fast)
    ├── MCPUnknownServerError    no such configured server
    ├── MCPUnknownToolError      the server does not offer this tool
    ├── MCPCallTimeoutError      tools/call exceeded its timeout (cancelled on the server)
    ├── MCPConnectionLostError   the connection dropped (before or during a call)
    └── MCPProtocolError         JSON-RPC error response or an invalid result
"""

from __future__ import annotations


class BeamclawMCPError(Exception):
    """Base of every error raised by beamclaw-mcp."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(f"MCP server {server!r}: {message}")


class MCPConnectError(BeamclawMCPError):
    """The server could not be started or reached.

    Attributes:
        reason: what went wrong (``command not found: …``, ``connection refused`` …).
        retryable: False when retrying cannot help (missing command, missing secret).
    """

    def __init__(self, server: str, reason: str, *, retryable: bool = True) -> None:
        self.reason = reason
        self.retryable = retryable
        super().__init__(server, reason)


class MCPHandshakeError(BeamclawMCPError):
    """``initialize`` → ``initialized`` → ``tools/list`` did not complete."""

    def __init__(self, server: str, reason: str) -> None:
        self.reason = reason
        super().__init__(server, f"handshake failed: {reason}")


class MCPServerUnavailableError(BeamclawMCPError):
    """A call was made while the server is not ``up``; raised immediately, never waits.

    Attributes:
        state: the server's state (``starting``, ``restarting``, ``failed``, ``disabled``…).
        last_error: the last recorded failure, if any.
    """

    def __init__(self, server: str, state: str, last_error: str | None = None) -> None:
        self.state = state
        self.last_error = last_error
        detail = f" (last error: {last_error})" if last_error else ""
        super().__init__(server, f"server is {state}, not up{detail}")


class MCPUnknownServerError(BeamclawMCPError):
    """No server with this name is configured."""

    def __init__(self, server: str) -> None:
        super().__init__(server, "no such server is configured")


class MCPUnknownToolError(BeamclawMCPError):
    """The server does not currently offer this tool."""

    def __init__(self, server: str, tool: str) -> None:
        self.tool = tool
        super().__init__(server, f"offers no tool {tool!r}")


class MCPCallTimeoutError(BeamclawMCPError):
    """``tools/call`` did not answer within ``timeout`` seconds; it was cancelled."""

    def __init__(self, server: str, tool: str, timeout: float) -> None:
        self.tool = tool
        self.timeout = timeout
        super().__init__(server, f"tool {tool!r} timed out after {timeout:g}s")


class MCPConnectionLostError(BeamclawMCPError):
    """The connection to the server closed (process exited, HTTP stream ended …)."""

    def __init__(self, server: str, reason: str, *, tool: str | None = None) -> None:
        self.reason = reason
        self.tool = tool
        where = f" during tool {tool!r}" if tool else ""
        super().__init__(server, f"connection lost{where}: {reason}")


class MCPProtocolError(BeamclawMCPError):
    """The server answered with a JSON-RPC error or a result that does not validate.

    Attributes:
        code: the JSON-RPC error code, when there was one.
    """

    def __init__(
        self, server: str, message: str, *, code: int | None = None, tool: str | None = None
    ) -> None:
        self.code = code
        self.tool = tool
        where = f" tool {tool!r}:" if tool else ""
        suffix = f" (code {code})" if code is not None else ""
        super().__init__(server, f"{where} {message}{suffix}".strip())
