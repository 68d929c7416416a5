"""The embedded backend: the whole system (the daemon's :class:`GatewayRuntime`) in-process.

Used when no daemon answers. It holds the home lock for its lifetime, exactly like
``beamclaw serve``, so a daemon and an embedded TUI never drive the same conversations
at once. Log lines go to ``$BEAMCLAW_HOME/logs`` only (stderr would tear the screen).

Each :meth:`send` gets the turn's handle from :meth:`Core.send` and forwards its events
(``TurnEvent.to_dict()``) to the TUI's queue from a task; approvals are answered through
:meth:`Core.answer_approval`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beamclaw_cli.tui.backend import Decision, EventQueue

if TYPE_CHECKING:
    from beamclaw_core.sessions import SessionAddress, TurnHandle
    from beamclaw_gateway import BeamclawConfig, GatewayRuntime


class InProcessBackend:
    """Runs :class:`~beamclaw_gateway.GatewayRuntime` and talks to its core directly."""

    def __init__(
        self,
        config: BeamclawConfig,
        *,
        agent: str,
        user_id: str,
        home: Path,
        channel: str = "tui",
    ) -> None:
        self._config = config.model_copy(deep=True)
        self._config.obs.log_level = "CRITICAL"
        self._agent = agent
        self._user_id = user_id
        self._home = home
        self._channel = channel
        self._queue = EventQueue()
        self._runtime: GatewayRuntime | None = None
        self._address: SessionAddress | None = None
        self._session_id: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stack = contextlib.ExitStack()

    @property
    def description(self) -> str:
        return "embedded"

    @property
    def session_id(self) -> str | None:
        return self._session_id

    async def start(self) -> None:
        from beamclaw_cli.daemon import home_lock
        from beamclaw_core.sessions import SessionAddress
        from beamclaw_gateway import GatewayRuntime

        self._stack.enter_context(home_lock(self._home))
        runtime = GatewayRuntime(self._config, home=self._home)
        try:
            await runtime.start()
        except BaseException:
            await runtime.stop()
            self._stack.close()
            raise
        self._runtime = runtime
        self._address = SessionAddress(self._user_id, self._agent, self._channel)
        self._session_id = runtime.core.session_id(self._address)
        self._queue.put({"type": "session", "session_id": self._session_id, "agent": self._agent})

    async def send(self, text: str) -> None:
        runtime, address = self._require()
        handle = await runtime.core.send(address, text)
        task = asyncio.create_task(self._forward(handle))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _forward(self, handle: TurnHandle) -> None:
        async for event in handle.events():
            self._queue.put(event.to_dict())
        if handle.lagging:  # the buffer overflowed: still report how the turn ended
            self._queue.put((await handle.result()).to_dict())

    async def answer_approval(self, request_id: str, decision: Decision) -> None:
        runtime, _ = self._require()
        if self._session_id is not None:
            answered = await runtime.core.answer_approval(self._session_id, request_id, decision)
            if not answered:
                self._queue.put({"type": "notice", "text": "That approval is no longer pending."})

    def events(self) -> AsyncIterator[dict[str, Any]]:
        return aiter(self._queue)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._runtime is not None:
            await self._runtime.stop()
            self._runtime = None
        self._stack.close()
        self._queue.close()

    def _require(self) -> tuple[GatewayRuntime, SessionAddress]:
        if self._runtime is None or self._address is None:
            from beamclaw_cli.errors import BeamclawCliError

            raise BeamclawCliError("the embedded backend is not started")
        return self._runtime, self._address
