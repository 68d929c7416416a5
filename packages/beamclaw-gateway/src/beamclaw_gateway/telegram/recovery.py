"""Where a message handed to its session before a restart got to (for exactly-once).

:func:`trace` reads the session's queue, then its history (a message moving from one
to the other between the two reads is seen in the second): ``absent`` (never durable: hand
it again), ``waiting`` (queued or its turn runs: the answer comes later), ``failed`` (its
turn ended without an answer), or :class:`Answered` with the committed answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from beamclaw_core.api import Core
from beamclaw_core.committed import committed_turn
from beamclaw_core.sessions import UnknownSessionError
from beamclaw_gateway.settle import awaits_answer


@dataclass(frozen=True, slots=True)
class Answered:
    text: str


Trace = Literal["absent", "waiting", "failed"] | Answered


async def trace(core: Core, session_id: str, ref: str) -> Trace:
    """See the module docstring; ``ref`` is the message's ``source_message_id``."""
    for queued in await core.store.pending(session_id):
        if queued.payload.get("source_message_id") == ref:
            return "waiting"
    history = await core.history(session_id)
    turn = committed_turn(history, ref, None)
    if turn is not None:
        return Answered(turn.text)
    if not any(m.meta.get("source_message_id") == ref for m in history):
        return "absent"
    if awaits_answer(history, ref, None) and await _busy(core, session_id):
        return "waiting"
    return "failed"


async def _busy(core: Core, session_id: str) -> bool:
    try:
        status = await core.status(session_id)
    except UnknownSessionError:
        return False
    return status.state != "idle" or status.queued > 0


async def follow_to_answer(
    core: Callable[[], Core],
    session_id: str,
    ref: str,
    *,
    reply: Callable[[str], Awaitable[None]],
    forget: Callable[[], Awaitable[None]],
    restarted: str,
    every: float = 1.0,
    wake: asyncio.Event | None = None,
) -> None:
    """Wait (looking every ``every`` seconds, or as soon as ``wake`` is set) until the
    message ``ref`` is answered, then ``reply`` with the answer (or ``restarted`` when its
    turn ended without one); a message not in the session after all is ``forget``-ten."""
    while True:
        found = await trace(core(), session_id, ref)
        if isinstance(found, Answered):
            await reply(found.text or "(no answer)")
            return
        if found == "failed":
            await reply(restarted)
            return
        if found == "absent":
            await forget()
            return
        if wake is None:
            await asyncio.sleep(every)
            continue
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(every):
                await wake.wait()
        wake.clear()
