"""How the TUI finds its agent system: a running daemon or an embedded one
(:func:`choose_backend`), and the event queue its renderer reads
(:mod:`beamclaw_cli.tui.chat` drives the conversation itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from beamclaw_cli.daemon import Endpoint, fetch_json
from beamclaw_cli.errors import GatewayUnreachableError

Decision = Literal["yes", "no", "always"]
BackendMode = Literal["auto", "daemon", "embedded"]

#: Sentinel pushed on an event queue when the backend is closed.
CLOSED: dict[str, Any] = {"type": "__closed__"}


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
