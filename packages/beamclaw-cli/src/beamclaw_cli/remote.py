"""The :class:`~beamclaw_core.conversation.Conversation` port of a running gateway, over
its REST API and ``/ws``: what ``beamclaw mcp serve`` attaches with (and the TUI talks to
a daemon with), so a front end in this process drives the very sessions and approvals
every other front end does.

* ``send`` opens a WebSocket for the turn, sends the message and returns once the gateway
  named the turn; the turn's events are read in the background (decoded back into the
  core's events) until its terminal one, then the socket closes. A reader that stops
  reading loses nothing: the gateway runs the turn detached.
* ``subscribe`` is one WebSocket subscribed from a sequence number; ``close`` ends it.
* Approvals, stop, ``/new``, history pages and the list of sessions go over REST.

Errors are the port's: an unknown session raises
:class:`~beamclaw_core.sessions.UnknownSessionError`, a replay from too far back
:class:`~beamclaw_core.sessions.ReplayGapError`, from the future
:class:`~beamclaw_core.sessions.FutureSequenceError`; a message the gateway refuses is
``ValueError``; a gateway that stops answering is
:class:`~beamclaw_cli.errors.GatewayUnreachableError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from beamclaw_cli.errors import GatewayUnreachableError
from beamclaw_core.conversation import (
    AnswerOutcome,
    DetachedTurn,
    HistoryEntry,
    HistoryPage,
    OnDone,
    OnEvent,
    PendingApprovalInfo,
    TurnRequest,
)
from beamclaw_core.loop import EventDecodeError, TurnEvent
from beamclaw_core.loop.inputs import Decision
from beamclaw_core.messages import Message, Role
from beamclaw_core.sessions import (
    FutureSequenceError,
    ReplayGapError,
    SessionInfo,
    TurnFold,
    TurnResult,
    UnknownSessionError,
)
from beamclaw_obs import cancel_and_wait
from beamclaw_tools import ContentPart, ImagePart, TextPart, ToolCall

_CORE_TYPES = {"turn_done": "done", "turn_error": "error"}
"""``/ws`` frame types renamed back to the core's event types."""
_DECISIONS: dict[Decision, str] = {"yes": "approve", "no": "deny", "always": "always"}


def event_of(frame: dict[str, Any]) -> TurnEvent | None:
    """The core event a ``/ws`` frame carries; None for the protocol's own frames."""
    kind = frame.get("type")
    if not isinstance(kind, str) or kind in {"session", "subscribed", "error", "pong"}:
        return None
    try:
        return TurnEvent.from_dict({**frame, "type": _CORE_TYPES.get(kind, kind)})
    except EventDecodeError:
        return None


def _part(raw: dict[str, Any]) -> ContentPart:
    if raw.get("type") == "image_url":
        url = str(raw.get("image_url", {}).get("url", ""))
        head, _, data = url.partition(",")
        media = head.removeprefix("data:").removesuffix(";base64")
        return ImagePart(media_type=media, data=data)
    return TextPart(text=str(raw.get("text", "")))


def message_of(raw: dict[str, Any]) -> Message:
    """A message as ``GET /api/sessions/{id}`` shows it, back as the core's message."""
    content = raw.get("content")
    body: str | tuple[ContentPart, ...] = (
        tuple(_part(p) for p in content) if isinstance(content, list) else str(content or "")
    )
    calls: list[ToolCall] = []
    for call in raw.get("tool_calls") or []:
        text = str(call["function"]["arguments"])
        try:
            args = json.loads(text)
        except json.JSONDecodeError:
            args = None
        if isinstance(args, dict):
            calls.append(ToolCall(id=call["id"], name=call["function"]["name"], args=args))
        else:
            calls.append(ToolCall(id=call["id"], name=call["function"]["name"], raw_args=text))
    return Message(
        role=Role(raw["role"]),
        content=body,
        tool_calls=tuple(calls),
        tool_call_id=raw.get("tool_call_id"),
        name=raw.get("name"),
    )


def _info(raw: dict[str, Any]) -> SessionInfo:
    return SessionInfo(
        raw["session_id"],
        raw["agent_id"],
        raw["user_id"],
        raw.get("channel"),
        raw["state"],
        int(raw.get("queued", 0)),
        float(raw.get("last_activity_at", 0.0)),
        raw.get("error"),
        raw.get("parent_id"),
    )


