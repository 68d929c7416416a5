"""``GET /ws``: the WebSocket protocol (ws_protocol.py; docs/api.md) and the ``ws`` channel
(its route: routes_ws.py).

Invariants:

* The core's loop is never blocked by a client: every outgoing frame goes through a
  bounded per-connection queue drained by the connection's own sender task. A client that
  falls ``send_buffer`` frames behind is told (``error`` ``slow_consumer``) and
  disconnected; its turns continue and are persisted.
* Events reach a connection once: through the session subscription when it subscribed
  to the session, else through the handle of the turn it started.
* A client message id seen before (per user) is answered with ``error`` ``duplicate``
  and never starts a second turn.
* When a connection ends, its session subscriptions are closed at once and it stops
  reading its turns; the turns go on (detached) and are stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from loguru import logger
from pydantic import ValidationError
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from beamclaw_core.channels import (
    ChannelCaps,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.conversation import TurnRequest
from beamclaw_core.loop import ApprovalRequested, TurnEvent
from beamclaw_core.sessions import (
    FutureSequenceError,
    ReplayGapError,
    SessionAddress,
    UnknownSessionError,
)
from beamclaw_gateway.auth import bearer_token, token_key, unauthorized
from beamclaw_gateway.recent_ids import RecentIds
from beamclaw_gateway.settings import WebSocketSettings
from beamclaw_gateway.storage_errors import CODE, client_message, retry_after
from beamclaw_gateway.ws_protocol import (
    AUTHENTICATED,
    CLIENT_FRAME,
    IMAGE_LIMITS,
    PONG,
    ApprovalFrame,
    AuthFrame,
    CancelFrame,
    MessageFrame,
    PingFrame,
    SubscribeFrame,
    error_frame,
    event_frame,
    session_frame,
    subscribed_frame,
)
from beamclaw_memory import DatabaseUnavailableError, StorageUnavailableError
from beamclaw_obs import ComponentHealth, HealthState, cancel_and_wait

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Callable

    from beamclaw_gateway.services import GatewayServices

CLOSE_POLICY = 1008
CLOSE_TRY_AGAIN = 1013
CLOSE_UNAUTHORIZED = 4401


def _nothing() -> None:
    """A detached turn has nothing to close: the connection just stops reading it."""


def ws_user_id(user: str | None, owner: str) -> str:
    """``ws:<user>``; an id already carrying a channel prefix (``local:ann``) is kept; no
    user at all is the gateway's ``owner`` (the person the TUI speaks as)."""
    if not user:
        return owner
    return user if ":" in user else f"ws:{user}"


class WsConnection:
    """One accepted WebSocket: its send queue, sender task and session forwarders."""

    def __init__(self, websocket: WebSocket, buffer: int) -> None:
        self.ws = websocket
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=buffer)
        self.closed = False
        self.sessions: set[str] = set()
        self.subscriptions: dict[str, asyncio.Task[None]] = {}
        self.forwarders: set[asyncio.Task[None]] = set()
        self.closers: set[Callable[[], None]] = set()
        """Close the sources still being forwarded (subscriptions, turn handles)."""
        self.sender: asyncio.Task[None] | None = None
        self._overflow_task: asyncio.Task[None] | None = None

    def push(self, frame: dict[str, Any]) -> bool:
        """Queue ``frame`` without waiting; a full queue disconnects the client."""
        if self.closed:
            return False
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.closed = True
            self._overflow_task = asyncio.create_task(self._overflow())
            return False
        return True

    async def _overflow(self) -> None:
        if self.sender is not None:
            self.sender.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.ws.send_text(
                    json.dumps(
                        error_frame(
                            "slow_consumer",
                            "the client fell too far behind; reconnect and subscribe",
                        )
                    )
                ),
                1.0,
            )
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(CLOSE_TRY_AGAIN, "slow consumer"), 1.0)

    async def run_sender(self) -> None:
        while True:
            frame = await self.queue.get()
            if frame is None:
                return
            await self.ws.send_text(json.dumps(frame, default=str))

    def forward(
        self, events: AsyncIterable[TurnEvent], close: Callable[[], None]
    ) -> asyncio.Task[None]:
        """Pump ``events`` to the client; ``close`` ends the source when the connection ends."""
        self.closers.add(close)

        async def pump() -> None:
            try:
                async for event in events:
                    if not self.push(event_frame(event)):
                        return
            finally:  # the source ended, the client fell behind, or the connection ended
                close()
                self.closers.discard(close)

        task = asyncio.create_task(pump())
        self.forwarders.add(task)
        task.add_done_callback(self.forwarders.discard)
        return task

    async def shutdown(self) -> None:
        self.closed = True
        for close in list(self.closers):
            close()
        tasks = [*self.forwarders, *self.subscriptions.values()]
        if self.sender is not None:
            tasks.append(self.sender)
        # the sender's frames hold this connection: forgetting the cancellations lets
        # reference counting free it (and its queue and handles) as the socket closes
        await cancel_and_wait(tasks)


