"""A fake LLM HTTP server on 127.0.0.1 (aiohttp.web on a free port, real HTTP).

Subclasses render the wire format (:mod:`beamclaw_core.testing.fake_openai`,
:mod:`beamclaw_core.testing.fake_anthropic`); this base serves, records every request
exactly (method, path, headers, raw bytes, decoded JSON), plays the script and injects
faults. Use it as an async context manager::

    async with FakeOpenAIServer([FakeReply("hi")]) as server:
        settings = ProviderSettings(base_url=server.base_url, model="m")
        ...
        assert server.requests[0].body["messages"][0]["content"] == "hello"

When the script runs out the server answers 500 with "fake server script exhausted"
(or repeats the last step with ``repeat_last=True``). Stopping releases hanging handlers.
"""

from __future__ import annotations

import asyncio
import json
import socket
from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from aiohttp import web

from beamclaw_core.testing.fake_steps import (
    FakeReply,
    FakeStep,
    FakeStepFn,
    Hang,
    HttpFault,
    InvalidJSON,
    RawBody,
    RecordedRequest,
    StreamError,
    Truncate,
)

HOST = "127.0.0.1"


class FakeLLMServer(ABC):
    """Serve scripted LLM responses over real HTTP on loopback."""

    #: request path the API is served on
    path: str = "/"

    def __init__(
        self,
        script: Sequence[FakeStep | FakeStepFn] = (),
        *,
        repeat_last: bool = False,
        default_model: str = "fake-model",
        keep_requests: int | None = None,
    ) -> None:
        self._script: list[FakeStep | FakeStepFn] = list(script)
        self._repeat_last = repeat_last
        self.default_model = default_model
        self.keep_requests = keep_requests
        """Record only the last N requests (None = all). Benchmarks keep none: a server
        holding thousands of request bodies spends tens of ms in garbage collection."""
        self.requests: list[RecordedRequest] = []
        self.served = 0
        """Requests answered so far (recorded or not)."""
        self.events_sent = 0
        self._runner: web.AppRunner | None = None
        self._stopping = asyncio.Event()
        self._port = 0

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def root_url(self) -> str:
        return f"http://{HOST}:{self._port}"

    @property
    @abstractmethod
    def base_url(self) -> str:
        """The ``base_url`` a provider should be configured with."""

    async def start(self) -> FakeLLMServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("POST", self.path, self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        sock.listen(512)
        sock.setblocking(False)
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeLLMServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- scripting ---------------------------------------------------------------------

    def add(self, *steps: FakeStep | FakeStepFn) -> None:
        self._script.extend(steps)

    @property
    def bodies(self) -> list[Any]:
        """The decoded JSON body of every request, in order."""
        return [r.body for r in self.requests]

    def _next_step(self, request: RecordedRequest) -> FakeStep:
        index = self.served - 1
        if index < len(self._script):
            step = self._script[index]
        elif self._repeat_last and self._script:
            step = self._script[-1]
        else:
            return HttpFault.server_error(500, "fake server script exhausted")
        if callable(step):
            return step(request)
        return step

    # -- wire rendering (subclasses) ---------------------------------------------------

    @abstractmethod
    def render_json(self, reply: FakeReply, model: str) -> dict[str, Any]:
        """The whole-response JSON body for ``reply``."""

    @abstractmethod
    def render_events(self, reply: FakeReply, model: str, request: Any) -> list[bytes]:
        """The SSE frames for ``reply``; the last one ends the stream."""

    @abstractmethod
    def render_error_event(self, error: dict[str, Any]) -> bytes:
        """An in-band stream error frame."""

    # -- serving -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        recorded = RecordedRequest(request.method, request.path, headers, raw, body)
        self.served += 1
        self.requests.append(recorded)
        if self.keep_requests is not None and len(self.requests) > self.keep_requests:
            del self.requests[: len(self.requests) - self.keep_requests]
        step = self._next_step(recorded)
        wants_stream = isinstance(body, dict) and bool(body.get("stream"))
        model = body.get("model") if isinstance(body, dict) else None
        model = model if isinstance(model, str) else self.default_model
        if isinstance(step, Hang):
            await self._stopping.wait()
            return web.Response(status=503, text="stopping")
        if isinstance(step, HttpFault):
            text = step.body if isinstance(step.body, str) else json.dumps(step.body or {})
            return web.Response(
                status=step.status, text=text, headers=step.headers, content_type="application/json"
            )
        if isinstance(step, RawBody):
            return web.Response(
                status=step.status,
                body=step.body,
                content_type=step.content_type,
                headers=step.headers,
            )
        if isinstance(step, InvalidJSON):
            if wants_stream:
                return await self._stream(request, [f"data: {step.body}\n\n".encode()], None)
            return web.Response(status=200, text=step.body, content_type="application/json")
        if isinstance(step, Truncate):
            frames = self.render_events(step.reply, step.reply.model or model, body)
            if not wants_stream:
                return await self._truncated_json(request, step, model)
            return await self._stream(request, frames[: step.after_events], step.reply, cut=True)
        if isinstance(step, StreamError):
            frames = self.render_events(step.reply, step.reply.model or model, body)
            frames = [*frames[: step.after_events], self.render_error_event(step.error)]
            return await self._stream(request, frames, step.reply)
        reply_model = step.model or model
        if wants_stream:
            return await self._stream(request, self.render_events(step, reply_model, body), step)
        if step.delay:
            await asyncio.sleep(step.delay)
        return web.json_response(self.render_json(step, reply_model))

    async def _truncated_json(
        self, request: web.Request, step: Truncate, model: str
    ) -> web.StreamResponse:
        data = json.dumps(self.render_json(step.reply, model)).encode()
        resp = web.StreamResponse(
            status=200,
            headers={"Content-Type": "application/json", "Content-Length": str(len(data))},
        )
        await resp.prepare(request)
        await resp.write(data[: len(data) // 2])
        self._cut(request)
        return resp

    async def _stream(
        self,
        request: web.Request,
        frames: list[bytes],
        reply: FakeReply | None,
        *,
        cut: bool = False,
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        delay = reply.delay if reply else 0.0
        hold = reply.hold if reply else None
        gate = reply.gate if reply else None
        for i, frame in enumerate(frames):
            if gate is not None and i:
                await gate(i)
            if hold is not None and i == len(frames) - 2:
                await hold.wait()
            if delay and i:
                await asyncio.sleep(delay)
            await resp.write(frame)
            self.events_sent += 1
        if cut:
            self._cut(request)
            return resp
        await resp.write_eof()
        return resp

    @staticmethod
    def _cut(request: web.Request) -> None:
        transport = request.transport
        if transport is not None:
            transport.abort()
