"""An empty final reply (no text, no tool calls) is said, not sent as a blank message."""

from __future__ import annotations

from beamclaw_core.loop import LoopContext, LoopLimits, transition
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop import inputs as ev
from beamclaw_core.loop.states import Idle, LlmRequesting, Turn
from beamclaw_core.loop.steps import EMPTY_REPLY_TEXT
from beamclaw_core.loop.turn_events import TurnDone
from beamclaw_core.messages import Message, Usage
from beamclaw_tools import Autonomy

CTX = LoopContext(conversation_id="c1", autonomy=Autonomy.FULL, limits=LoopLimits())


def finish(turn: Turn, reply: Message) -> tuple[TurnDone, list[Message]]:
    state = LlmRequesting(turn=turn)
    result = transition(state, CTX, ev.LlmResponse(reply, Usage(total_tokens=3), "m"))
    assert isinstance(result.new_state, Idle)
    (done,) = [
        e.event
        for e in result.effects
        if isinstance(e, fx.NotifyClient) and isinstance(e.event, TurnDone)
    ]
    stored = [e.message for e in result.effects if isinstance(e, fx.PersistMessage)]
    return done, stored


def test_an_empty_reply_is_said_and_stored_as_said() -> None:
    reply = Message.assistant("", usage=Usage(total_tokens=3))
    done, stored = finish(Turn(turn_id="t", started_at=0), reply)
    assert done.text == EMPTY_REPLY_TEXT
    (message,) = stored
    assert message.text == EMPTY_REPLY_TEXT  # no blank assistant message in the history
    assert message.meta.get("empty_reply") is True
    assert message.usage == Usage(total_tokens=3)  # its cost still counts


def test_an_empty_last_step_follows_the_text_of_earlier_steps() -> None:
    turn = Turn(turn_id="t", started_at=0, text="Let me look.")
    done, _ = finish(turn, Message.assistant("   "))
    assert done.text == f"Let me look.\n\n{EMPTY_REPLY_TEXT}"


def test_a_reply_with_text_is_unchanged() -> None:
    done, stored = finish(Turn(turn_id="t", started_at=0), Message.assistant("hi"))
    assert done.text == "hi"
    assert stored[0].text == "hi" and "empty_reply" not in stored[0].meta
