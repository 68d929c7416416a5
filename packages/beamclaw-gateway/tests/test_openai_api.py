"""/v1 through the official ``openai`` client against a real uvicorn server."""

from __future__ import annotations

import openai
import pytest

from beamclaw_core.messages import Usage
from beamclaw_core.testing import Fail, Reply, ScriptedProvider

from .conftest import live_gateway


async def test_non_streaming_turn_returns_completion_with_usage() -> None:
    provider = ScriptedProvider([Reply("Hello there!", usage=Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10))])
    async with live_gateway(provider) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.base_url}/v1", api_key="unused", max_retries=0)
        completion = await client.chat.completions.create(
            model="beamclaw/default", messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == "Hello there!"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 7
    assert completion.usage.total_tokens == 10
