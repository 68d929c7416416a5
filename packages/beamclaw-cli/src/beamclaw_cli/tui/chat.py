"""The TUI's conversation with one agent, over the
:class:`~beamclaw_core.conversation.Conversation` port.

The same object serves both places the agent system can run: embedded in this process
(:func:`open_embedded`: the daemon's :class:`~beamclaw_gateway.GatewayRuntime` behind a
``LocalConversation``, holding the home lock like ``beamclaw serve``) or in a running
daemon (:func:`open_daemon`: the CLI's ``RemoteConversation`` over its API). The renderer
reads one stream of event dicts (``TurnEvent.to_dict()``, plus ``session`` and
``disconnected``), whichever it is.

Invariants: each message's turn is followed from the moment it is sent until its terminal
event, in order; a turn whose events stop before their end (the daemon went away) ends
with one ``disconnected`` event instead; errors at open happen before the screen is taken
over, so they print as the CLI's one-line error.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beamclaw_cli.tui.backend import Decision, EventQueue
from beamclaw_obs import cancel_and_wait

if TYPE_CHECKING:
    from beamclaw_cli.daemon import Endpoint
    from beamclaw_core.conversation import Conversation, Turn
    from beamclaw_core.sessions import SessionAddress
    from beamclaw_gateway import BeamclawConfig

Closer = Callable[[], Awaitable[None]]


class TuiChat:
    """One agent's conversation as the TUI drives it (see the module docstring)."""

    def __init__(
        self,
        conversation: Conversation,
        address: SessionAddress,
        description: str,
        close: Closer,
        *,
        session_id: str | None = None,
    ) -> None:
        self.conversation = conversation
        self.address = address
        self.description = description
        """Shown in the status line: ``embedded`` or ``daemon 127.0.0.1:18800``."""
        self._close = close
        self._queue = EventQueue()
        self._tasks: set[asyncio.Task[None]] = set()
        self.session_id = session_id
        if session_id is not None:
            self._announce(session_id)

    def _announce(self, session_id: str) -> None:
        self.session_id = session_id
        self._queue.put(
            {"type": "session", "session_id": session_id, "agent": self.address.agent_id}
        )

    async def send(self, text: str) -> None:
        """Hand ``text`` over (a message or an in-chat command) and follow its turn."""
        from beamclaw_core.conversation import TurnRequest

        try:
            turn = await self.conversation.send(
                TurnRequest(self.address, text, session_id=self.session_id, approval_mode="wait")
            )
        except Exception as exc:
            self._queue.put({"type": "error", "message": f"not sent: {exc}"})
            return
        if turn.session_id != self.session_id:
            self._announce(turn.session_id)
        task = asyncio.create_task(self._follow(turn))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow(self, turn: Turn) -> None:
        ended = False
        async for event in turn.events():
            self._queue.put(event.to_dict())
            ended = event.terminal
        if not ended:
            result = await turn.result()
            self._queue.put(
                {"type": "disconnected", "message": result.error_message or "the turn was lost"}
            )

    async def answer_approval(self, request_id: str, decision: Decision) -> None:
        if await self.conversation.answer(request_id, decision) != "answered":
            self._queue.put({"type": "notice", "text": "That approval is no longer pending."})

    def events(self) -> AsyncIterator[dict[str, Any]]:
        return aiter(self._queue)

    async def close(self) -> None:
        """Stop following turns (they go on where the system runs), then close it."""
        await cancel_and_wait(list(self._tasks))
        try:
            await self._close()
        finally:
            self._queue.close()


async def open_embedded(
    config: BeamclawConfig, *, agent: str, user_id: str, home: Path, channel: str = "tui"
) -> TuiChat:
    """Start the whole agent system in this process (under the home lock); log lines go
    to ``$BEAMCLAW_HOME/logs`` only (stderr would tear the screen)."""
    from beamclaw_cli.daemon import home_lock
    from beamclaw_core.conversation import LocalConversation, TurnRequest
    from beamclaw_core.sessions import SessionAddress
    from beamclaw_gateway import GatewayRuntime

    config = config.model_copy(deep=True)
    config.obs.log_level = "CRITICAL"
    stack = contextlib.ExitStack()
    stack.enter_context(home_lock(home))
    runtime = GatewayRuntime(config, home=home)
    try:
        await runtime.start()
    except BaseException:
        await runtime.stop()
        stack.close()
        raise
    conversation = LocalConversation(lambda: runtime.core)
    address = SessionAddress(user_id, agent, channel)

    async def close() -> None:
        try:
            await conversation.drain(2.0)
            await runtime.stop()
        finally:
            stack.close()

    return TuiChat(
        conversation,
        address,
        "embedded",
        close,
        session_id=conversation.session_id(TurnRequest(address, "")),
    )


async def open_daemon(
    endpoint: Endpoint, *, agent: str, user_id: str, token: str | None, channel: str = "tui"
) -> TuiChat:
    """Talk to the daemon at ``endpoint``; a refused token or a closed port fails here."""
    from beamclaw_cli.remote import RemoteConversation
    from beamclaw_core.sessions import SessionAddress

    conversation = RemoteConversation(endpoint.base_url, token=token)
    try:
        await conversation.check()
    except BaseException:
        await conversation.aclose()
        raise
    return TuiChat(
        conversation,
        SessionAddress(user_id, agent, channel),
        f"daemon {endpoint.base_url.removeprefix('http://')}",
        conversation.aclose,
    )
