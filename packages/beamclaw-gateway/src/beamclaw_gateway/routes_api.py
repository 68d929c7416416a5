"""``/api``: the REST control API (sessions, stop, deliver, status, standing ``/always``
approvals), token-guarded.

Messages are returned in the OpenAI chat shape (``role``, ``content``, ``tool_calls``,
``tool_call_id``) plus ``seq``, ``created_at`` and ``usage``.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, Field

from beamclaw_core import Message
from beamclaw_core.approvals import AlwaysGrant
from beamclaw_core.channels import UnknownChannelError, UnknownTargetError
from beamclaw_core.sessions import SessionAddress, SessionInfo, UnknownSessionError
from beamclaw_gateway._version import __version__
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of
from beamclaw_tools import TextPart

router = APIRouter(prefix="/api", tags=["api"], dependencies=[Depends(require_token)])

SessionId = Path(min_length=1, max_length=128, description="A session id.")
AgentId = Path(min_length=1, max_length=128, description="An agent id.")
UserId = Path(min_length=1, max_length=256, description="A person's user id.")
ToolName = Path(min_length=1, max_length=256, description="A tool name.")


class SessionSummary(BaseModel):
    session_id: str
    agent_id: str
    user_id: str
    channel: str | None
    state: str
    queued: int
    last_activity_at: float
    error: str | None = None
    parent_id: str | None = None
    message_count: int | None = None
    """Stored messages (in ``GET /api/sessions``; absent elsewhere)."""

    @classmethod
    def of(cls, info: SessionInfo) -> SessionSummary:
        return cls.model_validate(info, from_attributes=True)


class SessionList(BaseModel):
    sessions: list[SessionSummary]


class FunctionCall(BaseModel):
    name: str
    arguments: str
    """The arguments as a JSON string (the OpenAI shape)."""


class ToolCallOut(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class MessageOut(BaseModel):
    seq: int
    role: str
    content: str | list[dict[str, Any]] | None
    tool_calls: list[ToolCallOut] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    created_at: float
    usage: dict[str, Any] | None = None


class SessionDetail(BaseModel):
    session: SessionSummary
    messages: list[MessageOut]
    event_seq: int
    """The session's latest event number, taken before the messages were read: a client
    that shows them and then subscribes (``/ws``) with this ``after_seq`` misses nothing
    (an event of a turn whose messages it already shows may come again)."""
    has_more: bool = False
    """Older messages exist before the first one shown (a page read with ``limit``)."""
    total_messages: int = 0
    """How many messages the session holds in all."""


class StopRequest(BaseModel):
    session_id: str = Field(min_length=1, max_length=128)


class StopResult(BaseModel):
    session_id: str
    cleared: int
    """Queued messages removed (the running turn, if any, is cancelled as well)."""


class DeliverRequest(BaseModel):
    channel: str = Field(min_length=1, max_length=64)
    target: str = Field(min_length=1, max_length=256)
    message: str = Field(min_length=1, max_length=65_536)


class DeliverResult(BaseModel):
    delivered: int
    """Recipients that received the message."""


class OkResult(BaseModel):
    ok: bool = True


class AlwaysGrantOut(BaseModel):
    agent_id: str
    user_id: str
    tool: str
    granted_at: float
    """Epoch seconds of the ``always`` answer."""
    session_id: str | None
    """The session the grant was given in (the grant outlives it)."""

    @classmethod
    def of(cls, grant: AlwaysGrant) -> AlwaysGrantOut:
        return cls.model_validate(grant, from_attributes=True)


class AlwaysGrantList(BaseModel):
    grants: list[AlwaysGrantOut]


class RevokeResult(BaseModel):
    revoked: int
    """Grants ended; that person's sessions ask again from their next turn."""


class StatusBody(BaseModel):
    version: str
    uptime_seconds: float
    status: str
    sessions: int
    busy_sessions: int
    running_http_turns: int
    agents: list[str]
    channels: list[str]
    websocket_connections: int
    time: float
    owner: str
    """Who a ``/v1`` request or ``/ws`` message that names no user is (``local:<login>``)."""
    owner_sessions: dict[str, str]
    """Per agent, the session such a message goes to (no ``session_id`` given, channel
    ``ws``): where the web page finds the owner's conversation to show."""


def _not_found(session_id: str) -> ApiError:
    return ApiError(404, f"no session {session_id!r}", code="session_not_found")


def _content(message: Message) -> str | list[dict[str, Any]] | None:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        else:
            url = f"data:{part.media_type};base64,{part.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def message_out(seq: int, created_at: float, message: Message) -> MessageOut:
    calls = [
        ToolCallOut(
            id=c.id,
            function=FunctionCall(
                name=c.name, arguments=c.raw_args if c.raw_args is not None else json.dumps(c.args)
            ),
        )
        for c in message.tool_calls
    ]
    return MessageOut(
        seq=seq,
        role=message.role.value,
        content=_content(message),
        tool_calls=calls or None,
        tool_call_id=message.tool_call_id,
        name=message.name,
        created_at=created_at,
        usage=message.usage.model_dump(mode="json") if message.usage is not None else None,
    )


@router.get("/sessions", response_model=SessionList, responses=error_responses(401, 429))
async def list_sessions(request: Request) -> SessionList:
    """Every top-level session, most recently active first, with its message count."""
    core = services_of(request).core()
    infos = await core.list_sessions()
    counts = await core.store.message_counts()
    return SessionList(
        sessions=[
            SessionSummary.of(i).model_copy(update={"message_count": counts.get(i.session_id, 0)})
            for i in infos
        ]
    )


