"""An in-memory ConversationBackend for the ``beamclaw mcp serve`` tests.

Run as a script it serves itself over stdio (what ``beamclaw mcp serve`` does once the
lead binds the real backend). The agent answers ``You said: <text>``; a message
containing ``approve`` stops the turn for an approval of a ``shell`` call.
"""

from __future__ import annotations

import asyncio
import itertools

from beamclaw_mcp.serve import (
    ApprovalOutcome,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
    serve_stdio,
)


class MemoryBackend:
    def __init__(self) -> None:
        self.messages: dict[str, list[MessageView]] = {}
        self.agents: dict[str, str] = {}
        self.approvals: dict[str, PendingApproval] = {}
        self._ids = itertools.count(1)

    async def list_conversations(
        self, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        out = [
            ConversationSummary(
                id=cid,
                agent=self.agents[cid],
                message_count=len(msgs),
                preview=msgs[-1].content[:40] if msgs else "",
            )
            for cid, msgs in self.messages.items()
            if agent is None or self.agents[cid] == agent
        ]
        return list(reversed(out))[:limit]

    async def read_messages(
        self, conversation_id: str, *, limit: int = 50, before_sequence: int | None = None
    ) -> list[MessageView]:
        if conversation_id not in self.messages:
            raise LookupError(f"no conversation {conversation_id!r}")
        msgs = [
            m
            for m in self.messages[conversation_id]
            if before_sequence is None or m.sequence < before_sequence
        ]
        return msgs[-limit:]

    async def send_message_and_wait(
        self,
        conversation_id: str | None,
        text: str,
        *,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        if conversation_id is None:
            conversation_id = f"c{next(self._ids)}"
            self.messages[conversation_id] = []
            self.agents[conversation_id] = agent or "default"
        elif conversation_id not in self.messages:
            raise LookupError(f"no conversation {conversation_id!r}")
        if text == "boom":
            raise RuntimeError("database exploded with password=hunter2")
        if text == "slow":
            await asyncio.sleep(wait_seconds + 1)
        msgs = self.messages[conversation_id]
        msgs.append(MessageView(sequence=len(msgs) + 1, role="user", content=text))
        if "approve" in text:
            approval = PendingApproval(
                id=f"a{next(self._ids)}",
                conversation_id=conversation_id,
                tool="shell",
                arguments={"command": "ls"},
                reason="runs a command",
            )
            self.approvals[approval.id] = approval
            return SendResult(
                conversation_id=conversation_id,
                answer="",
                state="awaiting_approval",
                pending_approvals=[approval.id],
            )
        answer = f"You said: {text}"
        msgs.append(MessageView(sequence=len(msgs) + 1, role="assistant", content=answer))
        return SendResult(conversation_id=conversation_id, answer=answer)

    async def list_pending_approvals(
        self, conversation_id: str | None = None
    ) -> list[PendingApproval]:
        return [
            a
            for a in self.approvals.values()
            if conversation_id is None or a.conversation_id == conversation_id
        ]

    async def respond_to_approval(
        self, approval_id: str, *, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        approval = self.approvals.pop(approval_id, None)
        if approval is None:
            raise LookupError(f"no pending approval {approval_id!r}")
        msgs = self.messages[approval.conversation_id]
        verdict = "ran shell" if approve else f"denied: {reason or 'no reason'}"
        msgs.append(MessageView(sequence=len(msgs) + 1, role="assistant", content=verdict))
        return ApprovalOutcome(
            id=approval_id, approved=approve, conversation_id=approval.conversation_id
        )


if __name__ == "__main__":
    asyncio.run(serve_stdio(MemoryBackend()))
