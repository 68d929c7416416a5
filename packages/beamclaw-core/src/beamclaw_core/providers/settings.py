"""Provider configuration: ``[core.providers.<name>]``.

Every key has a default that works against the public APIs; a local server needs only
``base_url`` and ``model``. Timeouts are seconds. Example::

    [core.providers.openrouter]
    kind = "openai"
    api_key = { env = "OPENROUTER_API_KEY" }
    base_url = "https://openrouter.ai/api/v1"
    model = "anthropic/claude-sonnet-4-5"
    fallbacks = ["anthropic", { provider = "openai", model = "gpt-4o-mini" }]
    http_referer = "https://example.org"
    x_title = "BeamClaw"
    [core.providers.openrouter.pricing."anthropic/claude-sonnet-4-5"]
    input = 3.0
    output = 15.0
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from beamclaw_core.providers.pricing import ModelPrice
from beamclaw_obs import Secret, Section

ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"
ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"
ANTHROPIC_VERSION = "2023-06-01"


class FallbackRef(BaseModel):
    """A fallback: another configured provider, optionally with a different model.

    Written as the provider name (``"openai"``) or ``{ provider = "openai", model = "…" }``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str = Field(min_length=1)
    model: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"provider": data}
        return data

    def describe(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


class ProviderSettings(Section):
    """One LLM provider endpoint."""

    kind: Literal["openai", "anthropic"] = "openai"
    """Wire protocol: ``openai`` (OpenAI-compatible) or ``anthropic`` (Messages API)."""
    api_key: Secret | None = None
    """``{ env = "VAR" }`` or ``{ file = "secrets/NAME" }`` (a 0600 key file under
    ``$BEAMCLAW_HOME``, as ``beamclaw onboard`` writes); optional for local servers
    (Ollama, llama.cpp, vLLM)."""
    base_url: str = "https://api.openai.com/v1"
    """API root; ``/chat/completions`` (openai) or ``/messages`` (anthropic) is appended.
    Defaults to Anthropic's when ``kind = "anthropic"`` and unset."""
    model: str = "gpt-4o"

    # -- failover ----------------------------------------------------------------------
    fallbacks: list[FallbackRef] = Field(default_factory=list)
    """Tried in order when this provider fails with a failover-worthy error."""
    failure_threshold: int = Field(default=2, ge=1)
    """Consecutive failures after which the provider cools down (skipped by failover)."""
    cooldown_seconds: float = Field(default=60.0, ge=0)

    # -- model facts -------------------------------------------------------------------
    context_window: int | None = Field(default=None, ge=1)
    """Overrides the per-family context-window table."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Default ``max_tokens``; Anthropic requires one (table value or 8192 otherwise)."""
    supports_vision: bool | None = None
    """Whether requests carry images (false: a short note in each image's place); None
    guesses from the model name."""
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    """USD per million tokens by model name or pattern; overrides the built-in table."""

    # -- HTTP client -------------------------------------------------------------------
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=120.0, gt=0)
    """Longest wait for response bytes (non-streaming: time to the whole answer's start)."""
    write_timeout: float = Field(default=30.0, gt=0)
    pool_timeout: float = Field(default=10.0, gt=0)
    """Longest wait for a free pooled connection."""
    stream_idle_timeout: float = Field(default=60.0, gt=0)
    """A stream silent for this long is a NETWORK error."""
    total_timeout: float = Field(default=600.0, gt=0)
    """Upper bound on one whole call, streaming included."""
    max_connections: int = Field(default=100, ge=1)
    max_keepalive_connections: int = Field(default=20, ge=0)
    keepalive_expiry: float = Field(default=30.0, ge=0)
    http_transport: Literal["aiohttp", "httpx"] = "aiohttp"
    """``aiohttp`` (httpx API over aiohttp's connection pool) or httpx's own pool.
    See docs/providers.md for the measurements behind the default."""
    max_response_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    """A larger response body is refused with a clear error."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers."""
    trust_env: bool = True
    """Honour ``HTTPS_PROXY``/``NO_PROXY``/``SSL_CERT_FILE`` from the environment."""

    # -- wire options ------------------------------------------------------------------
    http_referer: str | None = None
    """OpenRouter ``HTTP-Referer`` (app attribution)."""
    x_title: str | None = None
    """OpenRouter ``X-Title``."""
    include_stream_usage: bool = True
    """Send ``stream_options.include_usage`` (openai) so streams report usage."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Merged into every request body (e.g. OpenRouter ``provider`` routing)."""
    reasoning_effort: str | None = None
    anthropic_version: str = ANTHROPIC_VERSION
    anthropic_beta: list[str] = Field(default_factory=list)
    prompt_caching: bool = True
    """Anthropic: mark the stable system prefix and tool list with ``cache_control``."""
    thinking_budget_tokens: int | None = Field(default=None, ge=1024)
    """Anthropic extended thinking budget (off when unset)."""
    strip_thinking_tags: bool = True
    """Move inline ``<think>`` blocks out of the answer text."""

    @model_validator(mode="before")
    @classmethod
    def _anthropic_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "anthropic":
            filled: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
            filled.setdefault("base_url", ANTHROPIC_BASE_URL)
            filled.setdefault("model", ANTHROPIC_DEFAULT_MODEL)
            return filled
        return data
