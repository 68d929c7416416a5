"""``beamclaw mcp serve`` beside a running gateway: the MCP server's backend over its API.

When a gateway holds the home (and so its database and sessions), ``mcp serve`` cannot
run a second agent system on them; it attaches instead: :class:`GatewayConversationBackend`
implements :class:`beamclaw_mcp.serve.ConversationBackend` over the gateway's REST API and
``/ws``, so MCP clients see and drive the very sessions and approvals every other front
end does (and a turn an MCP client starts shows on a ``/ws`` client subscribed to it).

* ``send_message_and_wait`` sends over ``/ws`` and follows the turn's events until it ends
  or stops for an approval;
* approvals are listed and answered through ``/api/approvals``; after an answer the
  session's events are followed (subscribed *before* answering, so nothing is missed) until
  the turn ends or asks again, bounded by ``follow_seconds``.

Error contract (the port's): an unknown conversation or approval is ``LookupError``, an
approval answered already ``ValueError``, no answer in time ``TimeoutError``; a gateway
that stops answering is :class:`~beamclaw_cli.errors.GatewayUnreachableError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncGenerator
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from beamclaw_cli.errors import GatewayUnreachableError
from beamclaw_mcp.serve import (
    ApprovalOutcome,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
    iso_time,
    no_answer_in_time,
    preview,
)

MCP_CHANNEL = "mcp"
TERMINAL = {
    "turn_done": "idle",
    "turn_error": "error",
    "cancelled": "cancelled",
    "dropped": "dropped",
}
"""Terminal ``/ws`` frames and the conversation state each leaves."""


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        text = " ".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    else:
        text = content or ""
    calls = [
        f"[tool call {c['function']['name']} {c['function']['arguments']}]"
        for c in message.get("tool_calls") or []
    ]
    return "\n".join([text, *calls] if text else calls)


def _answer(frame: dict[str, Any]) -> str:
    if frame["type"] == "turn_done":
        return str(frame.get("text", ""))
    return str(frame.get("message") or frame.get("reason") or "")


class GatewayConversationBackend:
    """The MCP server's view of a running gateway (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        default_agent: str,
        user_id: str = "mcp:client",
        follow_seconds: float = 60.0,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._headers = headers
        self._http = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=30.0)
        self._ws_url = base_url.replace("http://", "ws://", 1) + "/ws"
        self.default_agent = default_agent
        self.user_id = user_id
        self.follow_seconds = follow_seconds

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------ HTTP and WebSocket

    async def _get(self, path: str, **params: Any) -> Any:
        try:
            response = await self._http.get(path, params=params or None)
        except httpx.TransportError as exc:
            raise GatewayUnreachableError(f"the gateway stopped answering: {exc}") from exc
        if response.status_code == 404:
            raise LookupError(response.json().get("error", {}).get("message", path))
        response.raise_for_status()
        return response.json()

    @contextlib.asynccontextmanager
    async def _socket(self) -> AsyncGenerator[ClientConnection]:
        try:
            async with connect(self._ws_url, additional_headers=self._headers) as ws:
                await self._frame(ws)  # authenticated
                yield ws
        except OSError as exc:
            raise GatewayUnreachableError(f"the gateway's /ws does not answer: {exc}") from exc

    @staticmethod
    async def _frame(ws: ClientConnection) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(await ws.recv())
        return frame

    # ------------------------------------------------------------ conversations

    async def list_conversations(
        self, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        sessions = [
            s
            for s in (await self._get("/api/sessions"))["sessions"]
            if s.get("parent_id") is None and (agent is None or s["agent_id"] == agent)
        ]
        out: list[ConversationSummary] = []
        for info in sessions[:limit]:
            detail = await self._get(f"/api/sessions/{info['session_id']}")
            messages = detail["messages"]
            last = preview(_content(messages[-1])) if messages else ""
            out.append(
                ConversationSummary(
                    id=info["session_id"],
                    agent=info["agent_id"],
                    channel=info.get("channel"),
                    state=info["state"],
                    updated_at=iso_time(info.get("last_activity_at")),
                    message_count=len(messages),
                    preview=last,
                )
            )
        return out

    async def read_messages(
        self, conversation_id: str, *, limit: int = 50, before_sequence: int | None = None
    ) -> list[MessageView]:
        detail = await self._get(f"/api/sessions/{conversation_id}")
        rows = [
            m for m in detail["messages"] if before_sequence is None or m["seq"] < before_sequence
        ]
        return [
            MessageView(
                sequence=m["seq"],
                role=m["role"],
                content=_content(m),
                created_at=iso_time(m.get("created_at")),
                tool_name=m.get("name") if m["role"] == "tool" else None,
            )
            for m in rows[-limit:]
        ]

    async def send_message_and_wait(
        self,
        conversation_id: str | None,
        text: str,
        *,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        if conversation_id is not None:
            session = (await self._get(f"/api/sessions/{conversation_id}"))["session"]
            if agent is not None and agent != session["agent_id"]:
                raise ValueError(
                    f"conversation {conversation_id} belongs to agent {session['agent_id']!r}, "
                    f"not {agent!r}"
                )
            agent, user, session_id = session["agent_id"], session["user_id"], conversation_id
        else:
            agent, user = agent or self.default_agent, self.user_id
            session_id = f"session-{uuid.uuid4().hex}"
        frame = {
            "type": "message",
            "id": uuid.uuid4().hex,
            "text": text,
            "agent": agent,
            "user": user,
            "session_id": session_id,
            "channel": MCP_CHANNEL,
        }
        draft: list[str] = []
        try:
            async with asyncio.timeout(wait_seconds), self._socket() as ws:
                await ws.send(json.dumps(frame))
                while True:
                    event = await self._frame(ws)
                    kind = event.get("type")
                    if kind == "error":
                        raise ValueError(str(event.get("message")))
                    if kind == "text":
                        draft.append(str(event.get("text", "")))
                    elif kind == "retrying" and event.get("discard_partial"):
                        draft.clear()
                    elif kind == "approval_requested":
                        pending = await self.list_pending_approvals(session_id)
                        return SendResult(
                            conversation_id=session_id,
                            answer="".join(draft),
                            state="awaiting_approval",
                            pending_approvals=[p.id for p in pending] or [str(event["request_id"])],
                        )
                    elif kind in TERMINAL:
                        return SendResult(
                            conversation_id=session_id, answer=_answer(event), state=TERMINAL[kind]
                        )
        except TimeoutError:
            raise no_answer_in_time(wait_seconds, session_id) from None

    # ------------------------------------------------------------ approvals

    async def list_pending_approvals(
        self, conversation_id: str | None = None
    ) -> list[PendingApproval]:
        if conversation_id is not None:
            await self._get(f"/api/sessions/{conversation_id}")  # LookupError when unknown
        params = {"session_id": conversation_id} if conversation_id else {}
        return [
            PendingApproval(
                id=a["id"],
                conversation_id=a["session_id"],
                tool=a["tool"],
                arguments=a["args"],
                reason=f"agent {a['agent_id']} wants to run {a['tool']}",
            )
            for a in (await self._get("/api/approvals", **params))["approvals"]
        ]

    async def respond_to_approval(
        self, approval_id: str, *, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        pending = next(
            (a for a in await self.list_pending_approvals() if a.id == approval_id), None
        )
        if pending is None:
            raise LookupError(f"no pending approval {approval_id!r} (answered or expired?)")
        session_id = pending.conversation_id
        async with self._socket() as ws:
            await ws.send(json.dumps({"type": "subscribe", "session_id": session_id}))
            opened = await self._frame(ws)
            if opened.get("type") != "subscribed":
                raise LookupError(str(opened.get("message", f"no conversation {session_id!r}")))
            response = await self._http.post(
                f"/api/approvals/{approval_id}",
                json={"decision": "approve" if approve else "deny"},
            )
            if response.status_code == 404:
                raise LookupError(f"no pending approval {approval_id!r} (answered or expired?)")
            if response.status_code == 409:
                raise ValueError(f"approval {approval_id!r} is no longer pending")
            response.raise_for_status()
            state = await self._follow(ws)
        return ApprovalOutcome(
            id=approval_id, approved=approve, conversation_id=session_id, state=state
        )

    async def _follow(self, ws: ClientConnection) -> str:
        """Follow the subscribed session until its turn ends or asks for another approval."""
        try:
            async with asyncio.timeout(self.follow_seconds):
                while True:
                    kind = (await self._frame(ws)).get("type")
                    if kind in TERMINAL:
                        return TERMINAL[kind]
                    if kind == "approval_requested":
                        return "awaiting_approval"
        except TimeoutError:
            return "running"
