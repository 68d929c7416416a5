"""The whole stack over real HTTP twice: openai client → gateway → OpenAI provider → fake
OpenAI server. No scripted provider: the configured provider chain is used."""

from __future__ import annotations

import asyncio

import httpx
import openai

from beamclaw_core.messages import Usage
from beamclaw_core.providers import ProviderSettings
from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.testing import live_gateway, quiet_config
from beamclaw_obs import Secret


def _use_fake_provider(config: BeamclawConfig, base_url: str) -> None:
    """Point the default provider at the fake OpenAI server at ``base_url``."""
    config.core.default_provider = "fake"
    config.core.providers = {
        "fake": ProviderSettings(
            kind="openai", base_url=base_url, model="fake-model", api_key=Secret(literal="sk-x")
        )
    }


async def test_tool_turn_streams_through_the_real_provider_chain() -> None:
    script = [
        FakeReply(tool_calls=(FakeToolCall("think", {"thought": "plan"}),)),
        FakeReply(
            "The answer, streamed.",
            usage=Usage(prompt_tokens=20, completion_tokens=5, total_tokens=25),
        ),
        FakeReply("Second answer."),
    ]
    async with FakeOpenAIServer(script) as fake:
        config = quiet_config()
        _use_fake_provider(config, fake.base_url)
        async with (
            live_gateway(None, config) as gw,
            openai.AsyncOpenAI(
                base_url=f"{gw.base_url}/v1", api_key="unused", max_retries=0
            ) as client,
        ):
            stream = await client.chat.completions.create(
                model="beamclaw/default",
                messages=[{"role": "user", "content": "think, then answer"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [c async for c in stream]
            second = await client.chat.completions.create(
                model="beamclaw/default",
                messages=[{"role": "user", "content": "and again"}],
            )
        requests = fake.requests
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.endswith("The answer, streamed.")
    usage = chunks[-1].usage
    assert usage is not None and usage.total_tokens >= 25
    assert second.choices[0].message.content == "Second answer."
    assert len(requests) == 3
    # the third upstream request carries the session's history: the first exchange
    history = requests[2].body["messages"]
    assert any(m.get("content") == "think, then answer" for m in history)


async def test_a_session_idle_past_its_ttl_answers_with_a_fresh_context() -> None:
    """Issue 17: the TTL cleaner deleted the idle session under its cached lane and the
    next message was a 500; now the context ends and the history stays."""
    async with FakeOpenAIServer([FakeReply("Before."), FakeReply("After.")]) as fake:
        config = quiet_config()
        config.core.session_ttl_seconds = 1
        config.core.maintenance.check_interval_seconds = 0.05
        config.core.maintenance.session_cleanup_interval_seconds = 0.05
        _use_fake_provider(config, fake.base_url)
        headers = {"X-Session-Id": "lunch-break"}
        async with (
            live_gateway(None, config) as gw,
            httpx.AsyncClient(base_url=gw.base_url, timeout=10) as client,
        ):
            body = {"model": "beamclaw/default", "messages": [{"role": "user", "content": ""}]}
            body["messages"][0]["content"] = "before lunch"
            first = await client.post("/v1/chat/completions", json=body, headers=headers)
            await asyncio.sleep(1.3)  # idle past the 1 s TTL; maintenance ran meanwhile
            body["messages"][0]["content"] = "after lunch"
            second = await client.post("/v1/chat/completions", json=body, headers=headers)
            session = await client.get("/api/sessions/lunch-break")
        requests = fake.requests
    assert first.status_code == 200
    assert second.status_code == 200, second.text
    assert second.json()["choices"][0]["message"]["content"] == "After."
    sent = [m["content"] for m in requests[1].body["messages"] if m["role"] != "system"]
    assert sent == ["after lunch"], "the LLM sees a fresh context"
    stored = [m["content"] for m in session.json()["messages"]]
    assert stored == ["before lunch", "Before.", "after lunch", "After."]
