"""``/api/approvals``: pending tool approvals, listed and answered from any client.

A turn that stops for an approval — started over ``/v1`` in ``wait`` mode, ``/ws``, the
TUI, a webhook — waits for one answer, whoever gives it: this route, a ``/ws``
``approval`` frame, ``/yes`` in the session, ``mcp serve``. The first answer stands; a
second one is refused with 409, an id no session has pending with 404. Pending approvals
outlive a restart (the turn asks again with the same id).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel

from beamclaw_core.conversation import PendingApprovalInfo
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of

router = APIRouter(prefix="/api", tags=["api"], dependencies=[Depends(require_token)])

ApprovalId = Path(min_length=1, max_length=256, description="A pending approval's id.")

_DECISIONS: dict[str, Literal["yes", "no", "always"]] = {
    "approve": "yes",
    "deny": "no",
    "always": "always",
}


class PendingApprovalOut(BaseModel):
    id: str
    """The approval's id (the ``request_id`` of its ``approval_requested`` event)."""
    session_id: str
    agent_id: str
    tool: str
    args: dict[str, Any]

    @classmethod
    def of(cls, info: PendingApprovalInfo) -> PendingApprovalOut:
        return cls(
            id=info.request_id,
            session_id=info.session_id,
            agent_id=info.agent_id,
            tool=info.tool,
            args=info.args,
        )


class PendingApprovalList(BaseModel):
    approvals: list[PendingApprovalOut]


class ApprovalAnswer(BaseModel):
    decision: Literal["approve", "deny", "always"]
    """``always`` also approves this tool for this agent and person from now on."""


class ApprovalAnswered(BaseModel):
    approval: PendingApprovalOut
    decision: Literal["approve", "deny", "always"]


@router.get("/approvals", response_model=PendingApprovalList, responses=error_responses(401, 429))
async def list_pending(
    request: Request,
    session_id: str | None = Query(default=None, min_length=1, max_length=128),
) -> PendingApprovalList:
    """Tool calls waiting for a decision (of one session, or of every session)."""
    pending = await services_of(request).conversation.pending_approvals(session_id)
    return PendingApprovalList(approvals=[PendingApprovalOut.of(p) for p in pending])


@router.post(
    "/approvals/{approval_id}",
    response_model=ApprovalAnswered,
    responses=error_responses(401, 404, 409, 422, 429),
)
async def answer(
    request: Request, body: ApprovalAnswer, approval_id: str = ApprovalId
) -> ApprovalAnswered:
    """Approve, deny or always-approve a pending tool call; the turn goes on at once."""
    conversation = services_of(request).conversation
    outcome, info = await conversation.answer_with_info(approval_id, _DECISIONS[body.decision])
    if outcome == "already_answered":
        raise ApiError(
            409,
            f"approval {approval_id!r} was already answered; the first answer stands",
            code="approval_already_answered",
        )
    if info is None:
        raise ApiError(
            404,
            f"no pending approval {approval_id!r} (unknown, timed out, or its turn ended)",
            code="approval_not_found",
        )
    return ApprovalAnswered(approval=PendingApprovalOut.of(info), decision=body.decision)
