"""The Telegram channel (aiogram 3 on the channel layer): docs/telegram.md.

Modules, one concept each: ``api`` (the Bot API client and its retry policy), ``store``
(update log and outbox: exactly once), ``pairing`` and ``access`` (who is answered),
``render`` (Markdown → Telegram HTML chunks), ``send`` (HTML with the plain retry),
``drafts`` (typing and the streamed draft), ``polling`` (long poll and watchdog),
``approvals`` and ``prompts`` (inline buttons), ``media`` (photos, documents, voice),
``recovery`` (where a message got to before a restart), ``running`` (one run's parts),
``inbound`` (updates in), ``delivery`` (answers out), ``following`` (messages an earlier
run handed on), ``adapter`` (the channel itself).

Exports load lazily: the gateway imports aiogram only when the channel is enabled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_gateway.telegram.adapter import TelegramChannel
    from beamclaw_gateway.telegram.errors import (
        NotApprovedError,
        TelegramBadRequestError,
        TelegramChannelError,
        TelegramSendError,
        TelegramTokenRejectedError,
        UnknownPairingCodeError,
    )
    from beamclaw_gateway.telegram.pairing import ApprovedUser, PairingRequest, PairingStore
    from beamclaw_gateway.telegram.render import Chunk, markdown_to_html, render, split_html
    from beamclaw_gateway.telegram.replies import COMMANDS
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_gateway.telegram.adapter": ("TelegramChannel",),
            "beamclaw_gateway.telegram.replies": ("COMMANDS",),
            "beamclaw_gateway.telegram.errors": (
                "NotApprovedError",
                "TelegramBadRequestError",
                "TelegramChannelError",
                "TelegramSendError",
                "TelegramTokenRejectedError",
                "UnknownPairingCodeError",
            ),
            "beamclaw_gateway.telegram.pairing": ("ApprovedUser", "PairingRequest", "PairingStore"),
            "beamclaw_gateway.telegram.render": (
                "Chunk",
                "markdown_to_html",
                "render",
                "split_html",
            ),
        },
    )

__all__ = [
    "COMMANDS",
    "ApprovedUser",
    "Chunk",
    "NotApprovedError",
    "PairingRequest",
    "PairingStore",
    "TelegramBadRequestError",
    "TelegramChannel",
    "TelegramChannelError",
    "TelegramSendError",
    "TelegramTokenRejectedError",
    "UnknownPairingCodeError",
    "markdown_to_html",
    "render",
    "split_html",
]
