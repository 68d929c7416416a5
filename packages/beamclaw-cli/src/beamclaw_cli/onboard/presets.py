"""The provider presets ``beamclaw onboard`` offers, among the kinds core supports.

Each preset names the ``[core.providers.<name>]`` table it writes, its wire ``kind``, a
default ``base_url`` and model, and the variable its key is conventionally exported as.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    """One choice of ``beamclaw onboard --provider``."""

    name: str
    """Also the ``[core.providers.<name>]`` table written."""
    label: str
    kind: str
    """``openai`` (OpenAI-compatible wire) or ``anthropic``."""
    base_url: str | None
    """None: the user must give one (``--base-url``)."""
    model: str
    key_env: str | None
    """The conventional variable of the key, when the provider needs one."""
    needs_key: bool


PRESETS: tuple[ProviderPreset, ...] = (
    ProviderPreset(
        "openrouter",
        "OpenRouter (many models, one key)",
        "openai",
        "https://openrouter.ai/api/v1",
        "anthropic/claude-sonnet-4-5",
        "OPENROUTER_API_KEY",
        needs_key=True,
    ),
    ProviderPreset(
        "openai",
        "OpenAI",
        "openai",
        "https://api.openai.com/v1",
        "gpt-4o",
        "OPENAI_API_KEY",
        needs_key=True,
    ),
    ProviderPreset(
        "anthropic",
        "Anthropic",
        "anthropic",
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
        needs_key=True,
    ),
    ProviderPreset(
        "local",
        "a local OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)",
        "openai",
        "http://127.0.0.1:11434/v1",
        "llama3.1",
        None,
        needs_key=False,
    ),
    ProviderPreset(
        "custom",
        "another OpenAI-compatible URL",
        "openai",
        None,
        "gpt-4o-mini",
        None,
        needs_key=False,
    ),
)
"""In the order the interactive menu lists them; OpenRouter first (the default)."""


def preset(name: str) -> ProviderPreset | None:
    """The preset called ``name``, or None."""
    return next((p for p in PRESETS if p.name == name), None)


def preset_names() -> tuple[str, ...]:
    return tuple(p.name for p in PRESETS)
