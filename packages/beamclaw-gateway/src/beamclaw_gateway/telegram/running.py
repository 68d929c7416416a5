"""What one run of the bot is made of, built once ``getMe`` answered.

Invariants: every part talks to the same :class:`~beamclaw_gateway.telegram.api.BotApi`;
``views`` holds the live draft of each turn shown in a chat, keyed by its reply target
(``<chat>:<message>``), and a view is removed from it exactly once, by the answer that
replaces it (or by the shutdown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.drafts import DraftView
from beamclaw_gateway.telegram.outbound import OutboxSender
from beamclaw_gateway.telegram.pairing import PairingStore
from beamclaw_gateway.telegram.prompts import ApprovalPrompts
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_gateway.telegram.store import Outbox, UpdateLog


@dataclass(slots=True)
class Running:
    """The parts of a running bot (see the module invariants)."""

    api: BotApi
    sender: TextSender
    log: UpdateLog
    outbox: Outbox
    pairing: PairingStore
    prompts: ApprovalPrompts
    outbound: OutboxSender
    bot_id: int
    username: str | None
    """The bot's ``@username`` without the ``@`` (None: it has none)."""
    views: dict[str, DraftView] = field(default_factory=lambda: dict[str, DraftView]())

    async def take_view(self, target: str) -> tuple[int, ...]:
        """Close the live draft of ``target``, if any; its messages, for the answer."""
        view = self.views.pop(target, None)
        return await view.close() if view is not None else ()
