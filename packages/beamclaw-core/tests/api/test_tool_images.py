"""Images both ways through the real loop, over real HTTP to the fake LLM servers.

A tool's image is stored with its result, shown to a vision model (OpenAI wire: a user
message after the block of tool results, labelled with the call; Anthropic: inside the
``tool_result``), read as a note by a model without vision, survives a restart of the
core, and reaches the turn's result for channel delivery. Images that break
``[core.attachments]`` become notes when a tool returns them and are refused when a
person sends them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

import pytest

from beamclaw_core.api import Core
from beamclaw_core.attachments import ImageTooLargeError, ImageTypeError, TooManyImagesError
from beamclaw_core.loop import ToolFinished
from beamclaw_core.messages import Role
from beamclaw_core.providers import ProviderSettings, build_provider
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.fold import TurnFold, TurnResult
from beamclaw_core.testing import (
    FakeAnthropicServer,
    FakeLLMServer,
    FakeOpenAIServer,
    FakeReply,
    FakeToolCall,
    ImageTool,
    png_image,
    quiet_core_settings,
)
from beamclaw_tools import ImagePart, TextPart

ADDR = SessionAddress("local:ann", "default", "tui")
IMAGE = png_image()
CALL = FakeToolCall("screenshot", {}, id="call_shot")


def tool_then_answer() -> list[Any]:
    return [FakeReply("", tool_calls=(CALL,)), FakeReply("a red pixel")]


@pytest.fixture
async def providers() -> AsyncIterator[list[Any]]:
    made: list[Any] = []
    yield made
    for provider in made:
        await provider.close()


def core_for(
    make_core: Callable[..., Core],
    providers: list[Any],
    server: FakeLLMServer,
    *tools: Any,
    kind: Literal["openai", "anthropic"] = "openai",
    vision: bool | None = True,
    model: str = "m",
    **settings: Any,
) -> Core:
    provider = build_provider(
        "fake",
        ProviderSettings(
            kind=kind,
            base_url=server.base_url,
            model=model,
            supports_vision=vision,
        ),
    )
    providers.append(provider)
    return make_core(provider, *tools, settings=quiet_core_settings(**settings))


async def run_turn(core: Core, content: Any = "look") -> TurnResult:
    """Send ``content`` and fold the turn's events, as a front end does."""
    handle = await core.send(ADDR, content)
    fold = TurnFold(handle.session_id, handle.turn_id)
    async for event in handle.events():
        fold.feed(event)
    return fold.end(await handle.result())


