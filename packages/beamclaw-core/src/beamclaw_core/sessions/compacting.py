"""Compaction of one lane's view: in a turn (threshold, overflow) or as maintenance; and
the memory flush that precedes it (and ``/new``). Both see the lane only through
:class:`~beamclaw_core.sessions.control.LaneAccess`; compaction invalidates the view it
rewrote."""

from __future__ import annotations

from beamclaw_core.compaction import Compactor, FlushOutcome, memory_flush
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.loop.request import request_messages
from beamclaw_core.providers import Provider
from beamclaw_core.sessions.control import LaneAccess


async def compact_lane(lane: LaneAccess, window: int, *, reason: str) -> CompactionDone:
    """Compact ``lane``'s view (memory flush first when enabled). Never raises for the LLM."""
    rt = lane.rt
    loop = rt.settings.agentic_loop
    provider = rt.provider_for(lane.agent_id)
    summariser = rt.compaction_provider or provider
    compactor = Compactor(
        rt.store,
        summariser,
        target_pct=loop.compaction_target_pct,
        model=loop.compaction_model,
        clock=rt.clock,
    )
    tools = rt.tools

    async def flush() -> None:
        await flush_memory(lane, provider)

    done = await compactor.compact(
        lane.id,
        window,
        flush=flush if loop.memory_flush and tools is not None else None,
        reason=reason,
    )
    lane.view.invalidate()
    return done


async def flush_memory(lane: LaneAccess, provider: Provider) -> FlushOutcome:
    """The memory flush of ``lane``'s conversation: the request a turn would send now
    (system prompt, summary, history), bounded by ``memory_flush_timeout_seconds``.
    Never raises for the LLM or a tool; a lane without tools has nothing to flush."""
    rt = lane.rt
    if rt.tools is None:
        return FlushOutcome(ok=True)
    session = lane.session_ref()
    system = await rt.system_prompt(session, lane.last_activity_at)
    return await memory_flush(
        provider,
        request_messages(system, await lane.view.get()),
        rt.tools,
        session,
        rt.tool_policy_for(lane.agent_id),
        time_limit=rt.settings.agentic_loop.memory_flush_timeout_seconds,
        sleep=rt.sleep,
    )
