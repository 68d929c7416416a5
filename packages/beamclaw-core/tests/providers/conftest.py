"""Shared helpers for the provider tests: a wire harness and an event recorder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from beamclaw_core.providers import HttpProvider, ProviderSettings, build_provider
from beamclaw_core.testing import (
    FakeAnthropicServer,
    FakeLLMServer,
    FakeOpenAIServer,
    FakeStep,
)
from beamclaw_obs.testing import EventRecorder, recording_events


@dataclass
class Wire:
    """One provider kind with its fake server."""

    kind: str
    server_cls: type[FakeLLMServer]
    model: str

    def settings(self, server: FakeLLMServer, **overrides: Any) -> ProviderSettings:
        data: dict[str, Any] = {"kind": self.kind, "base_url": server.base_url, "model": self.model}
        data.update(overrides)
        return ProviderSettings.model_validate(data)

    def provider(self, server: FakeLLMServer, **overrides: Any) -> HttpProvider:
        built = build_provider("fake", self.settings(server, **overrides))
        assert isinstance(built, HttpProvider)
        return built


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Wire:
    if request.param == "openai":
        return Wire("openai", FakeOpenAIServer, "gpt-4o")
    return Wire("anthropic", FakeAnthropicServer, "claude-sonnet-4-5")


@dataclass
class Served:
    server: FakeLLMServer
    provider: HttpProvider


@pytest.fixture
def serve(wire: Wire) -> Iterator[Any]:
    """``async with serve([steps], **settings) as s:`` → server + provider, both closed after."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def run(steps: list[FakeStep], **overrides: Any) -> AsyncIterator[Served]:
        async with wire.server_cls(steps) as server:
            provider = wire.provider(server, **overrides)
            try:
                yield Served(server, provider)
            finally:
                await provider.close()

    return run


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("provider-test-recorder") as recorder:
        yield recorder
