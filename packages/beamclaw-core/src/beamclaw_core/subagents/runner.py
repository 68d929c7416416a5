"""Running child conversations for ``spawn_agents`` (REQ-BED-008/009).

Each task becomes a child conversation persisted with its parent's id. The child gets
``submit_result`` and no ``spawn_agents`` (no nesting). Its result — the submitted one, or
else its final answer, or its failure — is delivered to the parent as a
``SubAgentResult`` event. Cancelling the parent cancels the children.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.inputs import SubAgentResult
from beamclaw_core.loop.turn_events import TurnError
from beamclaw_core.sessions.bus import TurnHandle
from beamclaw_core.sessions.fold import result_of
from beamclaw_obs import EventType, emit


class ChildLane(Protocol):
    """What the runner needs of a child conversation's lane (a ``SessionLane``)."""

    @property
    def id(self) -> str: ...

    @property
    def submitted(self) -> tuple[str, bool] | None:
        """The child's ``submit_result``, once it called it."""
        ...

    async def submit(self, content: str) -> TurnHandle: ...

    async def cancel(self, reason: str = ...) -> int: ...


class SubAgentRunner:
    """Spawns and cancels children on behalf of :class:`~beamclaw_core.api.Core`."""

    def __init__(
        self,
        open_child: Callable[[str, str, str | None], Awaitable[ChildLane]],
        deliver: Callable[[str, SubAgentResult], None],
        timeout: float,
    ) -> None:
        self._open_child = open_child
        self._deliver = deliver
        self._timeout = timeout
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def spawn(self, parent_id: str, effect: fx.SpawnSubAgents) -> None:
        for task in effect.tasks:
            emit(EventType.SUBAGENT_SPAWNED, session_id=parent_id, child_id=task.child_id)
            self._tasks[task.child_id] = asyncio.create_task(
                self._run_child(parent_id, task), name=f"subagent/{task.child_id}"
            )

    async def cancel(self, child_ids: tuple[str, ...]) -> None:
        for child_id in child_ids:
            job = self._tasks.pop(child_id, None)
            if job is not None and not job.done():
                job.cancel()
                await asyncio.gather(job, return_exceptions=True)

    async def stop(self) -> None:
        await self.cancel(tuple(self._tasks))

    async def _run_child(self, parent_id: str, task: fx.SubAgentTask) -> None:
        lane = await self._open_child(parent_id, task.child_id, task.agent_id)
        handle = await lane.submit(task.task)
        try:
            async with asyncio.timeout(self._timeout):
                outcome = await handle.result()
        except TimeoutError:
            await lane.cancel("The sub-agent ran out of time")
            outcome = TurnError(
                lane.id,
                handle.turn_id,
                "timeout",
                f"the sub-agent did not finish within {self._timeout:g} s",
            )
        except asyncio.CancelledError:
            await lane.cancel("The parent conversation was cancelled")
            raise
        ended = result_of(lane.id, handle.turn_id, outcome)
        if lane.submitted is not None:
            result, success = lane.submitted
        elif ended.status == "completed":
            result, success = ended.text, True
        elif ended.status == "failed":
            result, success = f"The sub-agent failed: {ended.error_message}", False
        else:
            result, success = "The sub-agent stopped without a result.", False
        self._tasks.pop(task.child_id, None)
        emit(
            EventType.SUBAGENT_RESULT, session_id=parent_id, child_id=task.child_id, success=success
        )
        self._deliver(parent_id, SubAgentResult(task.child_id, result, success))