class WebSocketHub:
    """Every open ``/ws`` connection; the ``ws`` channel adapter, whose targets are session
    ids (every connection that sent to or subscribed to the session)."""

    name = "ws"
    capabilities = ChannelCaps(images=True)

    def __init__(self, settings: WebSocketSettings) -> None:
        self.settings = settings
        self.connections: set[WsConnection] = set()
        self._by_session: dict[str, set[WsConnection]] = {}
        self._seen = RecentIds(settings.dedupe_window)

    def attach(self, conn: WsConnection, session_id: str) -> None:
        conn.sessions.add(session_id)
        self._by_session.setdefault(session_id, set()).add(conn)

    def remove(self, conn: WsConnection) -> None:
        self.connections.discard(conn)
        for session_id in conn.sessions:
            peers = self._by_session.get(session_id)
            if peers is not None:
                peers.discard(conn)
                if not peers:
                    del self._by_session[session_id]

    def first_sighting(self, user: str, message_id: str) -> bool:
        """True the first time ``(user, message_id)`` is seen (bounded memory)."""
        return self._seen.first_sighting((user, message_id))

    async def run(self, inbound: InboundSink) -> None:
        """Nothing to poll: connections arrive through the ``/ws`` route, which starts
        their turns itself. Returns only when cancelled (shutdown)."""
        await asyncio.Event().wait()

    def _peers(self, target: str) -> list[WsConnection]:
        peers = [c for c in self._by_session.get(target, ()) if not c.closed]
        if not peers:
            raise UnknownTargetError(self.name, target)
        return peers

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        """A ``notice`` frame with ``out``'s text to every connection on session ``target``."""
        frame = {"type": "notice", "session_id": target, "turn_id": None, "text": out.text}
        sent = sum(1 for c in self._peers(target) if c.push(dict(frame)))
        return Receipt(self.name, target, sent)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        """The ``approval_requested`` frame to the session's connections that do not
        already follow its events (they see it as a turn event)."""
        frame = event_frame(request)
        for conn in self._peers(target):
            if target not in conn.subscriptions:
                conn.push(dict(frame))

    def health(self) -> ComponentHealth:
        return ComponentHealth(HealthState.UP, data={"connections": len(self.connections)})


async def _authenticate(websocket: WebSocket, services: GatewayServices) -> bool:
    """Header token (checked before accept) or the first ``auth`` frame."""
    guard = services.auth
    header = bearer_token(websocket.headers.get("authorization"))
    if header is not None and not guard.check(header):
        await websocket.send_denial_response(
            JSONResponse(unauthorized().body(), 401, headers={"WWW-Authenticate": "Bearer"})
        )
        return False
    await websocket.accept()
    if header is not None or not guard.required:
        return True
    try:
        raw = await asyncio.wait_for(
            websocket.receive_text(), services.settings.ws.auth_timeout_seconds
        )
        frame = CLIENT_FRAME.validate_json(raw)
    except (TimeoutError, ValidationError, WebSocketDisconnect, KeyError):
        frame = None
    if not isinstance(frame, AuthFrame) or not guard.check(frame.token):
        with contextlib.suppress(Exception):
            await websocket.send_text(
                json.dumps(error_frame("unauthorized", "send {type: auth, token} first"))
            )
            await websocket.close(CLOSE_UNAUTHORIZED, "unauthorized")
        return False
    decision = await services.limiter.check("authenticated", token_key(frame.token))
    if not decision.allowed:
        with contextlib.suppress(Exception):
            await websocket.send_text(
                json.dumps(
                    error_frame(
                        "rate_limited", "rate limit exceeded", retry_after=decision.reset_after
                    )
                )
            )
            await websocket.close(CLOSE_POLICY, "rate limited")
        return False
    return True


