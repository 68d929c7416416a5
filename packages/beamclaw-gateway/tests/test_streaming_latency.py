"""Streaming front ends forward each delta at once: a real upstream (the fake OpenAI
server over HTTP) streams 30 tokens; /v1 SSE and /ws deliver nearly as many content
chunks, and the first before the upstream has sent its second token."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import websockets

from beamclaw_core.providers import ProviderSettings
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_gateway.testing import LiveGateway, quiet_config
from beamclaw_obs import Secret

from .conftest import live_gateway

TEXT = (
    "Hi! Streaming should feel instant, so every token you see here reaches the client as"
    " soon as the gateway gets it from upstream, and six more tokens make it thirty."
)
WORDS = TEXT.split(" ")
TOKENS = (WORDS[0], *(" " + w for w in WORDS[1:]))
assert len(TOKENS) == 30
GAP = 0.01


def _config(url: str) -> BeamclawConfig:
    config = quiet_config()
    config.core.default_provider = "fake"
    config.core.providers = {
        "fake": ProviderSettings(
            kind="openai", base_url=url, model="fake", api_key=Secret.model_validate("sk-x")
        )
    }
    return config


@asynccontextmanager
async def _upstream(first_seen: asyncio.Event) -> AsyncIterator[LiveGateway]:
    """A gateway on a fake upstream that sends token 2 only once the client saw a chunk
    (event 0 is the role chunk, event ``i`` token ``i - 1``)."""

    async def gate(event: int) -> None:
        if event == 2:
            await asyncio.wait_for(first_seen.wait(), 5)
        else:
            await asyncio.sleep(GAP)

    reply = FakeReply(tokens=TOKENS, gate=gate)
    async with (
        FakeOpenAIServer([reply]) as server,
        live_gateway(None, _config(server.base_url)) as gw,
    ):
        yield gw


def _check(chunks: list[str]) -> None:
    assert "".join(chunks) == "".join(TOKENS)
    assert len(chunks) >= 27, chunks  # >= 90 % of the upstream's 30


async def test_v1_sse_forwards_each_token() -> None:
    first_seen = asyncio.Event()
    chunks: list[str] = []
    async with _upstream(first_seen) as gw, httpx.AsyncClient(base_url=gw.base_url) as client:
        body = {
            "model": "beamclaw/default",
            "stream": True,
            "messages": [{"role": "user", "content": "go"}],
        }
        async with client.stream("POST", "/v1/chat/completions", json=body, timeout=20) as r:
            async for line in r.aiter_lines():
                if not line.startswith("data: {"):
                    continue
                delta: dict[str, Any] = json.loads(line[6:])["choices"][0]["delta"]
                if delta.get("content"):
                    chunks.append(delta["content"])
                    first_seen.set()
    _check(chunks)


async def test_ws_forwards_each_token() -> None:
    first_seen = asyncio.Event()
    chunks: list[str] = []
    async with _upstream(first_seen) as gw, websockets.connect(gw.ws_url) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "message", "id": "m1", "text": "go", "user": "ann"}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
            if frame["type"] == "text":
                chunks.append(frame["text"])
                first_seen.set()
            if frame["type"] in {"turn_done", "turn_error", "cancelled", "dropped"}:
                break
    assert frame["type"] == "turn_done"
    _check(chunks)
