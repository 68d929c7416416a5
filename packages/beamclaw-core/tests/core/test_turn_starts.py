"""Turn-start slots (``[core.agentic_loop] turn_starts``): at most that many turns prepare
their first model call at once, and none keeps a slot while it waits on the model, a
tool or a person — or a bound of one would let one slow turn stop every other session."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, TurnDone
from beamclaw_core.loop import effects as fx
from beamclaw_core.messages import Message
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.admission import AdmittedProvider, TurnStarts, releasing
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_tools import Autonomy, ToolCall

from .conftest import EchoTool, first, make_settings


async def test_a_slot_is_given_back_once_and_the_next_turn_takes_it() -> None:
    starts = TurnStarts(1)
    held = await starts.slot()
    waiting = asyncio.ensure_future(starts.slot())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # one turn prepares at a time
    held.release()
    held.release()  # idempotent: the second release frees nothing more
    second = await asyncio.wait_for(waiting, 1)
    third = asyncio.ensure_future(starts.slot())
    await asyncio.sleep(0.01)
    assert not third.done()
    second.release()
    (await asyncio.wait_for(third, 1)).release()
    unbounded = TurnStarts(0)
    slots = [await asyncio.wait_for(unbounded.slot(), 1) for _ in range(100)]
    assert len(slots) == 100


async def test_calling_the_model_or_waiting_gives_the_slot_back() -> None:
    starts = TurnStarts(1)
    slot = await starts.slot()
    provider = AdmittedProvider(ScriptedProvider([Reply("hi")]), slot)
    assert (await provider.complete([])).message.text == "hi"
    await asyncio.wait_for(starts.slot(), 1)  # the call gave it back

    starts = TurnStarts(1)
    slot = await starts.slot()
    seen: list[fx.Effect] = []
    hook = releasing(seen.append, slot)
    next_turn = asyncio.ensure_future(starts.slot())
    hook(fx.PersistMessage(Message.user("x")))  # committing the message is part of the start
    await asyncio.sleep(0.01)
    assert not next_turn.done()
    hook(
        fx.RequestApproval("r1", ToolCall(id="c1", name="write", args={}), 30.0)
    )  # a person: given back
    await asyncio.wait_for(next_turn, 1)
    assert len(seen) == 2  # the hook it wraps still sees every effect


async def test_one_slot_never_stops_other_sessions(make_core: Callable[..., Core]) -> None:
    """Session A waits for an approval and session B for a model that never answers; with
    one slot, session C still runs its whole turn."""
    settings = make_settings(autonomy_level=Autonomy.SUPERVISED, loop={"turn_starts": 1})
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Hang(), Reply("C answered.")])
    core = make_core(provider, EchoTool("write", approval=True), settings=settings)
    await core.start(maintenance=False)
    a = await core.send(SessionAddress("local:a", "default", "tui"), "write it")
    await first(a.events(), ApprovalRequested)
    b = await core.send(SessionAddress("local:b", "default", "tui"), "think")
    async with asyncio.timeout(5):
        while len(provider.calls) < 2:  # B's model call has begun (and hangs)
            await asyncio.sleep(0.005)
    c = await core.send(SessionAddress("local:c", "default", "tui"), "hello")
    async with asyncio.timeout(5):
        done = await first(c.events(), TurnDone)
    assert done.text == "C answered."
    await core.cancel(b.session_id)


async def test_a_turn_recovered_mid_approval_gives_its_slot_back(
    make_core: Callable[..., Core],
) -> None:
    """After a restart, a turn that was waiting for an approval waits again without a
    model call first: it must not keep the one slot while the person thinks."""
    settings = make_settings(autonomy_level=Autonomy.SUPERVISED, loop={"turn_starts": 1})
    before = make_core(
        ScriptedProvider([CallTool("write", {"text": "x"})]),
        EchoTool("write", approval=True),
        settings=settings,
    )
    await before.start(maintenance=False)
    a = await before.send(SessionAddress("local:a", "default", "tui"), "write it")
    await first(a.events(), ApprovalRequested)
    await before.stop()

    after = make_core(
        ScriptedProvider([Reply("C answered.")]),
        EchoTool("write", approval=True),
        settings=settings,
    )
    await after.start(maintenance=False)
    async with asyncio.timeout(5):
        while not await after.pending_approvals():  # the recovered turn asks again
            await asyncio.sleep(0.005)
        c = await after.send(SessionAddress("local:c", "default", "tui"), "hello")
        done = await first(c.events(), TurnDone)
    assert done.text == "C answered."
