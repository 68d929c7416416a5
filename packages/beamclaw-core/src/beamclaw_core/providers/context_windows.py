"""Context-window sizes per model family, with a configurable override.

Lookup order: the provider's ``context_window`` setting, then the first family pattern
(``fnmatch``, case-insensitive) matching the model name with any ``vendor/`` prefix
removed (OpenRouter writes ``anthropic/claude-sonnet-4-5``), then
:data:`DEFAULT_CONTEXT_WINDOW`. The table errs low where a family has several sizes.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache

DEFAULT_CONTEXT_WINDOW = 128_000

#: (pattern, context window tokens, max output tokens). First match wins.
MODEL_FAMILIES: tuple[tuple[str, int, int | None], ...] = (
    ("claude-3-5-haiku*", 200_000, 8_192),
    ("claude-3*", 200_000, 4_096),
    ("claude-opus-4*", 200_000, 32_000),
    ("claude-sonnet-4*", 200_000, 64_000),
    ("claude-haiku-4*", 200_000, 64_000),
    ("claude-*", 200_000, 8_192),
    ("gpt-4.1*", 1_047_576, 32_768),
    ("gpt-4o*", 128_000, 16_384),
    ("gpt-4-turbo*", 128_000, 4_096),
    ("gpt-4", 8_192, 4_096),
    ("gpt-3.5-turbo*", 16_385, 4_096),
    ("gpt-5*", 400_000, 128_000),
    ("o1*", 200_000, 100_000),
    ("o3*", 200_000, 100_000),
    ("o4*", 200_000, 100_000),
    ("gemini-*", 1_048_576, 8_192),
    ("deepseek*", 64_000, 8_192),
    ("mistral-large*", 128_000, None),
    ("mistral*", 32_000, None),
    ("llama-3*", 128_000, None),
    ("llama3*", 8_192, None),
    ("qwen*", 32_768, None),
    ("gemma*", 8_192, None),
)


def family_key(model: str) -> str:
    """The model name without a ``vendor/`` prefix, lower-cased."""
    return model.rsplit("/", 1)[-1].lower()


@lru_cache(maxsize=1024)
def lookup_model(model: str) -> tuple[int, int | None] | None:
    """``(context_window, max_output_tokens)`` of the first matching family, or None
    (remembered per name: the table is fixed and every turn asks)."""
    key = family_key(model)
    for pattern, window, output in MODEL_FAMILIES:
        if fnmatchcase(key, pattern):
            return window, output
    return None


def context_window_for(model: str, override: int | None = None) -> int:
    """The context window to assume for ``model`` (``override`` wins when set)."""
    if override is not None:
        return override
    found = lookup_model(model)
    return found[0] if found else DEFAULT_CONTEXT_WINDOW


def max_output_for(model: str, override: int | None = None) -> int | None:
    """The maximum output tokens for ``model`` when known (``override`` wins)."""
    if override is not None:
        return override
    found = lookup_model(model)
    return found[1] if found else None
