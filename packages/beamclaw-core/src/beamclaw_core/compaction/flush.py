"""The memory flush (seed 003): one hidden turn in which the model may save durable facts
with its memory tools, before compaction and on ``/new``. Nothing of it enters the
conversation.

Best effort: :func:`memory_flush` never raises for a failing provider or tool and is
bounded by a timeout; its outcome is returned and emitted as ``MEMORY_FLUSH`` (``ok``,
``tool_calls`` or ``error``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from beamclaw_core.loop.request import TurnRequestBuilder
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.store import View
from beamclaw_obs import EventType, emit, scrub
from beamclaw_tools import SessionRef, ToolPolicy, ToolRegistry

FLUSH_INSTRUCTIONS = (
    "The conversation is about to be compacted and older messages will leave your context. "
    "Save any durable facts worth remembering (about the user, decisions, open tasks) with "
    "your memory tools now. If there is nothing to save, reply NO_REPLY."
)
MAX_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class FlushOutcome:
    """What a memory flush did: ``ok`` with its memory ``tool_calls``, or the ``error``."""

    ok: bool
    tool_calls: int = 0
    error: str | None = None


class _FlushTimeoutError(Exception):
    pass


async def memory_flush(
    provider: Provider,
    request: TurnRequestBuilder,
    view: View,
    tools: ToolRegistry,
    session: SessionRef,
    policy: ToolPolicy | None = None,
    *,
    time_limit: float | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> FlushOutcome:
    """Run the hidden flush turn on ``view``: the turn's request (``request``, offering
    only its memory tools) followed by :data:`FLUSH_INSTRUCTIONS`, abandoned after
    ``time_limit`` seconds of ``sleep``. A failure is the outcome, not an exception."""
    flush = request.with_tools(lambda d: "memory" in d.name)
    if not flush.tools:
        return FlushOutcome(ok=True)
    rounds = _rounds(provider, flush, view, tools, session, policy)
    try:
        calls = await (rounds if time_limit is None else _within(rounds, time_limit, sleep))
    except _FlushTimeoutError:
        error = f"timed out after {time_limit:g} s"
    except Exception as e:  # best effort: the caller goes on and reports it
        error = scrub(f"{type(e).__name__}: {e}")
    else:
        emit(EventType.MEMORY_FLUSH, session_id=session.session_id, ok=True, tool_calls=calls)
        return FlushOutcome(ok=True, tool_calls=calls)
    emit(EventType.MEMORY_FLUSH, session_id=session.session_id, ok=False, error=error)
    return FlushOutcome(ok=False, error=error)


async def _rounds(
    provider: Provider,
    flush: TurnRequestBuilder,
    view: View,
    tools: ToolRegistry,
    session: SessionRef,
    policy: ToolPolicy | None,
) -> int:
    # what the flush turn adds after the view: its instructions, replies and results
    said = [Message.system(FLUSH_INSTRUCTIONS)]
    allowed = {d.name for d in flush.tools}
    calls = 0
    for _ in range(MAX_ROUNDS):
        request = flush.request(view, then=said)
        completion = await provider.complete(request.messages, request.options)
        reply = completion.message
        if not reply.tool_calls:
            break
        said.append(reply)
        for call in reply.tool_calls:
            calls += 1
            if call.name in allowed:
                result = await tools.execute(call, session, policy=policy)
                said.append(
                    Message.tool(call.id, call.name, result.content, is_error=result.is_error)
                )
            else:
                said.append(
                    Message.tool(
                        call.id, call.name, "Not available during the flush.", is_error=True
                    )
                )
    return calls


async def _within(
    work: Awaitable[int], seconds: float, sleep: Callable[[float], Awaitable[None]]
) -> int:
    """``work``'s result, or :class:`_FlushTimeoutError` once ``sleep(seconds)`` ends first (the
    work is then cancelled)."""
    task = asyncio.ensure_future(work)
    timer = asyncio.ensure_future(sleep(seconds))
    try:
        await asyncio.wait((task, timer), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, timer):
            pending.cancel()
        await asyncio.wait((task, timer))
    if task.cancelled():
        raise _FlushTimeoutError
    return task.result()
