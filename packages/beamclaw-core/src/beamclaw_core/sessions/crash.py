"""What a lane records when its worker gives up (the restart budget is spent).

Pure: the state the lane was in and its turn context in; out the ``Error`` state, the
messages that close the interrupted turn and the text its user is told. Invariant: those
messages leave the history valid (every pending tool call answered), as the machine's
``Interrupted`` transition guarantees. A worker that kept failing because the database
refused its writes (a full disk mid-turn) says so: kind ``storage_unavailable``, a text
naming the database's state, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass

from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.context import LoopContext
from beamclaw_core.loop.inputs import Interrupted
from beamclaw_core.loop.machine import transition
from beamclaw_core.loop.states import Error, State, is_busy
from beamclaw_core.messages import Message
from beamclaw_memory import StorageUnavailableError
from beamclaw_memory.errors import unavailable_state

CRASH_REASON = "the loop crashed and was restarted"


@dataclass(frozen=True, slots=True)
class CrashReport:
    """How a lane ends after its worker gave up."""

    state: Error
    messages: list[Message]
    """The interrupted turn's closing messages (none when no turn was running)."""
    turn_id: str | None
    """The interrupted turn, if any."""
    text: str


def crash_report(state: State, ctx: LoopContext, error: BaseException | None) -> CrashReport:
    """The report for a lane in ``state`` whose worker last failed with ``error``."""
    kind = "loop_crash"
    text = f"The agent loop kept crashing ({type(error).__name__ if error else 'exit'}); "
    text += "send a new message to try again."
    if isinstance(error, StorageUnavailableError):
        kind = "storage_unavailable"
        text = (
            f"The turn stopped: {unavailable_state(error.reason)}. What was stored before "
            "is kept; send your message again once it can be saved."
        )
    messages: list[Message] = []
    if is_busy(state):
        result = transition(state, ctx, Interrupted(CRASH_REASON, resume=False))
        messages = [e.message for e in result.effects if isinstance(e, fx.PersistMessage)]
    turn = getattr(state, "turn", None)
    turn_id = turn.turn_id if turn is not None else None
    return CrashReport(Error(error_kind=kind, message=text), messages, turn_id, text)