class _Socket:
    """One authenticated ``/ws`` connection read by one task."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def frame(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(await self.ws.recv())
        except ConnectionClosed as exc:
            raise GatewayUnreachableError(f"the gateway closed /ws: {exc}") from exc
        return data

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()


class RemoteTurn(DetachedTurn):
    """A turn sent to the gateway, its events read from the socket in the background."""

    async def read(
        self, sock: _Socket, first: TurnEvent, on_event: OnEvent | None, on_done: OnDone | None
    ) -> None:
        """Pump the turn's events from ``first`` to its terminal one, then close."""
        fold = TurnFold(self.session_id, self.turn_id)
        result: TurnResult | None = None
        event: TurnEvent | None = first
        try:
            while result is None:
                if event is not None and event.session_id == self.session_id:
                    result = fold.feed(event)
                    self.put(event)
                    if on_event is not None:
                        await on_event(event)
                if result is None:
                    event = event_of(await sock.frame())
        except Exception as exc:
            result = TurnResult(
                self.session_id,
                self.turn_id,
                "failed",
                error_kind="unreachable",
                error_message=f"lost the gateway while the turn ran: {exc}",
            )
        finally:
            await sock.close()
        self.finish(result)
        if on_done is not None:
            await on_done(result)


class RemoteStream:
    """A session's events from a ``/ws`` subscription (the port's ``EventStream``)."""

    def __init__(self, sock: _Socket, session_id: str, opened_at_seq: int, replayed: int) -> None:
        self._sock = sock
        self._session_id = session_id
        self._opened_at_seq = opened_at_seq
        self._replayed = replayed
        self._closed = False

    @property
    def opened_at_seq(self) -> int:
        return self._opened_at_seq

    @property
    def replayed(self) -> int:
        return self._replayed

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TurnEvent]:
        while not self._closed:
            try:
                frame = await self._sock.frame()
            except GatewayUnreachableError:
                if self._closed:
                    return
                raise
            event = event_of(frame)
            if event is not None and event.session_id == self._session_id:
                yield event

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._closing = asyncio.ensure_future(self._sock.close())


