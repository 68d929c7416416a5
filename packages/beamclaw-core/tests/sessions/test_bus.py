"""The session bus holds open subscriptions only: closing one removes it at once."""

from __future__ import annotations

from beamclaw_core.loop import Notice, TurnDone
from beamclaw_core.sessions import SessionBus


async def test_a_closed_subscription_leaves_the_bus_before_any_publish() -> None:
    bus = SessionBus(buffer=4)
    plain = bus.subscribe(drafts=False)
    streaming = bus.subscribe()
    assert bus.open_subscriptions() == 2 and bus.wants_drafts()
    streaming.close()
    assert bus.open_subscriptions() == 1
    assert not bus.wants_drafts(), "a closed subscriber forces no streaming"
    plain.close()
    plain.close()  # idempotent
    assert bus.open_subscriptions() == 0


async def test_lagging_and_finished_subscriptions_leave_too() -> None:
    bus = SessionBus(buffer=1)
    slow = bus.subscribe()
    turn = bus.subscribe(until_terminal=True)
    bus.publish(Notice("s", "t", "one"))
    bus.publish(Notice("s", "t", "two"))
    assert slow.lagging and slow.closed
    assert bus.open_subscriptions() == 0, "the lagging one and the full one both left"
    turn_only = bus.subscribe(until_terminal=True)
    bus.publish(TurnDone("s", "t", text="done"))
    assert turn_only.closed and bus.open_subscriptions() == 0
    assert [e async for e in turn_only] == [TurnDone("s", "t", text="done")]
    assert turn.closed
