"""The one failure the fake Bot API answers with: an ``{"ok": false, ...}`` body.

Method handlers and the HTML parser raise :class:`BotApiError`; the HTTP shell renders it
as Telegram does (``error_code`` equals the HTTP status; ``parameters.retry_after`` only
for flood waits).
"""

from __future__ import annotations

from typing import Any

from beamclaw_gateway.errors import BeamclawGatewayError


class BotApiError(BeamclawGatewayError):
    """A Bot API error answer.

    Attributes:
        status: HTTP status and ``error_code`` (400, 401, 403, 404, 409, 429, 5xx).
        description: Telegram's text, e.g. ``"Bad Request: message is too long"``.
        retry_after: seconds for ``parameters.retry_after`` (flood waits), else None.
    """

    def __init__(self, status: int, description: str, *, retry_after: int | None = None) -> None:
        self.status = status
        self.description = description
        self.retry_after = retry_after
        super().__init__(f"{status} {description}")

    @classmethod
    def bad_request(cls, detail: str) -> BotApiError:
        """A 400 whose description is ``"Bad Request: <detail>"``."""
        return cls(400, f"Bad Request: {detail}")

    def body(self) -> dict[str, Any]:
        """The JSON body Telegram answers with."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.status,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body