@router.get(
    "/sessions/{session_id}",
    response_model=SessionDetail,
    responses=error_responses(401, 404, 429),
)
async def get_session(
    request: Request,
    session_id: str = SessionId,
    limit: int | None = Query(default=None, ge=0, le=10_000),
    before_seq: int | None = Query(default=None, ge=1),
) -> SessionDetail:
    """A session's metadata and its stored messages in order: every one, or the last
    ``limit`` (only those numbered below ``before_seq`` when given; ``has_more`` says
    whether older ones exist)."""
    services = services_of(request)
    try:
        page = await services.conversation.history(session_id, limit=limit, before_seq=before_seq)
        info = await services.core().status(session_id)
    except UnknownSessionError as exc:
        raise _not_found(session_id) from exc
    messages = [message_out(e.seq, e.created_at or 0.0, e.message) for e in page.entries]
    return SessionDetail(
        session=SessionSummary.of(info),
        messages=messages,
        event_seq=page.event_seq,
        has_more=page.has_more,
        total_messages=page.total,
    )


@router.delete(
    "/sessions/{session_id}", response_model=OkResult, responses=error_responses(401, 404, 429)
)
async def delete_session(request: Request, session_id: str = SessionId) -> OkResult:
    """Stop the session and delete it with its history."""
    if not await services_of(request).core().delete(session_id):
        raise _not_found(session_id)
    return OkResult()


@router.post(
    "/sessions/{session_id}/reset",
    response_model=OkResult,
    responses=error_responses(401, 404, 429),
)
async def reset_session(request: Request, session_id: str = SessionId) -> OkResult:
    """Cancel, clear the queue and start a fresh context (stored history stays)."""
    try:
        await services_of(request).conversation.new(session_id)
    except UnknownSessionError as exc:
        raise _not_found(session_id) from exc
    return OkResult()


@router.post("/stop", response_model=StopResult, responses=error_responses(401, 404, 429))
async def stop(request: Request, body: StopRequest) -> StopResult:
    """``/stop``: cancel the running turn and clear the session's queue."""
    services = services_of(request)
    if await services.core().store.get(body.session_id) is None:
        raise _not_found(body.session_id)
    cleared = await services.conversation.stop(body.session_id)
    return StopResult(session_id=body.session_id, cleared=cleared)


@router.post("/deliver", response_model=DeliverResult, responses=error_responses(401, 404, 429))
async def deliver(request: Request, body: DeliverRequest) -> DeliverResult:
    """Deliver a message to a channel target (``ws``: a session id with open connections)."""
    try:
        receipt = await services_of(request).channels.deliver(
            body.channel, body.target, body.message
        )
    except UnknownChannelError as exc:
        raise ApiError(404, str(exc), code="unknown_channel", param="channel") from exc
    except UnknownTargetError as exc:
        raise ApiError(404, str(exc), code="unknown_target", param="target") from exc
    return DeliverResult(delivered=receipt.delivered)


@router.get(
    "/approvals/always", response_model=AlwaysGrantList, responses=error_responses(401, 429)
)
async def list_always(
    request: Request,
    agent_id: str | None = Query(default=None, min_length=1, max_length=128),
    user_id: str | None = Query(default=None, min_length=1, max_length=256),
) -> AlwaysGrantList:
    """Standing ``/always`` grants (of one agent and/or person), by agent, person, tool."""
    grants = await services_of(request).core().always_grants(agent_id=agent_id, user_id=user_id)
    return AlwaysGrantList(grants=[AlwaysGrantOut.of(g) for g in grants])


@router.delete(
    "/approvals/always/{agent_id}/{user_id}/{tool}",
    response_model=RevokeResult,
    responses=error_responses(401, 404, 429),
)
async def revoke_always(
    request: Request, agent_id: str = AgentId, user_id: str = UserId, tool: str = ToolName
) -> RevokeResult:
    """End one person's standing grant of one tool to one agent (404 when there is none)."""
    revoked = await services_of(request).core().revoke_always(agent_id, user_id, tool)
    if not revoked:
        raise ApiError(
            404,
            f"{user_id!r} has no standing grant of {tool!r} for agent {agent_id!r}",
            code="grant_not_found",
        )
    return RevokeResult(revoked=revoked)


@router.delete(
    "/approvals/always/{agent_id}/{user_id}",
    response_model=RevokeResult,
    responses=error_responses(401, 429),
)
async def revoke_all_always(
    request: Request, agent_id: str = AgentId, user_id: str = UserId
) -> RevokeResult:
    """End every standing grant one person gave one agent (``revoked`` may be 0)."""
    return RevokeResult(revoked=await services_of(request).core().revoke_always(agent_id, user_id))


@router.get("/status", response_model=StatusBody, responses=error_responses(401, 429))
async def status(request: Request) -> StatusBody:
    """Gateway status: sessions, agents, channels and connections."""
    services = services_of(request)
    sessions = await services.core().list_sessions()
    agents = services.agents.ids()
    return StatusBody(
        version=__version__,
        uptime_seconds=round(services.runtime.uptime_seconds, 3),
        status=services.runtime.health.overall().value,
        sessions=len(sessions),
        busy_sessions=sum(1 for s in sessions if s.state not in ("idle", "error")),
        running_http_turns=services.conversation.running,
        agents=agents,
        channels=services.channels.names(),
        websocket_connections=len(services.ws_hub.connections),
        time=time.time(),
        owner=services.owner,
        owner_sessions={
            agent: services.core().session_id(SessionAddress(services.owner, agent, "ws"))
            for agent in agents
        },
    )