def after_tool(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages from the tool result on."""
    at = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    return messages[at:]


async def test_a_tool_image_reaches_an_openai_vision_models_request_after_the_tool_block(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer(tool_then_answer()) as server:
        core = core_for(make_core, providers, server, ImageTool(parts=(IMAGE,)))
        await core.start(maintenance=False)
        result = await run_turn(core)
    assert result.status == "completed"
    assert result.images == (IMAGE,)  # for the channel to deliver with the answer
    tool, shown = after_tool(server.bodies[1]["messages"])
    assert tool == {
        "role": "tool",
        "tool_call_id": "call_shot",
        "name": "screenshot",
        "content": "done",
    }
    assert shown == {
        "role": "user",
        "content": [
            {"type": "text", "text": "[Images returned by tool call call_shot (screenshot):]"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE.data}"}},
        ],
    }


async def test_a_tool_image_reaches_an_anthropic_vision_model_inside_its_tool_result(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeAnthropicServer(tool_then_answer()) as server:
        core = core_for(make_core, providers, server, ImageTool(parts=(IMAGE,)), kind="anthropic")
        await core.start(maintenance=False)
        result = await run_turn(core)
    assert result.images == (IMAGE,)
    turns = server.bodies[1]["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]  # no extra turn
    [block] = turns[-1]["content"]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "call_shot",
        "content": [
            {"type": "text", "text": "done"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": IMAGE.data},
            },
        ],
    }


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_model_without_vision_reads_a_note_never_the_base64(
    make_core: Callable[..., Core], providers: list[Any], kind: Literal["openai", "anthropic"]
) -> None:
    big = png_image(34 * 1024)
    server_type = FakeOpenAIServer if kind == "openai" else FakeAnthropicServer
    async with server_type(tool_then_answer()) as server:
        tool = ImageTool(parts=(big,))
        core = core_for(make_core, providers, server, tool, kind=kind, vision=False)
        await core.start(maintenance=False)
        assert (await run_turn(core)).status == "completed"
    raw = server.requests[1].raw.decode()
    assert big.data[:64] not in raw
    assert "[image: image/png, 34 KB \u2014 this model cannot see images]" in raw


async def test_without_a_vision_setting_the_model_name_decides(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer(tool_then_answer()) as server:
        tool = ImageTool(parts=(IMAGE,))
        core = core_for(make_core, providers, server, tool, vision=None, model="gpt-4o")
        await core.start(maintenance=False)
        await run_turn(core)
    assert "image_url" in server.requests[1].raw.decode()


async def test_tool_images_survive_a_restart_and_are_shown_again(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer([*tool_then_answer(), FakeReply("still red")]) as server:
        first = core_for(make_core, providers, server, ImageTool(parts=(IMAGE,)))
        await first.start(maintenance=False)
        session_id = (await run_turn(first)).session_id
        await first.stop()

        second = core_for(make_core, providers, server, ImageTool(parts=(IMAGE,)))
        await second.start(maintenance=False)
        [tool] = [m for m in await second.history(session_id) if m.role is Role.TOOL]
        assert (tool.text, tool.images) == ("done", (IMAGE,))
        assert await (await second.send(ADDR, "and now?")).text() == "still red"
    messages = server.bodies[2]["messages"]
    shown = after_tool(messages)[1]
    assert shown["content"][1]["image_url"]["url"] == f"data:image/png;base64,{IMAGE.data}"
    assert [m["role"] for m in messages[-3:]] == ["user", "assistant", "user"]


async def test_tool_images_that_break_the_limits_become_notes_for_the_model(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    oversized = png_image(4096)
    mistyped = ImagePart(media_type="image/bmp", data=IMAGE.data)
    lying = ImagePart(media_type="image/jpeg", data=IMAGE.data)
    async with FakeOpenAIServer(tool_then_answer()) as server:
        tool = ImageTool(parts=(IMAGE, oversized, mistyped, lying))
        core = core_for(make_core, providers, server, tool, attachments={"max_image_bytes": 2048})
        await core.start(maintenance=False)
        result = await run_turn(core)
    assert result.images == (IMAGE,)
    tool_msg, shown = after_tool(server.bodies[1]["messages"])
    assert tool_msg["content"].splitlines() == [
        "done",
        "[image from screenshot not shown: the image/png image is 4.1 KB (4,181 bytes), over "
        "the 2 KB limit]",
        "[image from screenshot not shown: image/bmp is not an accepted image type "
        "(accepted: image/gif, image/jpeg, image/png, image/webp)]",
        "[image from screenshot not shown: the data declared as image/jpeg is a image/png image]",
    ]
    assert [p["type"] for p in shown["content"]] == ["text", "image_url"]


async def test_a_tool_returning_more_images_than_allowed_shows_the_first_ones(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer(tool_then_answer()) as server:
        tool = ImageTool(parts=(IMAGE, IMAGE, IMAGE))
        core = core_for(
            make_core, providers, server, tool, attachments={"max_images_per_message": 2}
        )
        await core.start(maintenance=False)
        result = await run_turn(core)
    assert len(result.images) == 2
    tool_msg, shown = after_tool(server.bodies[1]["messages"])
    assert tool_msg["content"].endswith(
        "[image from screenshot not shown: at most 2 images per result]"
    )
    assert [p["type"] for p in shown["content"]] == ["text", "image_url", "image_url"]


async def test_images_a_person_sends_are_checked_then_reach_the_model_in_their_message(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer([FakeReply("a pixel")]) as server:
        core = core_for(
            make_core,
            providers,
            server,
            attachments={"max_image_bytes": 2048, "max_images_per_message": 2},
        )
        await core.start(maintenance=False)
        text = TextPart(text="what is this?")
        with pytest.raises(ImageTooLargeError, match="over the 2 KB limit"):
            await core.send(ADDR, (text, png_image(4096)))
        with pytest.raises(ImageTypeError, match="image/tiff is not an accepted image type"):
            await core.send(ADDR, (text, ImagePart(media_type="image/tiff", data=IMAGE.data)))
        with pytest.raises(ImageTypeError, match="declared as image/gif is a image/png image"):
            await core.send(ADDR, (text, ImagePart(media_type="image/gif", data=IMAGE.data)))
        with pytest.raises(ImageTypeError, match="not valid base64"):
            await core.send(ADDR, (text, ImagePart(media_type="image/png", data="iVBOR*w0")))
        with pytest.raises(TooManyImagesError, match="3 images in one message; at most 2"):
            await core.send(ADDR, (text, IMAGE, IMAGE, IMAGE))
        assert await core.list_sessions() == []
        assert server.bodies == []

        result = await run_turn(core, (text, IMAGE))
    assert result.status == "completed"
    assert server.bodies[0]["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE.data}"}},
        ],
    }


async def test_tool_finished_events_carry_the_images_for_live_renderers(
    make_core: Callable[..., Core], providers: list[Any]
) -> None:
    async with FakeOpenAIServer(tool_then_answer()) as server:
        core = core_for(make_core, providers, server, ImageTool(parts=(IMAGE,)))
        await core.start(maintenance=False)
        handle = await core.send(ADDR, "look")
        finished = [e async for e in handle.events() if isinstance(e, ToolFinished)]
    [event] = finished
    assert event.images == (IMAGE,)
    assert event.to_dict()["images"] == [
        {"type": "image", "media_type": "image/png", "data": IMAGE.data}
    ]
