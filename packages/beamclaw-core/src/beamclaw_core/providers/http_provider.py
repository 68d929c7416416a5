"""Shared machinery of the HTTP providers (OpenAI-compatible and Anthropic).

:class:`HttpProvider` owns the client, resolves the API key at call time, sends requests,
reads bodies within ``max_response_bytes``, turns an SSE response into events with a
per-read idle timeout and an overall deadline, classifies every failure into a
:class:`ProviderError`, fills in usage (estimated when absent) and cost, and emits
``llm_request``/``llm_response`` events carrying metadata only (provider, model, counts,
status, duration, tokens, cost, error kind) — never bodies, never the key.

Subclasses supply the wire format: the endpoint, auth headers, the request body, a parser
for a whole response and a :class:`StreamDecoder` for streamed events.

Invariants: a stream yields text/reasoning/tool deltas as they arrive, then exactly one
``UsageChunk`` and one ``FinishChunk``; it never yields inside a timeout scope (the
timeouts wrap each read only), so a slow consumer is never cancelled by our deadline.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import orjson

from beamclaw_core.messages import Message, Usage
from beamclaw_core.parsing import strip_thinking
from beamclaw_core.providers.assembler import StreamAssembler
from beamclaw_core.providers.base import (
    Capabilities,
    Completion,
    CompletionOptions,
    ErrorKind,
    FinishChunk,
    ProviderConfigError,
    ProviderError,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UpstreamError,
    UsageChunk,
)
from beamclaw_core.providers.classify import (
    describe_body,
    kind_for_status,
    parse_retry_after,
    safe_text,
)
from beamclaw_core.providers.context_windows import context_window_for, family_key, max_output_for
from beamclaw_core.providers.http_client import UpstreamResponse, build_upstream
from beamclaw_core.providers.pricing import PriceTable
from beamclaw_core.providers.settings import ProviderSettings
from beamclaw_core.providers.sse import ServerSentEvent, SSEDecoder
from beamclaw_core.providers.tokens import estimate_usage
from beamclaw_obs import EventType, MissingSecretError, emit

_VISION_HINTS = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-5",
    "claude-3",
    "claude-sonnet",
    "claude-opus",
    "claude-haiku",
    "gemini",
    "vision",
    "llava",
    "-vl",
    "pixtral",
    "llama-4",
)


class StreamDecoder(Protocol):
    """Wire-specific interpretation of streamed events (sans-IO)."""

    done: bool
    """A terminal event arrived (``[DONE]``, ``message_stop``)."""
    finish_reason: str | None
    usage: Usage | None
    model: str | None

    def feed(self, event: ServerSentEvent) -> list[StreamChunk]:
        """Deltas carried by ``event``. Raises :class:`ProviderError` for in-band errors."""
        ...


def completion_chunks(completion: Completion) -> list[StreamChunk]:
    """A finished completion as the chunks a stream would have carried."""
    msg = completion.message
    out: list[StreamChunk] = []
    if msg.reasoning:
        out.append(
            ReasoningDelta(text=msg.reasoning, signature=msg.meta.get("reasoning_signature"))
        )
    if msg.text:
        out.append(TextDelta(text=msg.text))
    for i, call in enumerate(msg.tool_calls):
        args = call.raw_args if call.raw_args is not None else json.dumps(call.args)
        out.append(ToolCallDelta(index=i, id=call.id, name=call.name, arguments=args))
    if msg.usage is not None:
        out.append(UsageChunk(usage=msg.usage))
    out.append(FinishChunk(reason=completion.finish_reason, model=completion.model))
    return out


@dataclass
class _Ending:
    """How a streamed response ended, filled in by whichever reader consumed it."""

    reason: str = "stop"
    usage: Usage | None = None
    model: str | None = None


class HttpProvider(ABC):
    """Base of the HTTP providers. See the module docstring for the contract."""

    kind: str = "http"

    def __init__(
        self,
        name: str,
        settings: ProviderSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        _validate(name, settings)
        self._name = name
        self._settings = settings
        self._prices = prices or PriceTable.default(settings.pricing)
        self._upstream = build_upstream(settings, transport)
        self._request_headers: tuple[str | None, dict[str, str]] | None = None
        """The request headers for the current key (built once per key)."""
        self._url = settings.base_url.rstrip("/") + self.endpoint
        self._capabilities: Capabilities | None = None

    # -- Provider protocol -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def settings(self) -> ProviderSettings:
        return self._settings

    def capabilities(self) -> Capabilities:
        """Worked out from the settings once (asked on every turn)."""
        if self._capabilities is None:
            self._capabilities = self._capabilities_now()
        return self._capabilities

    def sees_images(self, model: str) -> bool:
        """Whether requests for ``model`` carry images (else a note in each image's
        place): ``supports_vision`` when set, else guessed from the model's name."""
        if self._settings.supports_vision is not None:
            return self._settings.supports_vision
        key = family_key(model)
        return any(h in key for h in _VISION_HINTS)

    def _capabilities_now(self) -> Capabilities:
        s = self._settings
        vision = self.sees_images(s.model)
        return Capabilities(
            context_window=context_window_for(s.model, s.context_window),
            max_output_tokens=max_output_for(s.model, s.max_output_tokens),
            supports_tools=True,
            supports_vision=vision,
            supports_streaming_usage=self.streams_usage,
            supports_reasoning=True,
            supports_prompt_caching=self.kind == "anthropic",
        )

    async def close(self) -> None:
        await self._upstream.aclose()

    async def complete(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> Completion:
        opts = options or CompletionOptions()
        model = opts.model or self.model
        started = self._started(messages, opts, model, stream=False)
        status: int | None = None
        try:
            key = self._api_key()
            body = self.build_body(messages, opts, model, stream=False)
            try:
                async with asyncio.timeout(self._settings.total_timeout):
                    resp = await self._send(body, key)
                    status = resp.status_code
                    try:
                        raw = await self._read_body(resp, key, model)
                    finally:
                        await resp.aclose()
            except TimeoutError as e:
                raise self._error(
                    ErrorKind.NETWORK,
                    f"no complete answer within total_timeout ({self._settings.total_timeout:g}s)",
                    model,
                ) from e
            data = self._json(raw, key, model, resp.headers.get("content-type", ""))
            parsed = self.parse_completion(data, model)
            done = self._finish(parsed, messages, opts, model)
        except ProviderError as e:
            self._finished(started, model, status=status or e.status, error=e)
            raise
        self._finished(started, model, status=status, completion=done)
        return done

    async def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        opts = options or CompletionOptions()
        model = opts.model or self.model
        started = self._started(messages, opts, model, stream=True)
        deadline = asyncio.get_running_loop().time() + self._settings.total_timeout
        seen = StreamAssembler(provider=self._name, strip_thinking_tags=False)
        ending = _Ending()
        status: int | None = None
        outcome: Completion | ProviderError | None = None
        try:
            key = self._api_key()
            resp = await self._open_stream(
                self.build_body(messages, opts, model, stream=True), key, model, deadline
            )
            status = resp.status_code
            try:
                async with aclosing(
                    self._response_chunks(resp, key, model, deadline, ending)
                ) as chunks:
                    async for chunk in chunks:
                        seen.feed(chunk)
                        yield chunk
            finally:
                await resp.aclose()
            outcome = self._assemble(seen, ending, messages, opts, model)
            yield UsageChunk(usage=outcome.message.usage or Usage())
            yield FinishChunk(reason=outcome.finish_reason, model=outcome.model)
        except ProviderError as e:
            outcome = e
            raise
        finally:
            if isinstance(outcome, ProviderError):
                self._finished(started, model, status=status or outcome.status, error=outcome)
            else:
                self._finished(started, model, status=status, completion=outcome)

    async def _open_stream(
        self, body: dict[str, Any], key: str | None, model: str, deadline: float
    ) -> UpstreamResponse:
        """Send a stream request; its headers must come within ``stream_idle_timeout``."""
        idle = self._settings.stream_idle_timeout
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(min(loop.time() + idle, deadline)):
                return await self._send(body, key)
        except TimeoutError as e:
            raise self._error(
                ErrorKind.NETWORK,
                f"the stream stalled: no response within stream_idle_timeout ({idle:g}s)",
                model,
            ) from e

    def _response_chunks(
        self, resp: UpstreamResponse, key: str | None, model: str, deadline: float, ending: _Ending
    ) -> AsyncGenerator[StreamChunk, None]:
        """The deltas of a stream's response, SSE or (tolerated) one whole JSON answer;
        how it ended goes to ``ending``."""
        ctype = resp.headers.get("content-type", "")
        if "text/event-stream" in ctype:
            return self._sse_chunks(resp, key, model, deadline, ending)
        return self._whole_body_chunks(resp, key, model, deadline, ctype, ending)

    async def _sse_chunks(
        self, resp: UpstreamResponse, key: str | None, model: str, deadline: float, ending: _Ending
    ) -> AsyncGenerator[StreamChunk, None]:
        """Decode SSE events into deltas; a stream without its end is truncated (NETWORK)."""
        decoder = self.stream_decoder(model)
        async with aclosing(self._events(resp, deadline, key, model)) as events:
            async for event in events:
                for chunk in decoder.feed(event):
                    yield chunk
                if decoder.done:
                    break
        if not decoder.done and decoder.finish_reason is None:
            raise self._error(
                ErrorKind.NETWORK,
                "the stream ended before the response finished (truncated stream)",
                model,
            )
        ending.reason = decoder.finish_reason or "stop"
        ending.usage, ending.model = decoder.usage, decoder.model

    async def _whole_body_chunks(
        self,
        resp: UpstreamResponse,
        key: str | None,
        model: str,
        deadline: float,
        ctype: str,
        ending: _Ending,
    ) -> AsyncGenerator[StreamChunk, None]:
        """A JSON answer to a stream request, as deltas; any other body is UNKNOWN."""
        async with asyncio.timeout_at(deadline):
            raw = await self._read_body(resp, key, model)
        if "json" not in ctype:
            shown = safe_text(raw.decode(errors="replace"), key, 120)
            raise self._error(
                ErrorKind.UNKNOWN,
                "expected an SSE stream (text/event-stream) but got "
                f"{ctype or 'no content-type'}: {shown}",
                model,
            )
        parsed = self.parse_completion(self._json(raw, key, model, ctype), model)
        for chunk in completion_chunks(parsed):
            if not isinstance(chunk, UsageChunk | FinishChunk):
                yield chunk
        ending.reason, ending.usage, ending.model = (
            parsed.finish_reason,
            parsed.message.usage,
            parsed.model,
        )

    def _assemble(
        self,
        seen: StreamAssembler,
        ending: _Ending,
        messages: list[Message],
        opts: CompletionOptions,
        model: str,
    ) -> Completion:
        """The streamed reply as one completion, with usage (estimated if unreported)."""
        reply_model = ending.model or model
        seen.feed(FinishChunk(reason=ending.reason, model=reply_model))
        reply = seen.completion().message
        usage = self._usage(ending.usage, messages, reply, opts, reply_model)
        return Completion(
            message=reply.model_copy(update={"usage": usage}),
            finish_reason="tool_calls" if reply.tool_calls else ending.reason,
            model=reply_model,
            provider=self._name,
        )

    # -- wire format hooks ---------------------------------------------------------------

    endpoint: str = ""

    @property
    def streams_usage(self) -> bool:
        """Whether streams report usage (else it is estimated)."""
        return True

    @abstractmethod
    def auth_headers(self, key: str | None) -> dict[str, str]: ...

    @abstractmethod
    def build_body(
        self, messages: list[Message], options: CompletionOptions, model: str, *, stream: bool
    ) -> dict[str, Any]: ...

    @abstractmethod
    def parse_completion(self, data: Any, model: str) -> Completion: ...

    @abstractmethod
    def stream_decoder(self, model: str) -> StreamDecoder: ...

    # -- internals -----------------------------------------------------------------------

    def _error(
        self,
        kind: ErrorKind,
        message: str,
        model: str | None,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> ProviderError:
        return ProviderError(
            kind, message, provider=self._name, status=status, retry_after=retry_after, model=model
        )

    def _api_key(self) -> str | None:
        secret = self._settings.api_key
        if secret is None:
            return None
        try:
            return secret.resolve(used_for=f"provider {self._name}")
        except MissingSecretError as e:
            raise self._error(
                ErrorKind.AUTH,
                f"{e.problem} (api_key of [core.providers.{self._name}]): "
                f"{e.fix} or configure another provider",
                self.model,
            ) from e

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json", "user-agent": "beamclaw"}
        headers.update(self._settings.headers)
        headers.update(self.auth_headers(key))
        return headers

    def _headers_for(self, key: str | None) -> dict[str, str]:
        cached = self._request_headers
        if cached is None or cached[0] != key:
            cached = self._request_headers = (key, self._headers(key))
        return cached[1]

    async def _send(self, body: dict[str, Any], key: str | None) -> UpstreamResponse:
        try:
            resp = await self._upstream.post(self._url, orjson.dumps(body), self._headers_for(key))
        except UpstreamError as e:
            raise self._error(e.kind, safe_text(e.message, key), body.get("model")) from e
        if resp.status_code >= 400:
            try:
                raw = await self._read_body(resp, key, body.get("model"))
            finally:
                await resp.aclose()
            raise self._http_error(resp, raw, key, body.get("model"))
        return resp

    def _http_error(
        self, resp: UpstreamResponse, raw: bytes, key: str | None, model: Any
    ) -> ProviderError:
        etype, message = describe_body(raw.decode(errors="replace"), key)
        status = resp.status_code
        kind = kind_for_status(status, etype, message)
        hint = ""
        if kind is ErrorKind.AUTH:
            where = self._settings.api_key.describe() if self._settings.api_key else None
            hint = (
                f" (key from {where}; check it is valid for {self._settings.base_url})"
                if where
                else f" (no api_key configured for [core.providers.{self._name}])"
            )
        retry = parse_retry_after(dict(resp.headers)) if kind is ErrorKind.RATE_LIMIT else None
        return self._error(
            kind,
            f"HTTP {status}: {message}{hint}",
            model if isinstance(model, str) else None,
            status=status,
            retry_after=retry,
        )

    async def _read_body(self, resp: UpstreamResponse, key: str | None, model: Any) -> bytes:
        limit = self._settings.max_response_bytes
        parts: list[bytes] = []
        size = 0
        try:
            async for part in resp.aiter_bytes():
                size += len(part)
                if size > limit:
                    raise self._error(
                        ErrorKind.UNKNOWN,
                        f"response larger than max_response_bytes ({limit} bytes); raise it in "
                        f"[core.providers.{self._name}] if this is expected",
                        model if isinstance(model, str) else None,
                        status=resp.status_code,
                    )
                parts.append(part)
        except UpstreamError as e:
            raise self._error(
                e.kind, safe_text(e.message, key), model if isinstance(model, str) else None
            ) from e
        return b"".join(parts)

    def _json(self, raw: bytes, key: str | None, model: str, ctype: str) -> Any:
        try:
            return orjson.loads(raw)
        except ValueError as e:
            raise self._error(
                ErrorKind.UNKNOWN,
                f"the provider returned a non-JSON body ({ctype or 'no content-type'}): "
                f"{safe_text(raw.decode(errors='replace'), key, 120)}",
                model,
            ) from e

    async def _events(
        self, resp: UpstreamResponse, deadline: float, key: str | None, model: str
    ) -> AsyncGenerator[ServerSentEvent, None]:
        loop = asyncio.get_running_loop()
        idle = self._settings.stream_idle_timeout
        limit = self._settings.max_response_bytes
        decoder = SSEDecoder()
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        raw_iter = resp.aiter_bytes().__aiter__()
        buffer = ""
        size = 0
        while True:
            try:
                async with asyncio.timeout_at(min(loop.time() + idle, deadline)):
                    part = await anext(raw_iter)
            except StopAsyncIteration:
                break
            except TimeoutError as e:
                what = (
                    "total_timeout"
                    if loop.time() >= deadline
                    else f"stream_idle_timeout ({idle:g}s)"
                )
                raise self._error(
                    ErrorKind.NETWORK, f"the stream stalled: {what} exceeded", model
                ) from e
            except UpstreamError as e:
                raise self._error(e.kind, safe_text(e.message, key), model) from e
            size += len(part)
            if size > limit:
                raise self._error(
                    ErrorKind.UNKNOWN,
                    f"stream larger than max_response_bytes ({limit} bytes)",
                    model,
                )
            buffer += text.decode(part)
            lines = buffer.splitlines(keepends=True)
            buffer = lines.pop() if lines and not lines[-1].endswith(("\n", "\r")) else ""
            for line in lines:
                event = decoder.feed(line.rstrip("\r\n"))
                if event is not None:
                    yield event
        buffer += text.decode(b"", final=True)
        if buffer:
            event = decoder.feed(buffer.rstrip("\r\n"))
            if event is not None:
                yield event
        event = decoder.flush()
        if event is not None:
            yield event

    def _usage(
        self,
        usage: Usage | None,
        messages: list[Message],
        reply: Message,
        opts: CompletionOptions,
        model: str,
    ) -> Usage:
        if usage is None:
            usage = estimate_usage(messages, reply, opts.tools)
        return self._prices.apply(model, usage)

    def _finish(
        self, parsed: Completion, messages: list[Message], opts: CompletionOptions, model: str
    ) -> Completion:
        msg = parsed.message
        reply_model = parsed.model or model
        usage = self._usage(msg.usage, messages, msg, opts, reply_model)
        if self._settings.strip_thinking_tags and msg.text:
            stripped = strip_thinking(msg.text)
            if stripped.text != msg.text:
                extra = None if stripped.fallback_used else stripped.reasoning
                reasoning = "\n\n".join(r for r in (msg.reasoning, extra) if r) or None
                msg = msg.model_copy(update={"content": stripped.text, "reasoning": reasoning})
        reason = "tool_calls" if msg.tool_calls else parsed.finish_reason
        return Completion(
            message=msg.model_copy(update={"usage": usage, "model": reply_model}),
            finish_reason=reason,
            model=reply_model,
            provider=self._name,
        )

    def _started(
        self, messages: list[Message], opts: CompletionOptions, model: str, *, stream: bool
    ) -> float:
        emit(
            EventType.LLM_REQUEST,
            provider=self._name,
            kind=self.kind,
            model=model,
            stream=stream,
            messages=len(messages),
            tools=len(opts.tools),
            session_id=opts.session_id,
        )
        return time.monotonic()

    def _finished(
        self,
        started: float,
        model: str,
        *,
        status: int | None,
        completion: Completion | None = None,
        error: ProviderError | None = None,
    ) -> None:
        data: dict[str, Any] = {
            "provider": self._name,
            "kind": self.kind,
            "model": model,
            "status": status,
            "duration_ms": round((time.monotonic() - started) * 1000, 1),
            "success": completion is not None,
        }
        if completion is not None:
            usage = completion.message.usage or Usage()
            data.update(
                answered_by=completion.model,
                finish_reason=completion.finish_reason,
                tool_calls=len(completion.message.tool_calls),
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                total_tokens=usage.total_tokens,
                cached_tokens=usage.cached_tokens,
                cost_usd=usage.cost_usd,
                usage_estimated=usage.estimated,
            )
        elif error is not None:
            data.update(error_kind=error.kind.value, retry_after=error.retry_after)
        else:
            data.update(finish_reason="abandoned")
        emit(EventType.LLM_RESPONSE, **data)


def _validate(name: str, settings: ProviderSettings) -> None:
    if not settings.model.strip():
        raise ProviderConfigError(name, "model", "is empty; set the model name to call")
    url = settings.base_url.strip()
    if not url:
        raise ProviderConfigError(name, "base_url", "is empty; set the API root URL")
    if not url.startswith(("http://", "https://")):
        raise ProviderConfigError(
            name, "base_url", f"must start with http:// or https:// (got {url!r})"
        )
