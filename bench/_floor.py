"""The framework floor: what the stack alone adds to one upstream call.

A FastAPI app on uvicorn, served in the benchmark's process and loop exactly as the
gateway is (``live_gateway``'s server settings), with one route: ``POST
/v1/chat/completions`` validates the body into the gateway's own
:class:`~beamclaw_gateway.openai_models.ChatCompletionRequest`, posts the minimal
upstream body with the provider's kind of client (aiohttp, orjson), and answers the
upstream's answer as the gateway does (``ChatCompletion.body``, orjson). No session, no store,
no prompt, no tools: the least any FastAPI gateway of this shape pays per request on this
machine, measured beside the gateway so that its added latency reads as the floor plus
BeamClaw's own work.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson
from fastapi import FastAPI
from fastapi.responses import Response

from beamclaw_core import Usage
from beamclaw_gateway.openai_models import ChatCompletion, ChatCompletionRequest
from beamclaw_gateway.testing import serve_app

_UPSTREAM_BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "bench"}]}


def floor_app(upstream: str, client: aiohttp.ClientSession) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions", response_model=ChatCompletion)
    async def chat_completions(body: ChatCompletionRequest) -> Any:  # pyright: ignore[reportUnusedFunction]
        content = body.messages[-1].content if body.messages else ""
        upstream_body = {**_UPSTREAM_BODY, "messages": [{"role": "user", "content": content}]}
        async with client.post(
            f"{upstream}/chat/completions",
            data=orjson.dumps(upstream_body),
            headers={"content-type": "application/json"},
        ) as r:
            answer = orjson.loads(await r.read())
        text = answer["choices"][0]["message"]["content"]
        tokens = answer["usage"]
        usage = Usage(
            prompt_tokens=tokens["prompt_tokens"],
            completion_tokens=tokens["completion_tokens"],
            total_tokens=tokens["total_tokens"],
        )
        created = int(time.time())
        completion = ChatCompletion.body(answer["id"], created, body.model, text, "stop", usage)
        return Response(orjson.dumps(completion), media_type="application/json")

    return app


@asynccontextmanager
async def served_floor(upstream: str) -> AsyncGenerator[str]:
    """The floor app on ``127.0.0.1:<free port>``; yields its ``/v1/chat/completions`` URL."""
    async with (
        aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client,
        serve_app(floor_app(upstream, client)) as port,
    ):
        yield f"http://127.0.0.1:{port}/v1/chat/completions"
