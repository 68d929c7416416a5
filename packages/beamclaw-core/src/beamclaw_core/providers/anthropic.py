"""The Anthropic Messages provider (``kind = "anthropic"``).

``POST {base_url}/messages`` with ``x-api-key`` and ``anthropic-version`` (and
``anthropic-beta`` when configured). ``max_tokens`` is always sent (the API requires it):
the call's value, else ``max_output_tokens``, else 8192 (or the family's maximum if lower).
Extended thinking is enabled with ``thinking_budget_tokens``. See
:mod:`beamclaw_core.providers.anthropic_wire` for the mapping and prompt caching.
"""

from __future__ import annotations

from typing import Any

from beamclaw_core.messages import Message
from beamclaw_core.parsing import make_id_factory
from beamclaw_core.providers.anthropic_fold import anthropic_request_fold
from beamclaw_core.providers.anthropic_wire import (
    AnthropicStreamDecoder,
    parse_anthropic_completion,
    to_anthropic_tools,
    tool_choice,
)
from beamclaw_core.providers.base import Completion, CompletionOptions
from beamclaw_core.providers.context_windows import max_output_for
from beamclaw_core.providers.http_provider import HttpProvider, StreamDecoder

DEFAULT_MAX_TOKENS = 8192


class AnthropicProvider(HttpProvider):
    """The Messages API over HTTP. See the module docstring."""

    kind = "anthropic"
    endpoint = "/messages"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": self.settings.anthropic_version}
        if key:
            headers["x-api-key"] = key
        if self.settings.anthropic_beta:
            headers["anthropic-beta"] = ",".join(self.settings.anthropic_beta)
        return headers

    def build_body(
        self, messages: list[Message], options: CompletionOptions, model: str, *, stream: bool
    ) -> dict[str, Any]:
        cache = self.settings.prompt_caching
        family_max = max_output_for(model) or DEFAULT_MAX_TOKENS
        max_tokens = (
            options.max_tokens
            or self.settings.max_output_tokens
            or min(DEFAULT_MAX_TOKENS, family_max)
        )
        fold = anthropic_request_fold(vision=self.sees_images(model))
        array, system = fold.request(messages, cache=cache)
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": array,
            "stream": stream,
        }
        if system:
            body["system"] = system
        if options.tools:
            body["tools"] = to_anthropic_tools(options.tools, cache=cache)
            if options.tool_choice is not None:
                body["tool_choice"] = tool_choice(options.tool_choice)
        budget = options.thinking_budget_tokens or self.settings.thinking_budget_tokens
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max(max_tokens, budget + 1024)
        elif options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stop:
            body["stop_sequences"] = list(options.stop)
        body.update(self.settings.extra_body)
        body.update(options.extra)
        return body

    def parse_completion(self, data: Any, model: str) -> Completion:
        return parse_anthropic_completion(
            data, provider=self.name, model=model, id_factory=make_id_factory(model)
        )

    def stream_decoder(self, model: str) -> StreamDecoder:
        return AnthropicStreamDecoder(provider=self.name, model=model)