class RemoteConversation:
    """A running gateway's conversations (see the module docstring)."""

    def __init__(self, base_url: str, *, token: str | None) -> None:
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=base_url, headers=self._headers, timeout=30.0)
        self._ws_url = base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        self._ws_url += "/ws"
        self._readers: set[asyncio.Task[None]] = set()

    async def aclose(self) -> None:
        """Stop reading turns and close the HTTP client."""
        await cancel_and_wait(list(self._readers))
        await self._http.aclose()

    # ------------------------------------------------------------ transport

    async def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            return await self._http.request(method, path, **kw)
        except httpx.TransportError as exc:
            raise GatewayUnreachableError(f"the gateway stopped answering: {exc}") from exc

    async def _json(self, method: str, path: str, session_id: str | None = None, **kw: Any) -> Any:
        response = await self._request(method, path, **kw)
        if response.status_code == 404 and session_id is not None:
            raise UnknownSessionError(session_id)
        response.raise_for_status()
        return response.json()

    async def _socket(self) -> _Socket:
        try:
            ws = await connect(
                self._ws_url, additional_headers=self._headers, open_timeout=5.0, max_size=None
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            hint = " (check [gateway.http] token)" if status in (401, 403) else ""
            raise GatewayUnreachableError(
                f"the daemon refused the WebSocket at {self._ws_url}: HTTP {status}{hint}"
            ) from exc
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise GatewayUnreachableError(
                f"cannot open the WebSocket at {self._ws_url}: {exc}"
            ) from exc
        sock = _Socket(ws)
        first = await sock.frame()
        if first.get("type") != "authenticated":
            await sock.close()
            raise GatewayUnreachableError(f"/ws refused this client: {first.get('message')}")
        return sock

    async def check(self) -> None:
        """Open and close one ``/ws`` connection: a refused token or a closed port
        raises :class:`GatewayUnreachableError` now rather than on the first message."""
        await (await self._socket()).close()

    # ------------------------------------------------------------ the port

    async def send(
        self,
        request: TurnRequest,
        *,
        on_event: OnEvent | None = None,
        on_done: OnDone | None = None,
    ) -> RemoteTurn:
        if not isinstance(request.content, str):
            raise ValueError("a message with attachments cannot be sent over /ws yet")
        address = request.address
        sock = await self._socket()
        try:
            await sock.send(
                {
                    "type": "message",
                    "id": request.source_message_id or uuid.uuid4().hex,
                    "text": request.content,
                    "agent": address.agent_id,
                    "user": address.user_id,
                    "session_id": request.session_id,
                    "channel": address.channel,
                    "approval_mode": request.approval_mode,
                }
            )
            session_id: str | None = None
            while True:
                frame = await sock.frame()
                if frame.get("type") == "error":
                    raise ValueError(str(frame.get("message", "the gateway refused the message")))
                if frame.get("type") == "session":
                    session_id = str(frame["session_id"])
                    continue
                event = event_of(frame)
                if event is not None and event.turn_id is not None and session_id is not None:
                    break
        except BaseException:
            await sock.close()
            raise
        turn = RemoteTurn(session_id, event.turn_id)
        task = asyncio.create_task(turn.read(sock, event, on_event, on_done))
        self._readers.add(task)
        task.add_done_callback(self._readers.discard)
        return turn

    async def subscribe(self, session_id: str, *, after_seq: int | None = None) -> RemoteStream:
        sock = await self._socket()
        try:
            await sock.send({"type": "subscribe", "session_id": session_id, "after_seq": after_seq})
            opened = await sock.frame()
        except BaseException:
            await sock.close()
            raise
        if opened.get("type") == "subscribed":
            return RemoteStream(
                sock, session_id, int(opened.get("seq", 0)), int(opened.get("replayed", 0))
            )
        await sock.close()
        code = opened.get("code")
        if code == "replay_gap":
            raise ReplayGapError(session_id, after_seq or 0, int(opened.get("floor", 0)))
        if code == "future_seq":
            raise FutureSequenceError(session_id, after_seq or 0, int(opened.get("seq", 0)))
        raise UnknownSessionError(session_id)

    async def answer(self, approval_id: str, decision: Decision) -> AnswerOutcome:
        response = await self._request(
            "POST", f"/api/approvals/{approval_id}", json={"decision": _DECISIONS[decision]}
        )
        if response.status_code == 404:
            return "unknown"
        if response.status_code == 409:
            return "already_answered"
        response.raise_for_status()
        return "answered"

    async def pending_approvals(self, session_id: str | None = None) -> list[PendingApprovalInfo]:
        params = {"session_id": session_id} if session_id else None
        body = await self._json("GET", "/api/approvals", params=params)
        return [
            PendingApprovalInfo(a["session_id"], a["id"], a["agent_id"], a["tool"], a["args"])
            for a in body["approvals"]
        ]

    async def stop(self, session_id: str) -> int:
        body = await self._json("POST", "/api/stop", session_id, json={"session_id": session_id})
        return int(body["cleared"])

    async def new(self, session_id: str) -> None:
        await self._json("POST", f"/api/sessions/{session_id}/reset", session_id)

    async def history(
        self, session_id: str, *, limit: int | None = 50, before_seq: int | None = None
    ) -> HistoryPage:
        params: dict[str, int] = {}
        if limit is not None:
            params["limit"] = limit
        if before_seq is not None:
            params["before_seq"] = before_seq
        body = await self._json("GET", f"/api/sessions/{session_id}", session_id, params=params)
        entries = tuple(
            HistoryEntry(m["seq"], message_of(m), m.get("created_at")) for m in body["messages"]
        )
        return HistoryPage(
            session_id,
            entries,
            bool(body.get("has_more", False)),
            int(body.get("total_messages", len(entries))),
            int(body.get("event_seq", 0)),
        )

    async def info(self, session_id: str) -> SessionInfo:
        body = await self._json(
            "GET", f"/api/sessions/{session_id}", session_id, params={"limit": 0}
        )
        return _info(body["session"])

    async def sessions(self, *, agent: str | None = None) -> list[SessionInfo]:
        body = await self._json("GET", "/api/sessions")
        infos = [
            _info(s)
            for s in body["sessions"]
            if s.get("parent_id") is None and (agent is None or s["agent_id"] == agent)
        ]
        infos.sort(key=lambda s: s.last_activity_at, reverse=True)
        return infos
