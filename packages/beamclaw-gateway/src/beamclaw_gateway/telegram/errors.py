"""Errors of the Telegram channel (under the gateway's error tree)."""

from __future__ import annotations

from beamclaw_gateway.errors import BeamclawGatewayError


class TelegramChannelError(BeamclawGatewayError):
    """Base of the Telegram channel's errors."""


class TelegramTokenRejectedError(TelegramChannelError):
    """Telegram answered 401: the bot token is wrong or revoked."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(
            f"Telegram rejected the bot token ({detail}); check "
            "[gateway.channels.telegram] token (TELEGRAM_BOT_TOKEN)"
        )


class TelegramSendError(TelegramChannelError):
    """A Bot API call failed for good (not a 429/5xx that a retry may fix)."""

    def __init__(self, method: str, detail: str) -> None:
        self.method = method
        self.detail = detail
        super().__init__(f"Telegram {method} failed: {detail}")


class UnknownPairingCodeError(TelegramChannelError):
    """No pending pairing has this code (mistyped, expired or used)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(f"no pending Telegram pairing with code {code!r} (expired or used?)")


class NotApprovedError(TelegramChannelError):
    """The Telegram user is not approved (nothing to revoke)."""

    def __init__(self, who: str) -> None:
        self.who = who
        super().__init__(f"Telegram user {who!r} is neither approved nor pending")


class TelegramBadRequestError(TelegramSendError):
    """Telegram answered 400 (bad markup, a message gone, text unchanged…)."""
