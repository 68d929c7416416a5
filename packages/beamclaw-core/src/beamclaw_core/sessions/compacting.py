"""Compaction of one lane's view: in a turn (threshold, overflow) or as maintenance; and
the memory flush that precedes it (and ``/new``). Both see the lane only through
:class:`~beamclaw_core.sessions.control.LaneAccess`; compaction invalidates the view it
rewrote."""

from __future__ import annotations

from dataclasses import replace

from beamclaw_core.compaction import Compactor, FlushOutcome, memory_flush
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.providers import Provider
from beamclaw_core.sessions.control import LaneAccess
from beamclaw_core.sessions.memory_context import is_injected
from beamclaw_core.sessions.requests import lane_request_builder


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
    (:func:`~beamclaw_core.sessions.requests.lane_request_builder`), bounded by
    ``memory_flush_timeout_seconds``, without the messages memory injected (auto-context,
    short-term memory). Never raises for the LLM or a tool; a lane without tools has nothing to flush."""
    rt = lane.rt
    if rt.tools is None:
        return FlushOutcome(ok=True)
    builder, view = await lane_request_builder(lane)
    # what memory injected is memory already: the flush must not be asked to save it again
    builder = replace(builder, system=tuple(m for m in builder.system if not is_injected(m)))
    return await memory_flush(
        provider,
        builder,
        view,
        rt.tools,
        lane.session_ref(),
        rt.tool_policy_for(lane.agent_id),
        time_limit=rt.settings.agentic_loop.memory_flush_timeout_seconds,
        sleep=rt.sleep,
    )
