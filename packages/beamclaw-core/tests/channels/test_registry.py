"""The channel registry: supervised runs that never give up for good, delivery by name,
and health that shows a crashing channel while the others go on."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.channels import (
    ChannelCaps,
    ChannelRegistry,
    ChannelSupervision,
    DuplicateChannelError,
    Inbound,
    InboundSink,
    Outbound,
    Receipt,
    RunState,
    UnknownChannelError,
    UnknownTargetError,
)
from beamclaw_core.loop import ApprovalRequested
from beamclaw_core.sessions import SessionAddress
from beamclaw_obs import Backoff, ComponentHealth, HealthState


class Steady:
    """A channel that runs until cancelled, hands one message in, and records what it
    is asked to deliver."""

    name = "steady"
    capabilities = ChannelCaps(buttons=True)

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.asked: list[str] = []

    async def run(self, inbound: InboundSink) -> None:
        await inbound(Inbound("steady", SessionAddress("steady:1", "default", "steady"), "hi", "1"))
        await asyncio.Event().wait()

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        if target != "1":
            raise UnknownTargetError(self.name, target)
        self.sent.append((target, out.text))
        return Receipt(self.name, target, 1, ("m1",))

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        self.asked.append(request.request_id)

    def health(self) -> ComponentHealth:
        return ComponentHealth(HealthState.UP)


class Crashing(Steady):
    name = "crashing"

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    async def run(self, inbound: InboundSink) -> None:
        self.starts += 1
        raise ConnectionError(f"platform unreachable (start {self.starts})")


class Sleeps:
    """Virtual sleep: records each delay and yields once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


async def test_a_crashing_channel_backs_off_cools_down_and_is_started_again() -> None:
    sleeps = Sleeps()
    sup = ChannelSupervision(
        max_restarts=3, window_seconds=60, backoff=Backoff(1, 2, 30), cooldown_seconds=300
    )
    registry = ChannelRegistry(sup, clock=lambda: 0.0, sleep=sleeps)
    steady, crashing = Steady(), Crashing()
    registry.register(steady)
    registry.register(crashing)
    received: list[Inbound] = []

    async def sink(inbound: Inbound) -> None:
        received.append(inbound)

    registry.start(sink)
    for _ in range(60):
        await asyncio.sleep(0)
        if len(sleeps.delays) >= 9:
            break
    health = registry.health()
    receipt = await registry.deliver("steady", "1", "still here")
    await registry.stop()
    # 1, 2, 4 s backoffs, then a cool-down, then the count starts afresh: never given up
    assert sleeps.delays[:9] == [1, 2, 4, 300, 1, 2, 4, 300, 1]
    assert crashing.starts >= 9
    assert [i.content for i in received] == ["hi"]
    assert receipt == Receipt("steady", "1", 1, ("m1",)) and steady.sent == [("1", "still here")]
    assert health.state == HealthState.DEGRADED and "crashing" in (health.detail or "")
    data = health.data
    assert data["steady"]["run"] == "running"  # type: ignore[index]
    assert data["crashing"]["run"] in ("restarting", "cooling_down")  # type: ignore[index]
    assert "platform unreachable" in data["crashing"]["last_error"]  # type: ignore[index]
    assert registry.run_of("steady").state == RunState.STOPPED


async def test_names_errors_and_late_registration() -> None:
    registry = ChannelRegistry()
    steady = Steady()
    registry.register(steady)
    with pytest.raises(DuplicateChannelError):
        registry.register(Steady())
    with pytest.raises(UnknownChannelError):
        await registry.deliver("nope", "1", "x")
    with pytest.raises(UnknownTargetError):
        await registry.deliver("steady", "2", "x")
    request = ApprovalRequested("s", "t", request_id="r1", tool="exec")
    await registry.ask_approval("steady", "1", request)
    assert steady.asked == ["r1"]
    assert registry.health().state == HealthState.UP  # registered, not yet run

    async def sink(_inbound: Inbound) -> None:
        return None

    registry.start(sink)
    late = Crashing()
    registry.register(late)  # starts at once
    for _ in range(10):
        await asyncio.sleep(0)
    assert late.starts >= 1
    await registry.unregister("crashing")
    assert registry.names() == ["steady"]
    await registry.stop()
