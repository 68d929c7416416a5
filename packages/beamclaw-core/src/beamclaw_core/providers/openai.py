"""The OpenAI-compatible provider (``kind = "openai"``).

Speaks Chat Completions to OpenAI, OpenRouter, Ollama, vLLM, llama.cpp server, LM Studio,
Groq and anything else compatible: ``POST {base_url}/chat/completions`` with a
``Bearer`` key (omitted when no key is configured, for local servers). Streams request
``stream_options.include_usage`` unless disabled. OpenRouter's ``HTTP-Referer`` and
``X-Title`` headers are sent when configured.
"""

from __future__ import annotations

from typing import Any

from beamclaw_core.messages import Message
from beamclaw_core.parsing import make_id_factory
from beamclaw_core.providers.base import Completion, CompletionOptions
from beamclaw_core.providers.http_provider import HttpProvider, StreamDecoder
from beamclaw_core.providers.openai_wire import (
    OpenAIStreamDecoder,
    encoded_openai_tools,
    openai_request_messages,
    parse_openai_completion,
    tool_choice,
)


class OpenAIProvider(HttpProvider):
    """Chat Completions over HTTP. See the module docstring."""

    kind = "openai"
    endpoint = "/chat/completions"

    @property
    def streams_usage(self) -> bool:
        return self.settings.include_stream_usage

    def auth_headers(self, key: str | None) -> dict[str, str]:
        headers: dict[str, str] = {}
        if key:
            headers["authorization"] = f"Bearer {key}"
        if self.settings.http_referer:
            headers["HTTP-Referer"] = self.settings.http_referer
        if self.settings.x_title:
            headers["X-Title"] = self.settings.x_title
        return headers

    def build_body(
        self, messages: list[Message], options: CompletionOptions, model: str, *, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": openai_request_messages(vision=self.sees_images(model)).array(messages),
            "stream": stream,
        }
        if stream and self.settings.include_stream_usage:
            body["stream_options"] = {"include_usage": True}
        if options.tools:
            body["tools"] = encoded_openai_tools(options.tools)
            if options.tool_choice is not None:
                body["tool_choice"] = tool_choice(options.tool_choice)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        max_tokens = options.max_tokens or self.settings.max_output_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if options.stop:
            body["stop"] = list(options.stop)
        effort = options.reasoning_effort or self.settings.reasoning_effort
        if effort:
            body["reasoning_effort"] = effort
        body.update(self.settings.extra_body)
        body.update(options.extra)
        return body

    def parse_completion(self, data: Any, model: str) -> Completion:
        return parse_openai_completion(
            data,
            provider=self.name,
            model=model,
            id_factory=make_id_factory(model),
            secret=None,
        )

    def stream_decoder(self, model: str) -> StreamDecoder:
        return OpenAIStreamDecoder(provider=self.name, model=model)
