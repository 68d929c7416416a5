"""The beamclaw-gateway error tree."""

from __future__ import annotations


class BeamclawGatewayError(Exception):
    """Base of every error raised by beamclaw-gateway."""


class GatewayConfigError(BeamclawGatewayError):
    """The gateway cannot start with this configuration (bind policy, port)."""


class PortInUseError(BeamclawGatewayError):
    """The configured port is already taken."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        super().__init__(
            f"port {port} on {host} is already in use; stop the other process or set "
            f"BEAMCLAW_PORT / [gateway.http] port"
        )


class GatewayNotStartedError(BeamclawGatewayError):
    """A component was used before the gateway runtime started (or after it stopped)."""


class ApiError(BeamclawGatewayError):
    """An HTTP request failed; rendered as an OpenAI-shaped error body.

    Attributes:
        status: HTTP status code.
        message: human-readable text.
        type: OpenAI error ``type`` (``invalid_request_error``, ``authentication_error``…).
        code: machine-readable code (``model_not_found``, ``rate_limit_exceeded``…).
        param: the request field at fault, when one is.
        headers: extra response headers (``Retry-After``, ``WWW-Authenticate``…).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}
        super().__init__(message)

    def body(self) -> dict[str, object]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


class RpcError(BeamclawGatewayError):
    """A JSON-RPC (A2A) request failed; ``code`` is the JSON-RPC error code sent back."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)
