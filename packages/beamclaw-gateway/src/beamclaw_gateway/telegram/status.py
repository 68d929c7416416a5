"""What the channel shows in ``/health`` and ``beamclaw status``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ChannelStatus:
    """The Telegram channel's own view (mutated by its run; read by ``/health``)."""

    mode: str
    state: str = "starting"
    """``starting``, ``polling``, ``standby`` (cluster mode: another node polls),
    ``webhook``, ``retrying``, ``token_rejected``, ``stopped``."""
    bot: str | None = None
    """``@username`` of the bot once ``getMe`` answered."""
    last_update_at: float | None = None
    """Wall time of the last update received."""
    last_poll_at: float | None = None
    """Wall time of the last ``getUpdates`` that answered (empty or not)."""
    updates: int = 0
    errors: int = 0
    restarts: int = 0
    """Long polls the watchdog restarted after they made no progress."""
    last_error: str | None = None
    outbox_pending: int = 0

    def as_dict(self) -> dict[str, object]:
        """``last_error`` shows as ``error`` (the registry's own ``last_error``, the
        run's crash, sits next to it)."""
        return {
            "mode": self.mode,
            "state": self.state,
            "bot": self.bot,
            "last_update_at": self.last_update_at,
            "last_poll_at": self.last_poll_at,
            "updates": self.updates,
            "errors": self.errors,
            "watchdog_restarts": self.restarts,
            "error": self.last_error,
            "outbox_pending": self.outbox_pending,
        }
