"""What the scheduler needs from the system it runs in, named after what it does.

The gateway (the composition root) builds one :class:`SchedulerPorts` from its core, its
:class:`~beamclaw_core.conversation.Conversation` and its
:class:`~beamclaw_core.channels.ChannelRegistry`; tests build one around a core too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from beamclaw_core.channels import ChannelRegistry
from beamclaw_core.conversation import Conversation
from beamclaw_core.sessions import SessionAddress


class Sessions(Protocol):
    """The sessions a job or beat goes to."""

    def derive(self, address: SessionAddress) -> str:
        """The session ``address`` speaks in (the person's shared one)."""
        ...

    async def busy(self, session_id: str) -> bool:
        """A turn runs or messages wait there (False for an unknown session)."""
        ...

    async def forget(self, session_id: str) -> None:
        """Delete the session with its history (nothing when unknown)."""
        ...


@dataclass(frozen=True)
class SchedulerPorts:
    """Everything the scheduler talks to."""

    conversation: Conversation
    channels: ChannelRegistry
    sessions: Sessions
    agents: Callable[[], Collection[str]]
    """The agents that exist now."""
    default_agent: str
    owner: str
    """The person a job or beat that names nobody belongs to (the gateway's owner)."""
    timezone_of: Callable[[str], str]
    """The person's IANA timezone as agent ``id`` knows it."""
    heartbeat_file: Callable[[str], Path]
    """Agent ``id``'s ``HEARTBEAT.md``."""
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    reach: Callable[[str], Awaitable[list[str]]] | None = None
    """Person id → where to reach them, best first (``<channel>:<target>``, the channels
    they wrote from, newest first): ``deliver_to = "last"``. None: nowhere known."""
