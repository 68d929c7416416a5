"""What crosses a channel's edge: capabilities, messages out and in, receipts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from beamclaw_core.sessions.runs import SessionAddress
from beamclaw_tools import ContentPart, FilePart


@dataclass(frozen=True, slots=True)
class ChannelCaps:
    """What a channel can show; the core adapts what it sends to it."""

    edits: bool = False
    """A sent message can be edited (progressive drafts)."""
    buttons: bool = False
    """Inline buttons (approval prompts answered with a tap)."""
    images: bool = False
    files: bool = False
    max_length: int | None = None
    """Longest text one message may hold (longer text is split); None: no limit."""


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message to deliver: text and any attachments (images, files)."""

    text: str
    attachments: tuple[ContentPart | FilePart, ...] = ()
    """Images, then files (a channel without ``files`` may leave those out)."""
    edit_of: str | None = None
    """The id of a message this one replaces (a draft), where the channel can edit."""
    delivery_id: str | None = None
    """A stable id of this delivery, the same on every retry (the outbox's key): a channel
    that can pass it on (the webhook's ``X-BeamClaw-Delivery``) lets the receiver drop a
    repeat."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a delivery reached: ``delivered`` recipients, the ids of the messages sent."""

    channel: str
    target: str
    delivered: int
    message_ids: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Inbound:
    """A message a person sent through a channel, addressed to a session."""

    channel: str
    """The adapter's name: the answer and approval prompts go back through it."""
    address: SessionAddress
    content: str | tuple[ContentPart, ...]
    reply_target: str
    """Where the answer goes on the same channel (a chat id, a session id)."""
    message_id: str | None = None
    """The channel's id of the message (deduplication)."""
    session_id: str | None = None
    """An explicit session; None: the one the address derives."""


InboundSink = Callable[[Inbound], Awaitable[None]]
"""Where an adapter hands what people send (the gateway turns it into a turn)."""
