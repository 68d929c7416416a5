"""``[agents.<id>]``: each agent's turns go to its own provider and model; unset = ``[core]``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from beamclaw_core import AgentSettings, ProviderSettings
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from beamclaw_core.testing.fake_server import FakeLLMServer
from beamclaw_gateway import BeamclawConfig, load_config
from beamclaw_gateway.testing import quiet_config
from beamclaw_obs import ConfigError
from beamclaw_tools import Autonomy

from .conftest import live_gateway


def two_provider_config(alpha: FakeLLMServer, beta: FakeLLMServer) -> BeamclawConfig:
    config = quiet_config()
    config.core.providers = {
        "alpha": ProviderSettings(kind="openai", base_url=alpha.base_url, model="alpha-model"),
        "beta": ProviderSettings(kind="openai", base_url=beta.base_url, model="beta-model"),
    }
    config.core.default_provider = "alpha"
    config.agents = {
        "research": AgentSettings(
            provider="beta", model="beta-cheap", autonomy_level=Autonomy.READ_ONLY
        ),
        "tuned": AgentSettings(model="alpha-small"),
    }
    return config


async def chat(client: httpx.AsyncClient, agent: str, text: str) -> str:
    r = await client.post(
        "/v1/chat/completions",
        json={"model": f"beamclaw/{agent}", "messages": [{"role": "user", "content": text}]},
    )
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["message"]["content"]


async def test_each_agent_talks_to_its_own_upstream_and_model(beamclaw_home: Path) -> None:
    from beamclaw_core.workspace import create_agent

    for name in ("research", "tuned", "plain"):
        create_agent(name, home=beamclaw_home)
    async with (
        FakeOpenAIServer([FakeReply("from alpha")], repeat_last=True) as alpha,
        FakeOpenAIServer([FakeReply("from beta")], repeat_last=True) as beta,
    ):
        config = two_provider_config(alpha, beta)
        async with (
            live_gateway(None, config) as gw,
            httpx.AsyncClient(base_url=gw.base_url, timeout=10) as client,
        ):
            assert await chat(client, "default", "hi") == "from alpha"
            assert await chat(client, "research", "hi") == "from beta"
            assert await chat(client, "tuned", "hi") == "from alpha"
            assert await chat(client, "plain", "hi") == "from alpha"
            status = await chat(client, "research", "/status")
            default_status = await chat(client, "default", "/status")
            models = (await client.get("/v1/models")).json()["data"]
    assert [b["model"] for b in alpha.bodies] == ["alpha-model", "alpha-small", "alpha-model"]
    assert [b["model"] for b in beta.bodies] == ["beta-cheap"]
    assert "Model: beta-cheap" in status
    assert "Autonomy: read_only" in status
    assert "Model: alpha-model" in default_status
    assert "Autonomy: supervised" in default_status
    reported = {m["id"]: (m["upstream_provider"], m["upstream_model"]) for m in models}
    assert reported == {
        "beamclaw/default": ("alpha", "alpha-model"),
        "beamclaw/plain": ("alpha", "alpha-model"),
        "beamclaw/research": ("beta", "beta-cheap"),
        "beamclaw/tuned": ("alpha", "alpha-small"),
    }


def test_an_unknown_agent_provider_is_a_clear_config_error(beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text('[agents.research]\nprovider = "nope"\n')
    with pytest.raises(ConfigError) as info:
        load_config()
    assert (
        "agents.research.provider = 'nope': no [core.providers.nope] section "
        "(configured: openai, openrouter)"
    ) in str(info.value)


def test_agents_load_from_the_top_level_table(beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text(
        '[agents.heartbeat]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n'
        '[agents.reader]\nautonomy_level = "read_only"\n'
    )
    agents = load_config().settings.agents
    assert agents["heartbeat"] == AgentSettings(provider="openai", model="gpt-4o-mini")
    assert agents["reader"].autonomy_level is Autonomy.READ_ONLY
    assert agents["reader"].provider is None


async def test_agents_share_one_chain_per_provider_and_model_until_closed() -> None:
    from beamclaw_gateway.composition import ProviderCache

    config = quiet_config()
    config.core.default_provider = "openai"
    config.agents = {
        "same": AgentSettings(autonomy_level=Autonomy.FULL),
        "mini": AgentSettings(model="gpt-4o-mini"),
        "mini2": AgentSettings(provider="openai", model="gpt-4o-mini"),
        "routed": AgentSettings(provider="openrouter"),
    }
    cache = ProviderCache(config.core, config.agents)
    default = cache("default")
    assert cache("same") is default
    assert cache("unlisted") is default
    assert cache("mini") is cache("mini2") is not default
    assert (default.model, cache("mini").model) == ("gpt-4o", "gpt-4o-mini")
    assert cache("routed").model == "anthropic/claude-sonnet-4-5"
    assert len(cache.built) == 3
    await cache.close()
    assert cache.built == {}