async def websocket_endpoint(websocket: WebSocket) -> None:
    """The ``/ws`` protocol (docs/api.md)."""
    services: GatewayServices = websocket.app.state.services
    if not await _authenticate(websocket, services):
        return
    hub = services.ws_hub
    conn = WsConnection(websocket, services.settings.ws.send_buffer)
    hub.connections.add(conn)
    conn.sender = asyncio.create_task(conn.run_sender())
    conn.push(AUTHENTICATED)
    limits = {IMAGE_LIMITS: services.runtime.config.core.attachments.limits()}
    try:
        while not conn.closed:
            raw = await websocket.receive_text()
            try:
                frame = CLIENT_FRAME.validate_json(raw, context=limits)
            except ValidationError as exc:
                conn.push(error_frame("invalid_frame", _first_error(exc)))
                continue
            await _dispatch(conn, frame, services)
    except WebSocketDisconnect:
        pass
    except RuntimeError as exc:  # the socket closed under us (slow consumer)
        logger.debug("websocket closed: {}", exc)
    finally:
        hub.remove(conn)
        await conn.shutdown()


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid"))


async def _dispatch(conn: WsConnection, frame: object, services: GatewayServices) -> None:
    conversation = services.conversation
    if isinstance(frame, PingFrame):
        conn.push(PONG)
    elif isinstance(frame, AuthFrame):
        conn.push(AUTHENTICATED)
    elif isinstance(frame, MessageFrame):
        await _on_message(conn, frame, services)
    elif isinstance(frame, CancelFrame):
        await conversation.stop(frame.session_id)
    elif isinstance(frame, ApprovalFrame):
        if await conversation.answer(frame.request_id, frame.decision) != "answered":
            conn.push(
                error_frame(
                    "approval_not_pending",
                    "no such approval request is pending",
                    session_id=frame.session_id,
                    request_id=frame.request_id,
                )
            )
    elif isinstance(frame, SubscribeFrame):
        await _on_subscribe(conn, frame, services)


async def _on_subscribe(
    conn: WsConnection, frame: SubscribeFrame, services: GatewayServices
) -> None:
    session_id = frame.session_id
    if session_id in conn.subscriptions:
        return
    try:
        subscription = await services.conversation.subscribe(session_id, after_seq=frame.after_seq)
    except UnknownSessionError:
        conn.push(error_frame("unknown_session", "no such session", session_id=session_id))
        return
    except ReplayGapError as exc:
        conn.push(error_frame("replay_gap", str(exc), session_id=session_id, floor=exc.floor))
        return
    except FutureSequenceError as exc:
        conn.push(error_frame("future_seq", str(exc), session_id=session_id, seq=exc.last_seq))
        return
    services.ws_hub.attach(conn, session_id)
    conn.push(subscribed_frame(session_id, subscription.opened_at_seq, subscription.replayed))
    conn.subscriptions[session_id] = conn.forward(subscription, subscription.close)


async def _on_message(conn: WsConnection, frame: MessageFrame, services: GatewayServices) -> None:
    user = ws_user_id(frame.user, services.owner)
    if frame.id is not None and not services.ws_hub.first_sighting(user, frame.id):
        conn.push(error_frame("duplicate", "message id already received", id=frame.id))
        return
    agent = services.agents.resolve(frame.agent)
    if agent is None:
        conn.push(error_frame("unknown_agent", f"no agent {frame.agent!r}", id=frame.id))
        return
    request = TurnRequest(
        SessionAddress(user, agent, frame.channel),
        frame.content,
        session_id=frame.session_id,
        approval_mode=frame.approval_mode,
        source_message_id=frame.id,
    )
    session_id = services.conversation.session_id(request)
    conn.push(session_frame(session_id, agent))
    services.ws_hub.attach(conn, session_id)
    try:
        turn = await services.conversation.send(replace(request, session_id=session_id))
    except (StorageUnavailableError, DatabaseUnavailableError) as exc:
        logger.warning("ws message to {} refused: {}", session_id, exc)
        conn.push(error_frame(CODE, client_message(exc), id=frame.id, retry_after=retry_after(exc)))
        return
    except Exception as exc:
        logger.exception("ws message to {} failed", session_id)
        conn.push(error_frame("send_failed", f"{type(exc).__name__}: {exc}", id=frame.id))
        return
    if session_id not in conn.subscriptions:
        conn.forward(turn.events(), _nothing)
