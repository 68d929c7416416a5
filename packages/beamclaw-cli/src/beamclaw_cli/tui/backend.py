"""The TUI's port to the agent system: :class:`ChatBackend`, and how one is chosen.

Two adapters implement it: :class:`~beamclaw_cli.tui.websocket.WebSocketBackend` talks
to a running daemon over ``/ws``; :class:`~beamclaw_cli.tui.inprocess.InProcessBackend`
runs the same :class:`~beamclaw_gateway.GatewayRuntime` inside the TUI's process. Both
deliver events as the dicts of ``TurnEvent.to_dict()`` (plus ``session`` and
``disconnected``), so one renderer serves both.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from beamclaw_cli.daemon import Endpoint, fetch_json
from beamclaw_cli.errors import GatewayUnreachableError

Decision = Literal["yes", "no", "always"]
BackendMode = Literal["auto", "daemon", "embedded"]

#: Sentinel pushed on an event queue when the backend is closed.
CLOSED: dict[str, Any] = {"type": "__closed__"}


class ChatBackend(Protocol):
    """A conversation with one agent, as the TUI needs it.

    ``events`` yields every event of this client's turns, in order, until ``close``.
    ``send`` returns once the message is handed over (not when the turn ends).
    """

    @property
    def description(self) -> str:
        """Shown in the status line: ``embedded`` or ``daemon 127.0.0.1:18800``."""
        ...

    async def start(self) -> None: ...

    async def send(self, text: str) -> None: ...

    async def answer_approval(self, request_id: str, decision: Decision) -> None: ...

    def events(self) -> AsyncIterator[dict[str, Any]]: ...

    async def close(self) -> None: ...


class EventQueue:
    """The events a backend produced, consumed by one reader (the TUI)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, event: dict[str, Any]) -> None:
        self._queue.put_nowait(event)

    def close(self) -> None:
        self._queue.put_nowait(CLOSED)

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            event = await self._queue.get()
            if event is CLOSED:
                return
            yield event


@dataclass(frozen=True)
class BackendChoice:
    """What :func:`choose_backend` decided, and why."""

    mode: Literal["daemon", "embedded"]
    endpoint: Endpoint
    reason: str


def daemon_answers(endpoint: Endpoint, timeout: float = 1.0) -> bool:
    """True when a gateway answers ``/health`` at ``endpoint``."""
    try:
        code, body = fetch_json(endpoint, "/health", timeout=timeout)
    except (GatewayUnreachableError, ValueError):
        return False
    return code == 200 and isinstance(body, dict)


def choose_backend(mode: BackendMode, endpoint: Endpoint) -> BackendChoice:
    """``auto``: the daemon when its ``/health`` answers, else embedded."""
    if mode == "embedded":
        return BackendChoice("embedded", endpoint, "--backend embedded")
    if mode == "daemon":
        return BackendChoice("daemon", endpoint, "--backend daemon")
    if daemon_answers(endpoint):
        return BackendChoice("daemon", endpoint, f"a daemon answers at {endpoint.base_url}")
    return BackendChoice("embedded", endpoint, f"no daemon at {endpoint.base_url}")


def agent_model(config: Any, agent_id: str) -> str:
    """The model ``agent_id``'s turns use (``[agents.<id>]``, else ``[core]``; '' when its
    provider is not configured)."""
    from beamclaw_core import agent_profile

    return agent_profile(config.core, config.agents, agent_id).model(config.core)


def history_path(home: Path) -> Path:
    return home / "tui_history"
