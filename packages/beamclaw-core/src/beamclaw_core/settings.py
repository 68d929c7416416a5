"""The ``[core]`` configuration section."""

from __future__ import annotations

from typing import Literal

from beamclaw_obs import Secret, Section
from beamclaw_tools import Autonomy
from pydantic import Field

from beamclaw_core.providers.settings import ProviderSettings


def _default_providers() -> dict[str, ProviderSettings]:
    return {
        "openrouter": ProviderSettings(
            kind="openai",
            api_key=Secret(env="OPENROUTER_API_KEY"),
            base_url="https://openrouter.ai/api/v1",
            model="anthropic/claude-sonnet-4-5",
        ),
        "openai": ProviderSettings(
            kind="openai",
            api_key=Secret(env="OPENAI_API_KEY"),
            base_url="https://api.openai.com/v1",
            model="gpt-4o",
        ),
    }


class AgenticLoopSettings(Section):
    """``[core.agentic_loop]``."""

    max_tool_iterations: int = Field(default=10, ge=1)
    compaction_threshold_pct: int = Field(default=80, ge=1, le=100)
    compaction_target_pct: int = Field(default=40, ge=1, le=100)
    stream_chunk_size: int = Field(default=80, ge=1)


class CoreSettings(Section):
    """``[core]``: providers, agents, sessions and the agentic loop."""

    default_provider: str = "openrouter"
    default_agent: str = "default"
    autonomy_level: Autonomy = Autonomy.SUPERVISED
    session_ttl_seconds: int = Field(default=3600, ge=0)
    session_sharing: Literal["shared", "per_channel"] = "shared"
    providers: dict[str, ProviderSettings] = Field(default_factory=_default_providers)
    agentic_loop: AgenticLoopSettings = Field(default_factory=AgenticLoopSettings)


def describe_llm_provider(core: CoreSettings) -> tuple[bool, str]:
    """One line saying which LLM provider BeamClaw will use, or how to configure one.

    Returns ``(usable, line)``; ``usable`` is False when no provider can be called yet.
    """
    name = core.default_provider
    provider = core.providers.get(name)
    if provider is None:
        known = ", ".join(sorted(core.providers)) or "none"
        return False, (
            f"LLM provider: default_provider {name!r} is not configured (configured: {known}); "
            f"add [core.providers.{name}] to beamclaw.toml"
        )
    where = f"{provider.kind} wire, model {provider.model} at {provider.base_url}"
    if provider.api_key is None:
        return True, f"LLM provider: {name} ({where}, no API key)"
    if provider.api_key.is_available():
        return True, f"LLM provider: {name} ({where}, key from {provider.api_key.describe()})"
    variable = provider.api_key.env or "the api_key"
    return False, (
        f"LLM provider: {name} ({where}) - {variable} is not set: export {variable}=... "
        f"or choose another provider with [core] default_provider / [core.providers.<name>] "
        f"in $BEAMCLAW_HOME/beamclaw.toml"
    )
