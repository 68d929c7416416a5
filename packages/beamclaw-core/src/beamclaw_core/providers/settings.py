"""Provider configuration: ``[core.providers.<name>]``."""

from __future__ import annotations

from typing import Literal

from beamclaw_obs import Secret, Section


class ProviderSettings(Section):
    """One LLM provider endpoint."""

    kind: Literal["openai", "anthropic"] = "openai"
    """Wire protocol: ``openai`` (OpenAI-compatible) or ``anthropic`` (Messages API)."""
    api_key: Secret | None = None
    """``{ env = "VAR" }``; optional for local servers (Ollama, llama.cpp, vLLM)."""
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o"
