"""Images a person sends: ``image_url`` parts on ``/v1``, ``attachments`` on ``/ws``.

Both are checked by the core's one attachments check: an accepted image reaches the
model in the person's message; an oversized or mistyped one is refused with a clear 4xx
(``/v1``) or ``invalid_frame`` error (``/ws``) and never reaches the model.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx
import pytest
import websockets
from pydantic import ValidationError

from beamclaw_core import ImageLimits
from beamclaw_core.testing import Reply, ScriptedProvider, png_bytes, png_image
from beamclaw_gateway.openai_models import ChatCompletionRequest, last_user_content
from beamclaw_gateway.ws_protocol import CLIENT_FRAME, IMAGE_LIMITS, MessageFrame
from beamclaw_tools import ImagePart, TextPart

from .conftest import gateway_config, live_gateway

IMAGE = png_image()


def chat(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"model": "default", "messages": [{"role": "user", "content": list(parts)}]}


def image_url(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


TEXT = {"type": "text", "text": "what is this?"}


async def test_an_image_url_reaches_the_model_in_the_persons_message() -> None:
    provider = ScriptedProvider([Reply("a red pixel")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        r = await c.post(
            "/v1/chat/completions", json=chat(TEXT, image_url("image/png", IMAGE.data))
        )
    assert r.status_code == 200, r.text
    assert provider.calls[0].messages[-1].content == (TextPart(text="what is this?"), IMAGE)


async def test_bad_images_on_v1_are_refused_with_a_clear_400() -> None:
    huge = base64.b64encode(png_bytes(5 * 1024 * 1024 + 10)).decode()
    config = gateway_config()
    config.gateway.http.max_body_bytes = 8 * 1024 * 1024
    provider = ScriptedProvider([])
    async with live_gateway(provider, config) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        answers = [
            await c.post("/v1/chat/completions", json=chat(TEXT, image_url("image/png", huge))),
            await c.post("/v1/chat/completions", json=chat(TEXT, image_url("image/bmp", "Qk0="))),
            await c.post(
                "/v1/chat/completions", json=chat(TEXT, image_url("image/gif", IMAGE.data))
            ),
            await c.post(
                "/v1/chat/completions",
                json=chat(TEXT, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}),
            ),
        ]
    messages = []
    for r in answers:
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "invalid_request_error"
        messages.append(r.json()["error"]["message"])
    assert messages[0] == ("the image/png image is 5 MB (5,242,975 bytes), over the 5 MB limit")
    assert messages[1].startswith("image/bmp is not an accepted image type")
    assert messages[2] == "the data declared as image/gif is a image/png image"
    assert "must be a base64 data: URL" in messages[3]
    assert provider.calls == []


def test_the_v1_parser_checks_against_the_limits_it_is_given() -> None:
    request = ChatCompletionRequest.model_validate(chat(TEXT, image_url("image/png", IMAGE.data)))
    assert last_user_content(request) == (TextPart(text="what is this?"), IMAGE)
    with pytest.raises(ValueError, match="over the 10 bytes limit"):
        last_user_content(request, ImageLimits(max_bytes=10))


def test_a_ws_message_frame_carries_checked_images() -> None:
    frame = CLIENT_FRAME.validate_json(
        json.dumps({"type": "message", "text": "see", "attachments": [IMAGE.model_dump()]})
    )
    assert isinstance(frame, MessageFrame)
    assert frame.content == (TextPart(text="see"), IMAGE)
    only = MessageFrame(type="message", attachments=(IMAGE,))
    assert only.content == (IMAGE,)
    assert MessageFrame(type="message", text="plain").content == "plain"


@pytest.mark.parametrize(
    ("frame", "context", "message"),
    [
        ({"type": "message"}, None, "a message needs text or attachments"),
        (
            {
                "type": "message",
                "attachments": [
                    {"type": "image", "media_type": "image/svg+xml", "data": "PHN2Zz4="}
                ],
            },
            None,
            r"image/svg\+xml is not an accepted image type",
        ),
        (
            {"type": "message", "attachments": [IMAGE.model_dump()]},
            {IMAGE_LIMITS: ImageLimits(max_bytes=10)},
            "over the 10 bytes limit",
        ),
        (
            {"type": "message", "attachments": [IMAGE.model_dump()] * 2},
            {IMAGE_LIMITS: ImageLimits(max_per_message=1)},
            "2 images in one message; at most 1",
        ),
    ],
)
def test_a_ws_frame_with_a_bad_image_is_invalid(
    frame: dict[str, Any], context: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        CLIENT_FRAME.validate_json(json.dumps(frame), context=context)


async def test_a_bad_image_over_ws_is_an_invalid_frame_and_reaches_no_model() -> None:
    provider = ScriptedProvider([])
    bad = ImagePart(media_type="image/jpeg", data=IMAGE.data)
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await ws.recv()
        await ws.send(
            json.dumps({"type": "message", "text": "see", "attachments": [bad.model_dump()]})
        )
        error = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert error["code"] == "invalid_frame"
    assert "declared as image/jpeg is a image/png image" in error["message"]
    assert provider.calls == []


async def test_an_image_over_ws_reaches_the_model_even_without_text() -> None:
    provider = ScriptedProvider([Reply("a pixel")])
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "message", "attachments": [IMAGE.model_dump()]}))
        frames: list[dict[str, Any]] = []
        while not frames or frames[-1]["type"] not in {"turn_done", "turn_error", "error"}:
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    assert frames[-1]["type"] == "turn_done", frames[-1]
    assert provider.calls[0].messages[-1].content == (IMAGE,)


async def test_the_configured_limits_apply_on_v1_and_ws() -> None:
    """``[core.attachments]`` reaches both parsers: a gateway that takes no PNG refuses
    one on either front end."""
    config = gateway_config()
    config.core.attachments.image_types = ["image/jpeg"]
    provider = ScriptedProvider([])
    async with (
        live_gateway(provider, config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
        websockets.connect(gw.ws_url) as ws,
    ):
        r = await c.post(
            "/v1/chat/completions", json=chat(TEXT, image_url("image/png", IMAGE.data))
        )
        await ws.recv()
        await ws.send(json.dumps({"type": "message", "attachments": [IMAGE.model_dump()]}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert r.status_code == 400
    assert "image/png is not an accepted image type" in r.json()["error"]["message"]
    assert error["code"] == "invalid_frame"
    assert "image/png is not an accepted image type" in error["message"]
    assert provider.calls == []
