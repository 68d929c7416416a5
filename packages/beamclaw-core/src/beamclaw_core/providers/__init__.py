"""LLM providers."""

from beamclaw_core.providers.settings import ProviderSettings

__all__ = ["ProviderSettings"]
