"""Failures of the read-only integrations (a branch of the beamclaw-tools error tree).

Every message is a sentence the person (through the agent) can act on; none ever holds
a token.
"""

from __future__ import annotations

from beamclaw_tools.errors import BeamclawToolsError


class IntegrationError(BeamclawToolsError):
    """Base of every integration failure; ``service`` names the account (``google`` …)."""

    def __init__(self, service: str, message: str) -> None:
        self.service = service
        super().__init__(message)


class NotConnectedError(IntegrationError):
    """No token is stored for the service."""

    def __init__(self, service: str) -> None:
        super().__init__(
            service,
            f"{service} is not connected: ask me to connect it "
            f"(or run `beamclaw integrations connect {service}`)",
        )


class ReconnectRequiredError(IntegrationError):
    """The stored token was refused (revoked, expired without refresh, wrong)."""

    def __init__(self, service: str, detail: str) -> None:
        self.detail = detail
        super().__init__(
            service,
            f"{service} refused the stored token ({detail}); please reconnect it "
            f"(ask me to connect {service}, or run `beamclaw integrations connect {service}`)",
        )


class RateLimitedError(IntegrationError):
    """The service kept answering 429 after the bounded retries."""

    def __init__(self, service: str, attempts: int, retry_after: float | None) -> None:
        self.attempts = attempts
        self.retry_after = retry_after
        wait = f" (it asks to wait {retry_after:g} s)" if retry_after is not None else ""
        super().__init__(
            service,
            f"{service} is rate limiting requests{wait}; gave up after {attempts} attempts, "
            "try again later",
        )


class BadResponseError(IntegrationError):
    """The service answered something that is not the JSON its API documents."""

    def __init__(self, service: str, detail: str) -> None:
        self.detail = detail
        super().__init__(service, f"{service} answered an unreadable response: {detail}")


class ServiceError(IntegrationError):
    """The service answered an error status (not auth, not rate limit)."""

    def __init__(self, service: str, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(service, f"{service} answered HTTP {status}: {detail}")


class OAuthError(IntegrationError):
    """The authorisation flow failed (unknown state, refused code, misconfiguration)."""


class TokenStoreError(IntegrationError):
    """The encrypted token store cannot be read or written (bad key, bad permissions)."""

    def __init__(self, message: str) -> None:
        super().__init__("integrations", message)
