"""Compaction of one lane's view: in a turn (threshold, overflow) or as maintenance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_core.compaction import Compactor, memory_flush
from beamclaw_core.loop.executor import SUMMARY_PREFIX
from beamclaw_core.loop.history import repair_history
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.messages import Message

if TYPE_CHECKING:  # the lane imports this module; only its type is needed here
    from beamclaw_core.sessions.lane import SessionLane


async def compact_lane(lane: SessionLane, window: int, *, reason: str) -> CompactionDone:
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
        if tools is None:
            return
        view = await lane.view.get()
        messages: list[Message] = list(
            await rt.system_prompt(lane.session_ref(), lane.last_activity_at)
        )
        if view.summary:
            messages.append(Message.system(SUMMARY_PREFIX + view.summary))
        messages.extend(repair_history(view.messages))
        await memory_flush(
            provider, messages, tools, lane.session_ref(), rt.tool_policy_for(lane.agent_id)
        )

    done = await compactor.compact(
        lane.id,
        window,
        flush=flush if loop.memory_flush and tools is not None else None,
        reason=reason,
    )
    lane.view.invalidate()
    return done
