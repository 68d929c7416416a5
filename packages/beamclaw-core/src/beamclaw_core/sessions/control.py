"""What in-chat commands and compaction may see of a lane and do to it.

:class:`~beamclaw_core.sessions.lane.SessionLane` implements both protocols; the
commands (``sessions/commands.py``) and compaction (``sessions/compacting.py``) import
only this module, never the lane, so neither reaches into its queue, worker or bus.

Invariants: :meth:`LaneControl.cancel` leaves no run queued (each sender told
``Dropped``) and asks the running turn, if any, to stop; :meth:`LaneControl.settle`
returns only when no turn runs and nothing is queued (so never from the lane's own
worker); :meth:`LaneControl.reset_view` leaves the history and the standing grants as
they are; the rest only read, or answer the one pending approval.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from beamclaw_core.loop.executor import ViewCache
from beamclaw_core.loop.inputs import Decision
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.states import AwaitingApproval
from beamclaw_core.sessions.runtime import Runtime
from beamclaw_tools import SessionRef


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session as :meth:`Core.status` and :meth:`Core.list_sessions` describe it."""

    session_id: str
    agent_id: str
    user_id: str
    channel: str | None
    state: str
    queued: int
    last_activity_at: float
    error: str | None = None
    parent_id: str | None = None
    subscribers: int = 0
    """Open subscriptions to the session's events (streams and unfinished turn handles)."""


class LaneAccess(Protocol):
    """Read access to a lane's conversation and ports (compaction, the memory flush,
    ``/context``)."""

    @property
    def id(self) -> str: ...

    @property
    def agent_id(self) -> str: ...

    @property
    def rt(self) -> Runtime:
        """What every lane shares (settings, store, providers, tools, clock)."""
        ...

    @property
    def view(self) -> ViewCache:
        """The conversation's LLM view; whoever rewrites it stored invalidates it."""
        ...

    def session_ref(self) -> SessionRef: ...

    def deps(self) -> LoopDeps:
        """The ports the lane's next turn would use (the memory flush and ``/context``
        build exactly that turn's request)."""
        ...


class LaneControl(LaneAccess, Protocol):
    """The operations of in-chat commands (``/stop``, ``/new``, ``/yes`` …)."""

    @property
    def allowlist(self) -> Iterable[str]:
        """The person's standing ``/always`` grants for this agent."""
        ...

    def info(self) -> SessionInfo: ...

    def turn_running(self) -> bool:
        """A turn is in progress (not merely queued)."""
        ...

    def pending_approval(self) -> AwaitingApproval | None: ...

    def answer(self, request_id: str, decision: Decision) -> bool:
        """Answer the pending approval ``request_id``; False when it is not pending."""
        ...

    async def cancel(self, reason: str = "Cancelled by user") -> int:
        """Drop every queued run (senders told) and cancel the running turn; returns how
        many runs were dropped."""
        ...

    async def settle(self) -> None:
        """Wait until no turn runs and nothing is queued."""
        ...

    async def reset_view(self, reason: str) -> None:
        """Start the LLM view afresh; history and standing grants stay."""
        ...
