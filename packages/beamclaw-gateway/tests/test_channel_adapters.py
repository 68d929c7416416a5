"""Channel adapters inside a real gateway: a message handed in becomes a turn whose answer
is delivered back through the channel, its approval is asked there and can be answered
anywhere, a message id is run once, and an adapter that crashes in a loop shows in
``/health`` while the others go on (issue 19)."""

from __future__ import annotations

import asyncio

import httpx

from beamclaw_core.channels import (
    ChannelCaps,
    Inbound,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.loop import ApprovalRequested
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, ImageTool, Reply, ScriptedProvider, png_image
from beamclaw_obs import ComponentHealth, HealthState
from beamclaw_tools import ContentPart, ImagePart, TextPart

from .conftest import live_gateway


class Inbox:
    """A channel whose platform is this test: it hands in what ``send`` queues and keeps
    what the gateway delivers and asks."""

    name = "inbox"
    capabilities = ChannelCaps(buttons=True)

    def __init__(self) -> None:
        self.outgoing: asyncio.Queue[Inbound] = asyncio.Queue()
        self.delivered: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.asked: asyncio.Queue[ApprovalRequested] = asyncio.Queue()
        self.attachments: list[tuple[ContentPart, ...]] = []

    def send(self, chat: str, text: str | tuple[ContentPart, ...], message_id: str) -> None:
        address = SessionAddress(f"inbox:{chat}", "default", self.name)
        self.outgoing.put_nowait(Inbound(self.name, address, text, chat, message_id))

    async def run(self, inbound: InboundSink) -> None:
        while True:
            await inbound(await self.outgoing.get())

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        if not target.isdigit():
            raise UnknownTargetError(self.name, target)
        self.delivered.put_nowait((target, out.text))
        self.attachments.append(out.attachments)
        return Receipt(self.name, target, 1)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        self.asked.put_nowait(request)

    def health(self) -> ComponentHealth:
        return ComponentHealth(HealthState.UP, data={"queued": self.outgoing.qsize()})


class Broken(Inbox):
    name = "broken"

    async def run(self, inbound: InboundSink) -> None:
        raise ConnectionError("the platform refuses us")


async def test_a_channel_message_runs_a_turn_and_the_answer_goes_back() -> None:
    provider = ScriptedProvider(
        [
            CallTool("write_file", {"path": "a.txt", "content": "x"}),
            Reply("Saved."),
            Reply("Second answer."),
        ]
    )
    inbox, broken = Inbox(), Broken()
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        services = gw.app.state.services
        services.channels.register(inbox)
        services.channels.register(broken)
        inbox.send("42", "save a note", "m-1")
        request = await asyncio.wait_for(inbox.asked.get(), 10)
        answered = await c.post(
            f"/api/approvals/{request.request_id}", json={"decision": "approve"}
        )
        first = await asyncio.wait_for(inbox.delivered.get(), 10)
        inbox.send("42", "save a note", "m-1")  # the platform sent it again
        inbox.send("42", "and now?", "m-2")
        second = await asyncio.wait_for(inbox.delivered.get(), 10)
        health = (await c.get("/health")).json()
        delivered = await c.post(
            "/api/deliver", json={"channel": "inbox", "target": "42", "message": "ping"}
        )
        pushed = await asyncio.wait_for(inbox.delivered.get(), 10)
        wrong = await c.post(
            "/api/deliver", json={"channel": "inbox", "target": "x", "message": "ping"}
        )
    assert request.tool == "write_file" and answered.status_code == 200
    assert first == ("42", "Saved.") and second == ("42", "Second answer.")
    assert len(provider.calls) == 3, "the repeated message id ran no second turn"
    channels = health["components"]["channels"]
    assert channels["inbox"]["run"] == "running" and channels["inbox"]["queued"] == 0
    assert channels["ws"]["run"] == "running"
    assert channels["broken"]["run"] in ("restarting", "cooling_down")
    assert "refuses us" in channels["broken"]["last_error"]
    assert channels["status"] == "degraded"
    assert delivered.json() == {"delivered": 1} and pushed == ("42", "ping")
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "unknown_target"


async def test_a_channel_gets_the_images_of_the_turn_and_the_reason_a_bad_one_was_refused() -> None:
    """Attachments both ways on a channel: the image a tool showed the model is delivered
    with the answer; an image the person sends that the core refuses never becomes a
    turn, and the person reads why on the same channel."""
    image = png_image()
    provider = ScriptedProvider([CallTool("screenshot", {}), Reply("Here it is.")])
    inbox = Inbox()
    async with live_gateway(provider) as gw:
        assert gw.runtime.system is not None
        gw.runtime.system.tools.register(ImageTool(parts=(image,)))
        gw.app.state.services.channels.register(inbox)
        inbox.send("7", "show me", "m-1")
        answer = await asyncio.wait_for(inbox.delivered.get(), 10)
        mislabelled = ImagePart(media_type="image/jpeg", data=image.data)
        inbox.send("7", (TextPart(text="and this?"), mislabelled), "m-2")
        refusal = await asyncio.wait_for(inbox.delivered.get(), 10)
    assert answer == ("7", "Here it is.")
    assert inbox.attachments[0] == (image,)
    assert refusal[0] == "7"
    assert refusal[1].startswith("Not sent: ") and "is a image/png image" in refusal[1]
    assert len(provider.calls) == 2, "the refused message ran no turn"
