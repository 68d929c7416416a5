"""The memory flush before compaction (seed 003): one hidden turn in which the model may
save durable facts with its memory tools. Nothing of it enters the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions, Provider
from beamclaw_obs import EventType, emit
from beamclaw_tools import SessionRef, ToolPolicy, ToolRegistry

FLUSH_INSTRUCTIONS = (
    "The conversation is about to be compacted and older messages will leave your context. "
    "Save any durable facts worth remembering (about the user, decisions, open tasks) with "
    "your memory tools now. If there is nothing to save, reply NO_REPLY."
)
MAX_ROUNDS = 3


async def memory_flush(
    provider: Provider,
    messages: Sequence[Message],
    tools: ToolRegistry,
    session: SessionRef,
    policy: ToolPolicy | None = None,
) -> int:
    """Run the hidden flush turn; returns how many memory tool calls were made."""
    definitions = tuple(d for d in tools.definitions(policy) if "memory" in d.name)
    if not definitions:
        return 0
    convo = [*messages, Message.system(FLUSH_INSTRUCTIONS)]
    calls = 0
    for _ in range(MAX_ROUNDS):
        completion = await provider.complete(convo, CompletionOptions(tools=definitions))
        reply = completion.message
        if not reply.tool_calls:
            break
        convo.append(reply)
        allowed = {d.name for d in definitions}
        for call in reply.tool_calls:
            calls += 1
            if call.name in allowed:
                result = await tools.execute(call, session, policy=policy)
                convo.append(
                    Message.tool(call.id, call.name, result.content, is_error=result.is_error)
                )
            else:
                convo.append(
                    Message.tool(
                        call.id, call.name, "Not available during the flush.", is_error=True
                    )
                )
    emit(EventType.MEMORY_FLUSH, session_id=session.session_id, tool_calls=calls)
    return calls
